"""Shared fixtures. Tests never touch the network: the hub is switched off before any import."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest

from attention_core import Model, load_model


@pytest.fixture(scope="session")
def model() -> Model:
    """The packaged all-MiniLM-L6-v2, loaded once per test session."""
    return load_model()
