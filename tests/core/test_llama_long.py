"""SmolLM2 over a page of text (2,048 tokens, its longest here) against transformers' own model
on the same GGUF: the layers asked for equal transformers' eager attentions to 1e-4, the hidden
states too, and the trace holds at most 400 MB with every layer read and the rollout kept.

transformers runs its base model (``model.model``: hidden states only, no 2,048 × 49,152 logits)
with a forward hook on the two decoder layers' attention modules, which keeps their weights (eager
attention computes them per layer whatever ``output_attentions`` says); holding every layer's
would be 4.5 GB."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from attention_core import trace_nbytes, trace_sentence  # noqa: E402
from attention_core.core.pooling import held_block  # noqa: E402
from attention_core.methods.rollout import (  # noqa: E402
    rollout_lqk,
    trace_rollout_pooled,
)
from tests.core.oracles import ROOT, cli_npz, llama_oracle, reference  # noqa: E402

LAYERS = (0, 29)
N = 2048
PAGE = " ".join(
    f"Chapter {i}. The ferry left the north bank at {i % 12 + 1} o'clock; the keeper counted "
    f"{i * 3} crates of apples, a bell rang twice, and the river carried the logs past the mill."
    for i in range(90)
)


@pytest.fixture(scope="module")
def page(smollm2):
    trace = trace_sentence(smollm2, PAGE)
    oracle = llama_oracle()
    kept: dict[int, np.ndarray] = {}

    def keep(layer: int):
        def hook(_module, _args, output):
            kept[layer] = output[1][0].numpy()  # (attn_output, attn_weights): [h, q, k]

        return hook

    handles = [oracle.layers[i].self_attn.register_forward_hook(keep(i)) for i in LAYERS]
    try:
        with torch.no_grad():
            ids = torch.as_tensor(trace.tokens.input_ids_t)[None]
            out = oracle.model.model(ids, output_hidden_states=True)
    finally:
        for handle in handles:
            handle.remove()
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])
    return trace, kept, hidden


def test_a_page_is_read_up_to_2048_tokens_and_the_rest_cut(page, smollm2):
    trace, _, _ = page
    assert smollm2.config.max_tokens == N
    assert trace.n_tokens == N and trace.tokens.n_cut > 0


@pytest.mark.parametrize("layer", LAYERS)
def test_patterns_equal_transformers_to_1e_4_at_2048_tokens(page, layer):
    trace, kept, _ = page
    ours = trace.pattern_lhqk[layer]
    assert ours.shape == kept[layer].shape == (9, N, N)
    assert np.abs(ours - kept[layer]).max() < 1e-4
    head = int(np.argmax(kept[layer][:, -1, 0]))  # a single head's pattern, read alone
    assert np.abs(trace.pattern_lhqk[layer, head] - kept[layer][head]).max() < 1e-4


def test_hidden_states_equal_transformers_at_2048_tokens(page):
    trace, _, hidden = page
    scale = np.abs(hidden).max(axis=(1, 2), keepdims=True)
    assert (np.abs(trace.hidden_ltd - hidden) / scale).max() < 1e-4


def test_scores_read_by_head_equal_the_layers_and_softmax_to_the_pattern(page):
    trace, kept, _ = page
    scores_hqk = trace.scores_lhqk[29]
    assert np.array_equal(trace.scores_lhqk[29, 4], scores_hqk[4])
    steps = trace.steps(29, 4)
    assert np.abs(steps.pattern - kept[29][4]).max() < 1e-4


def test_a_2048_token_trace_holds_at_most_400_mb_with_its_rollout(page, smollm2):
    trace, _, _ = page
    pooled = trace_rollout_pooled(trace)
    trace.delta_ltd[29]  # the held layer's updates to the stream, computed when first read
    assert pooled.block == held_block(N) == 4
    assert pooled.rollout_lqk.shape == (30, 512, 512)
    held = trace.nbytes
    assert held <= trace_nbytes(smollm2.config, N) <= 400e6
    assert trace_nbytes(smollm2.config, N) - held < 2e6  # the tokens and the RoPE tables


def test_the_pooled_rollout_is_the_block_mean_of_the_whole_one(smollm2):
    """On 520 tokens (just past ROLLOUT_FULL, so pooled by 2), against ``rollout_lqk`` in
    float64 (itself checked against transformers' attentions in test_rollout.py)."""
    trace = trace_sentence(smollm2, PAGE, max_tokens=520)
    pooled = trace_rollout_pooled(trace)
    whole = rollout_lqk(trace.pattern_lhqk, layers=3)
    assert pooled.block == 2
    blocks = whole.reshape(3, 260, 2, 260, 2).mean(axis=(2, 4))
    assert np.abs(pooled.rollout_lqk[:3] - blocks).max() < 1e-5
    assert np.allclose(pooled.rollout_lqk.sum(-1) * 2, 1, atol=1e-4)  # rows of means: 1 / block


def test_the_command_line_writes_only_the_layers_asked_for(tmp_path):
    """``trace --file page.txt --layers 0,29`` as a user runs it, against transformers."""
    text = PAGE[:700]
    page_file = tmp_path / "page.txt"
    page_file.write_text(text, encoding="utf-8")
    npz = cli_npz("smollm2", "", "--file", str(page_file), "--layers", "29,0")
    ref = reference("smollm2", text)
    assert list(npz["layers"]) == [29, 0] and npz["pattern"].shape[:2] == (2, 9)
    assert np.abs(npz["pattern"] - ref.pattern_lhqk[[29, 0]]).max() < 1e-4
    assert npz["scores"].shape == npz["pattern"].shape and "norm_weighted" in npz
    assert npz["hidden"].shape[0] == 31 and npz["delta"].shape[0] == 30


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--layers", "0,30"), "layers must be in 0..29"),
        (("--layers", "0,0"), "each layer once"),
        (("--layers", "zero"), "layer numbers like 0,29"),
        (("--file", "/nonexistent/page.txt"), "is not a file"),
    ],
)
def test_the_command_line_refuses_bad_layers_and_files(extra, said):
    done = subprocess.run(
        [sys.executable, "-m", "attention_core", "trace", "--model", "smollm2", *extra]
        + ([] if "--file" in extra else ["a few words"])
        + ["--out", os.devnull],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2 and said in done.stderr
