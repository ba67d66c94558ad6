"""The GPT-2 test family's fixtures: a folder of random weights written by transformers, the
model loaded from it by the family, and the family registered for a test module's length (the
registry restored after, so that no other test sees it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from attention_core.models import FAMILIES, register
from tests.families.gpt2 import GPT2
from tests.families.gpt2.build import reference, write_gpt2_folder
from tests.families.gpt2.model import GPT2Model

SENTENCE = "The dirty quantum plumbing of the river bank, and the old dog sat on it."


@pytest.fixture(scope="session")
def gpt2_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gpt2_folder(tmp_path_factory.mktemp("families") / "gpt2-random", seed=0)


@pytest.fixture(scope="session")
def gpt2_model(gpt2_folder: Path) -> GPT2Model:
    return GPT2.load(str(gpt2_folder))


@pytest.fixture(scope="session")
def hf_gpt2(gpt2_folder: Path):  # transformers' GPT2LMHeadModel on the same weights
    return reference(gpt2_folder)


@pytest.fixture(scope="module")
def registered() -> Iterator[None]:
    """``register(GPT2)``, the one registry line a fourth family needs; FAMILIES restored after."""
    saved = dict(FAMILIES)
    register(GPT2)
    yield
    FAMILIES.clear()
    FAMILIES.update(saved)
