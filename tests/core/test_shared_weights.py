"""The machine's shared weight cache (attention_core.models.shared_weights): the mapped weights
are the in-memory ones bit for bit and read-only; a changed source is never read stale; a
folder that cannot be written, or a damaged cache file, falls back to building."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

from attention_core.models.bert.model import load_bert
from attention_core.models.llama.model import load_llama
from attention_core.models.shared_weights import ENV, cache_key, shared_arrays
from attention_core.models.whisper.model import load_whisper


def _build() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"a": rng.standard_normal((3, 5), np.float32), "b/c": np.arange(7, dtype=np.float32)}


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "model.bin"
    path.write_bytes(b"header" * 100)
    return path


def test_mapped_arrays_equal_built_and_read_only(tmp_path, source, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "cache"))
    first = shared_arrays(source, "t1", _build)  # builds, writes, maps
    again = shared_arrays(source, "t1", lambda: pytest.fail("built again"))  # maps only
    for name, want in _build().items():
        assert np.array_equal(first[name], want) and np.array_equal(again[name], want)
        assert not again[name].flags.writeable
        with pytest.raises(ValueError):
            again[name][...] = 0


def test_two_builders_at_once_map_the_first_file(tmp_path, source, monkeypatch):
    from attention_core.models import shared_weights

    monkeypatch.setenv(ENV, str(tmp_path / "cache"))
    first = shared_arrays(source, "t1", _build)
    (path,) = (tmp_path / "cache").iterdir()
    inode = path.stat().st_ino
    other = {k: v + 1 for k, v in _build().items()}  # a late builder's file never replaces it
    shared_weights._write(path, other)
    assert path.stat().st_ino == inode and [p.name for p in path.parent.iterdir()] == [path.name]
    assert np.array_equal(shared_arrays(source, "t1", _build)["a"], first["a"])


def test_the_folder_from_the_environment(tmp_path, monkeypatch):
    from attention_core.models.shared_weights import cache_folder

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(ENV, "on")
    assert cache_folder() == tmp_path / "attention-visualizer" / "weights"
    monkeypatch.setenv(ENV, "off")
    assert cache_folder() is None
    monkeypatch.setenv(ENV, str(tmp_path / "mine"))
    assert cache_folder() == tmp_path / "mine"


def test_changed_source_or_tag_is_a_new_key(source):
    key = cache_key(source, "t1")
    assert cache_key(source, "t2") != key
    os.utime(source, ns=(0, 123))
    assert cache_key(source, "t1") != key


def test_unwritable_folder_builds_in_memory(source, monkeypatch, caplog):
    monkeypatch.setenv(ENV, "/dev/null/cache")  # not a folder: mkdir fails, as on a read-only disk
    with caplog.at_level(logging.WARNING):
        arrays = shared_arrays(source, "t1", _build)
    assert np.array_equal(arrays["a"], _build()["a"]) and not arrays["a"].flags.writeable
    assert len(caplog.records) == 1


def test_damaged_cache_file_is_built_again(tmp_path, source, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "cache"))
    shared_arrays(source, "t1", _build)
    (path,) = (tmp_path / "cache").iterdir()
    path.write_bytes(path.read_bytes()[:100])  # truncated
    arrays = shared_arrays(source, "t1", _build)
    assert np.array_equal(arrays["b/c"], _build()["b/c"])


LOADERS = {"minilm": load_bert, "smollm2": load_llama, "whisper": load_whisper}


@pytest.mark.parametrize("key", list(LOADERS))
def test_real_models_cached_equal_uncached(tmp_path, monkeypatch, key):
    load = LOADERS[key]
    monkeypatch.setenv(ENV, "off")
    plain = load(key).params
    monkeypatch.setenv(ENV, str(tmp_path / "cache"))
    load(key)  # writes the cache file
    mapped = load(key).params  # maps it
    assert any((tmp_path / "cache").iterdir())
    want, got = _leaves(plain), _leaves(mapped)
    assert len(want) == len(got)
    for a, b in zip(want, got, strict=True):
        assert a.dtype == b.dtype == np.float32 and np.array_equal(a, b)
        assert not b.flags.writeable or b.base is None  # mapped arrays are read-only


def _leaves(obj: object) -> list[np.ndarray]:
    from dataclasses import fields, is_dataclass

    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, tuple):
        return [x for item in obj for x in _leaves(item)]
    if is_dataclass(obj):
        return [x for f in fields(obj) for x in _leaves(getattr(obj, f.name))]
    return []
