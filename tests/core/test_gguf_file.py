"""Our GGUF reader against llama.cpp's own (the `gguf` package): the same metadata, the same
tensor table, and every kind of tensor in SmolLM2's file dequantized to the same float32 numbers.

The engine reads the file itself because `gguf.GGUFReader` took ~2 s to open it and ~3.5 s to
dequantize every tensor here (the load target is 3 s); this test is what lets it.
"""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.models.llama.gguf_file import GgufFile
from attention_core.models.llama.model import smollm2_path

gguf = pytest.importorskip("gguf")  # a dev requirement (requirements-dev.txt)


@pytest.fixture(scope="module")
def both():
    path = smollm2_path()
    return GgufFile(path), gguf.GGUFReader(str(path))


def test_metadata_and_tensor_table_equal_llama_cpps_reader(both):
    ours, theirs = both
    for key in (
        "general.architecture",
        "llama.block_count",
        "llama.embedding_length",
        "llama.attention.head_count",
        "llama.attention.head_count_kv",
        "llama.rope.freq_base",
        "llama.attention.layer_norm_rms_epsilon",
    ):
        field = theirs.fields[key]
        want = field.contents() if hasattr(field, "contents") else field.parts[-1][0]
        got = ours.metadata[key]
        assert got == pytest.approx(want) if isinstance(want, float) else got == want, key
    table = {t.name: t for t in theirs.tensors}
    assert set(ours.tensors) == set(table)
    for name, info in ours.tensors.items():
        assert tuple(info.shape) == tuple(reversed([int(d) for d in table[name].shape])), name
        assert info.ggml_type == int(table[name].tensor_type), name


def test_every_kind_of_tensor_dequantizes_exactly_as_llama_cpp_does(both):
    ours, theirs = both
    by_type: dict[int, str] = {}
    for t in theirs.tensors:  # the first tensor of each storage type (Q4_1, Q8_0, F32, ...)
        by_type.setdefault(int(t.tensor_type), t.name)
    assert len(by_type) >= 2, by_type
    table = {t.name: t for t in theirs.tensors}
    for ggml_type, name in by_type.items():
        t = table[name]
        want = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        got = ours.read(name)
        assert got.shape == want.reshape(got.shape).shape, name
        np.testing.assert_array_equal(got, want.reshape(got.shape), err_msg=f"{name} {ggml_type}")
