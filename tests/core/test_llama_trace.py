"""SmolLM2's trace: layers computed on demand equal the pass's own, memory stays bounded, the
tokenizer's edges, loading errors, the command line, and the engine's imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from attention_core import (
    ModelLoadError,
    WhatIf,
    load_config,
    load_model,
    tokenize,
    trace_nbytes,
    trace_sentence,
)
from attention_core.methods.rollout import trace_rollout
from attention_core.models import MODEL_KEYS, SMOLLM2_INSTALL_HINT
from attention_core.models.llama.forward import run_llama
from attention_core.models.llama.model import smollm2_path

ROOT = Path(__file__).resolve().parents[2]
LONG = " ".join(f"Sentence {i} says something about rivers, banks and boats." for i in range(80))
ATTENTION_NAMES = ("q_hqe", "k_gke", "v_gke", "scores_hqk", "pattern_hqk", "z_hqe")


def test_lazy_layers_are_bit_identical_to_the_pass(smollm2):
    tokens = tokenize(smollm2, "The river bank was muddy, so dirty quantum plumbing leaked.")
    kept = run_llama(smollm2, tokens, WhatIf(temperature=0.7, hidden=(2,)), keep_layers=True)
    lazy = run_llama(smollm2, tokens, WhatIf(temperature=0.7, hidden=(2,)))
    assert np.array_equal(kept.hidden_ltd, lazy.hidden_ltd)
    for layer in (0, 13, 29, 13):
        for name in ATTENTION_NAMES:
            assert np.array_equal(
                getattr(kept.layer(layer), name), getattr(lazy.layer(layer), name)
            )
    assert np.array_equal(lazy.pattern_lhqk[13], kept.layer(13).pattern_hqk)


def test_layer_stacks_index_like_arrays(smollm2):
    trace = trace_sentence(smollm2, "dirty quantum plumbing")
    full = np.asarray(trace.pattern_lhqk)
    n = trace.n_tokens
    assert full.shape == trace.pattern_lhqk.shape == (30, 9, n, n) and len(trace.pattern_lhqk) == 30
    assert np.array_equal(trace.pattern_lhqk[4, 2], full[4, 2])
    assert np.array_equal(trace.pattern_lhqk[4][2, 1], full[4, 2, 1])
    assert np.array_equal(trace.pattern_lhqk[-1], full[29])
    assert np.array_equal(trace.pattern_lhqk[1:3, 0], full[1:3, 0])
    assert trace.k_lhke.shape == (30, 9, n, 64) and trace.k_lgke.shape == (30, 3, n, 64)
    assert np.array_equal(trace.k_lhke[7][5], trace.k_lgke[7][5 // 3])
    assert np.allclose(np.asarray(trace.pattern_lhqk).sum(-1), 1, atol=1e-5)
    assert (np.triu(full, 1) == 0).all()
    assert trace.word_td.shape == (n, 576) and trace.hidden_ltd.shape == (31, n, 576)
    assert trace.next_top_ids_tk.shape == trace.next_top_probs_tk.shape == (n, 10)
    with pytest.raises(ValueError):
        trace.pattern_lhqk[4][0, 0, 0] = 1.0  # read-only: the cache is shared
    with pytest.raises(IndexError):
        trace.pattern_lhqk[30]


def test_head_delta_sums_to_the_attention_update(smollm2):
    trace = trace_sentence(smollm2, "dirty quantum plumbing")
    assert np.allclose(trace.head_delta_hd(6, 2).sum(0), trace.delta_ltd[6, 2], atol=1e-4)
    steps = trace.steps(6, 1)
    assert np.array_equal(steps.pattern, trace.pattern_lhqk[6, 1])


def test_a_512_token_trace_holds_at_most_165_mb_and_trace_nbytes_says_so(smollm2):
    trace = trace_sentence(smollm2, LONG, max_tokens=512)
    assert trace.n_tokens == 512 and trace.tokens.n_cut > 0
    trace_rollout(trace)  # kept once asked for (31 MB at 512 tokens)
    for layer in range(30):  # every layer once: the cache stays at its bound
        trace.ffn_out_ltd[layer]  # its updates to the stream too, computed when first read
    held = trace.nbytes
    estimate = trace_nbytes(smollm2.config, 512)
    assert held <= estimate <= 165e6
    assert estimate - held < 1e6  # the tokens and the RoPE tables
    small = trace_sentence(smollm2, "dirty quantum plumbing")
    np.asarray(small.pattern_lhqk)
    np.asarray(small.delta_ltd)  # the updates, computed when first read
    trace_rollout(small)
    assert small.nbytes <= trace_nbytes(smollm2.config, small.n_tokens) < small.nbytes + 5000


def test_layers_are_safe_to_read_from_threads(smollm2):
    trace = trace_sentence(smollm2, LONG[:600])
    expected = [trace.layer(i).pattern_hqk.copy() for i in range(30)]
    errors = []

    def read(order):
        for i in order:
            if not np.array_equal(trace.pattern_lhqk[i], expected[i]):
                errors.append(i)

    threads = [threading.Thread(target=read, args=(list(range(30))[::s],)) for s in (1, -1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_text_is_refused(smollm2, text):
    with pytest.raises(ValueError, match="text is empty"):
        trace_sentence(smollm2, text)


def test_control_characters_and_emoji_tokenize_and_run(smollm2):
    text = "tab\there\x00null\x07bell 🤔🎉 <|im_end|> done"
    trace = trace_sentence(smollm2, text)
    assert np.isfinite(trace.hidden_ltd).all()
    assert "<|im_end|>" in trace.tokens.tokens
    assert trace.tokens.special_t[trace.tokens.tokens.index("<|im_end|>")]
    assert "⇥" in "".join(trace.tokens.tokens) and "Ġ" not in "".join(trace.tokens.tokens)
    starts = trace.tokens.offsets_t2[:, 0]
    assert (np.diff(starts) >= 0).all() and trace.tokens.offsets_t2.max() <= len(text)


def test_config_is_cheap_and_describes_the_decoder():
    tracemalloc.start()
    cfg = load_config("smollm2")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20e6  # the header only: the weights are 540 MB as float32
    assert (cfg.family, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head) == (
        "llama",
        30,
        9,
        3,
        64,
    )
    assert cfg.causal and cfg.positions == "rotary" and cfg.rope_theta == 100000.0
    assert cfg.has_lm_head and not cfg.has_sentence_embedding and cfg.quantization == "Q4_1"
    assert (cfg.max_tokens, cfg.n_positions, cfg.d_ff, cfg.key) == (2048, 8192, 1536, "smollm2")
    minilm = load_config("minilm")
    assert (minilm.family, minilm.n_kv_heads, minilm.causal, minilm.max_tokens) == (
        "bert",
        12,
        False,
        512,
    )
    assert MODEL_KEYS == ("minilm", "smollm2")


def test_a_truncated_or_missing_gguf_says_how_to_install(tmp_path):
    truncated = tmp_path / "cut.gguf"
    with open(smollm2_path(), "rb") as src:
        truncated.write_bytes(src.read(5_000_000))
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a model at all" * 100)
    for path in (truncated, garbage, tmp_path / "missing.gguf"):
        with pytest.raises(ModelLoadError) as err:
            load_model(str(path))
        assert SMOLLM2_INSTALL_HINT.split("  ")[0] in str(err.value)
    full = tmp_path / "copy.gguf"
    shutil.copy(smollm2_path(), full)
    assert load_config(str(full)).n_layers == 30


def test_the_command_line_writes_a_decoder_trace(tmp_path):
    out = tmp_path / "t.npz"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "attention_core",
            "trace",
            "dirty quantum plumbing",
            "--model",
            "smollm2",
            "--out",
            str(out),
            "--causal",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "always causal" in done.stderr
    saved = np.load(out)
    assert saved["pattern"].shape == (30, 9, 4, 4) and saved["hidden"].shape == (31, 4, 576)
    assert saved["next_top_ids"].shape == saved["next_top_probs"].shape == (4, 10)
    assert saved["tokens"].tolist() == ["dir", "ty", "▁quantum", "▁plumbing"]
    assert {"scores", "delta", "input_ids"} <= set(saved.files)


def test_the_trace_fields_hold_its_own_arrays_not_the_model(smollm2):
    from dataclasses import fields, is_dataclass

    trace = trace_sentence(smollm2, "dirty quantum plumbing")

    def walk(obj):  # what the app's trace store counts: arrays in (nested) dataclass fields
        for f in fields(obj):
            value = getattr(obj, f.name)
            if isinstance(value, np.ndarray):
                yield value
            elif is_dataclass(value):
                yield from walk(value)

    counted = sum(a.nbytes for a in walk(trace))
    assert counted < 1e6 and trace.model is smollm2
