"""Loading the model (time and every error) and the ``python -m attention_core trace`` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from attention_core import ModelLoadError, load_model

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "The river bank was muddy"


def _copy_model(src: Path, dst: Path, skip: tuple[str, ...] = ()) -> Path:
    """A copy of the model folder made of symlinks, leaving out the names in ``skip``."""
    dst.mkdir()
    for item in src.iterdir():
        if item.name not in skip:
            (dst / item.name).symlink_to(item, target_is_directory=item.is_dir())
    return dst


def test_load_is_quick_and_complete(model):
    start = time.perf_counter()
    again = load_model()
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0, f"load_model took {elapsed:.2f} s"  # ~0.3 s on an idle machine
    cfg = again.config
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.d_head, cfg.d_ff) == (6, 12, 384, 32, 1536)
    assert (cfg.n_positions, cfg.pooling, cfg.normalize, cfg.max_seq_length) == (
        512,
        "mean",
        True,
        256,
    )
    assert all(w.dtype == np.float32 for w in again.weights.values())


def test_symlinked_copy_loads(model, tmp_path):
    copy = load_model(_copy_model(model.path, tmp_path / "copy"))
    assert copy.config.name.endswith("copy")
    np.testing.assert_array_equal(
        copy.weights["embeddings.word_embeddings.weight"],
        model.weights["embeddings.word_embeddings.weight"],
    )


def test_missing_folder_names_the_path():
    with pytest.raises(ModelLoadError, match="/nonexistent"):
        load_model("/nonexistent")


def test_truncated_weights_say_truncated(model, tmp_path):
    folder = _copy_model(model.path, tmp_path / "cut", skip=("model.safetensors",))
    with open(model.path / "model.safetensors", "rb") as src:
        (folder / "model.safetensors").write_bytes(src.read(1 << 20))
    with pytest.raises(ModelLoadError, match="truncated"):
        load_model(folder)


def test_missing_weights_tokenizer_and_bad_config(model, tmp_path):
    no_weights = _copy_model(model.path, tmp_path / "a", skip=("model.safetensors",))
    with pytest.raises(ModelLoadError, match=r"model\.safetensors"):
        load_model(no_weights)
    no_tokenizer = _copy_model(model.path, tmp_path / "b", skip=("tokenizer.json",))
    with pytest.raises(ModelLoadError, match=r"tokenizer\.json"):
        load_model(no_tokenizer)
    bad_config = _copy_model(model.path, tmp_path / "c", skip=("config.json",))
    (bad_config / "config.json").write_text('{"hidden_size": 384,', encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"config\.json"):
        load_model(bad_config)
    gpt = _copy_model(model.path, tmp_path / "d", skip=("config.json",))
    (gpt / "config.json").write_text(json.dumps({"model_type": "gpt2"}), encoding="utf-8")
    with pytest.raises(ModelLoadError, match="BERT"):
        load_model(gpt)
    bad_tokenizer = _copy_model(model.path, tmp_path / "e", skip=("tokenizer.json",))
    (bad_tokenizer / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match="tokenizer"):
        load_model(bad_tokenizer)


# -- the CLI ----------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "attention_core", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "X.npz"
    done = _cli("trace", SENTENCE, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout
    with np.load(out) as npz:
        return {key: npz[key] for key in npz.files}


def test_cli_writes_the_documented_keys_and_shapes(exported):
    tokens = exported["tokens"].tolist()
    t = len(tokens)
    assert tokens == ["[CLS]", "the", "river", "bank", "was", "muddy", "[SEP]"]
    assert exported["input_ids"].shape == (t,)
    assert exported["scores"].shape == exported["pattern"].shape == (6, 12, t, t)
    assert exported["hidden"].shape == (7, t, 384)
    assert exported["delta"].shape == (6, t, 384)
    assert exported["sentence_embedding"].shape == (384,)
    np.testing.assert_allclose(exported["pattern"].sum(axis=-1), 1.0, atol=1e-5)


def test_cli_pattern_equals_transformers_attentions(model, exported):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    hf = transformers.AutoModel.from_pretrained(str(model.path), attn_implementation="eager")
    tok = transformers.AutoTokenizer.from_pretrained(str(model.path))
    ids = tok(SENTENCE, padding=False)["input_ids"]
    assert exported["input_ids"].tolist() == ids
    with torch.no_grad():
        out = hf.eval()(input_ids=torch.tensor([ids]), output_attentions=True)
    theirs = np.stack([a[0].numpy() for a in out.attentions])
    np.testing.assert_allclose(exported["pattern"], theirs, rtol=0, atol=1e-5)


def test_cli_empty_sentence_exits_2_with_a_message(tmp_path):
    out = tmp_path / "empty.npz"
    done = _cli("trace", "   ", "--out", str(out))
    assert done.returncode == 2
    assert "empty" in done.stderr
    assert not out.exists()


def test_cli_missing_model_exits_2(tmp_path):
    done = _cli("trace", SENTENCE, "--out", str(tmp_path / "x.npz"), "--model", "/nonexistent")
    assert done.returncode == 2
    assert "/nonexistent" in done.stderr


def test_an_unknown_model_name_lists_the_known_ones(tmp_path):
    with pytest.raises(ModelLoadError, match="Unknown model 'gpt5': use one of minilm, smollm2"):
        load_model("gpt5")
    done = _cli("trace", SENTENCE, "--out", str(tmp_path / "x.npz"), "--model", "gpt5")
    assert done.returncode == 2 and "minilm, smollm2" in done.stderr
