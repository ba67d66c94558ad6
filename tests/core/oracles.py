"""Reference numbers for issue 21's views, read from the libraries that run each model.

The oracles are transformers' own models, never our engine: ``BertModel`` (eager attention) on the
packaged all-MiniLM-L6-v2 folder, and ``LlamaForCausalLM`` from SmolLM2's GGUF file, built in
references/text.py (the app's verify button uses the same). Each is loaded once per process
(an ``lru_cache`` of one: once per pytest worker) and run here with forward hooks: on the value
projection (value norms), as a forward pre-hook on the output projection (knock-out:
the knocked head's slice of its input set to zero), and on each decoder layer (logit lens).
Rollout is computed here from transformers' ``attentions`` with Abnar & Zuidema's formula.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

# The oracles themselves are shared with the app's "Verify against the reference library" button.
from references.text import HOOK_PATHS, Oracle, bert_oracle, llama_oracle, oracle  # noqa: E402

__all__ = ["Oracle", "bert_oracle", "llama_oracle", "oracle"]

# Varied sentences, each run through both models: short, repeated words, punctuation, ~100 tokens.
SENTENCES = {
    "short": "The cat sat.",
    "repeated": "the dog saw the dog and the other dog saw the dog too",
    "punctuation": 'Wait... what?! (Yes, really) -- "quoted" & more; ok: done/undone.',
    "long": (
        "The river bank was muddy after the storm, so the children walked along the old stone "
        "bridge instead. Their teacher had told them that water always finds the lowest path, "
        "and that the town grew up here because boats could carry grain and timber to the sea. "
        "When they reached the far side, the oldest girl counted the boats: seven, then eight, "
        "then nine, each one heavier than the last."
    ),
}


@dataclass(frozen=True)
class Reference:
    """One hooked run of an oracle: transformers' arrays as NumPy float32 (float64 for probs)."""

    pattern_lhqk: np.ndarray  # output_attentions
    hidden_ltd: np.ndarray  # output_hidden_states
    value_norm_lhk: np.ndarray  # ‖v_j,h · W_O,h‖ from the hooked value projection and W_O
    block_out_ltd: np.ndarray  # each layer's own output (the residual after block l)
    probs_tv: np.ndarray | None  # decoder: next-token probabilities per position

    @property
    def norm_weighted_lhqk(self) -> np.ndarray:
        return self.pattern_lhqk * self.value_norm_lhk[:, :, None, :]


def _first(output: Any) -> Any:
    return output[0] if isinstance(output, tuple) else output


def _value_norms_hk(oracle: Oracle, v_out_tx: np.ndarray, w_o_dx: np.ndarray) -> np.ndarray:
    """‖f_h(x_j)‖ per head and token: the hooked value output (bias included) split into KV heads,
    each query head taking its KV head (GQA: head h reads KV head h // group), times head h's
    columns of the output projection's weight (torch's Linear stores W_O as [d_out, d_in])."""
    t, e, h = v_out_tx.shape[0], oracle.d_head, oracle.n_heads
    v_gte = v_out_tx.reshape(t, oracle.n_kv_heads, e).transpose(1, 0, 2)
    v_hte = np.repeat(v_gte, h // oracle.n_kv_heads, axis=0)
    w_hde = w_o_dx.reshape(w_o_dx.shape[0], h, e).transpose(1, 0, 2)
    f_htd = np.einsum("hte,hde->htd", v_hte.astype(np.float64), w_hde.astype(np.float64))
    return np.linalg.norm(f_htd, axis=-1).astype(np.float32)


def _knock_hook(heads: list[int], d_head: int):
    """A forward pre-hook for an output projection: zero the knocked heads' slices of its input."""

    def hook(_module: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
        z = args[0].clone()
        for head in heads:
            z[..., head * d_head : (head + 1) * d_head] = 0
        return (z, *args[1:])

    return hook


def _install(oracle: Oracle, knocked: Iterable[tuple[int, int]], captured: dict) -> list[Any]:
    """Hooks on every layer: value output, block output, and the knock-out pre-hooks."""
    value_path, out_path, _ = HOOK_PATHS[oracle.family]
    by_layer: dict[int, list[int]] = {}
    for layer, head in knocked:
        by_layer.setdefault(layer, []).append(head)
    handles = []
    for i, block in enumerate(oracle.layers):

        def keep(_m: Any, _a: Any, out: Any, key: tuple[str, int]) -> None:
            captured[key] = _first(out)[0].detach().numpy().copy()

        value, out_proj = block.get_submodule(value_path), block.get_submodule(out_path)
        handles.append(value.register_forward_hook(functools.partial(keep, key=("v", i))))
        handles.append(block.register_forward_hook(functools.partial(keep, key=("block", i))))
        if i in by_layer:
            hook = _knock_hook(by_layer[i], oracle.d_head)
            handles.append(out_proj.register_forward_pre_hook(hook))
    return handles


def run_reference(
    oracle: Oracle, ids: list[int], knocked: Iterable[tuple[int, int]] = ()
) -> Reference:
    """Run the oracle on ``ids`` with hooks; ``knocked`` = (layer, head) pairs switched off."""
    captured: dict[tuple[str, int], np.ndarray] = {}
    handles = _install(oracle, knocked, captured)
    try:
        with torch.no_grad():
            out = oracle.model(
                input_ids=torch.as_tensor([ids]), output_attentions=True, output_hidden_states=True
            )
    finally:
        for handle in handles:
            handle.remove()
    n_layers = len(oracle.layers)
    out_path = HOOK_PATHS[oracle.family][1]
    norms = [
        _value_norms_hk(
            oracle,
            captured["v", i],
            oracle.layers[i].get_submodule(out_path).weight.detach().numpy(),
        )
        for i in range(n_layers)
    ]
    probs = None
    if oracle.family == "llama":
        probs = torch.softmax(out.logits[0].double(), dim=-1).numpy()
    return Reference(
        pattern_lhqk=np.stack([a[0].numpy() for a in out.attentions]),
        hidden_ltd=np.stack([h[0].numpy() for h in out.hidden_states]),
        value_norm_lhk=np.stack(norms),
        block_out_ltd=np.stack([captured["block", i] for i in range(n_layers)]),
        probs_tv=probs,
    )


def rollout_lqk(pattern_lhqk: np.ndarray) -> np.ndarray:
    """Abnar & Zuidema's rollout in float64: A_l = 0.5 · mean over heads + 0.5 · I,
    R_0 = A_0, R_l = A_l · R_(l-1)."""
    n_layers, _, t, _ = pattern_lhqk.shape
    out = np.empty((n_layers, t, t))
    rolled = np.eye(t)
    for layer in range(n_layers):
        a_qk = 0.5 * pattern_lhqk[layer].astype(np.float64).mean(axis=0) + 0.5 * np.eye(t)
        rolled = a_qk @ rolled
        out[layer] = rolled
    return out


def lens_top(oracle: Oracle, ref: Reference, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Logit lens from transformers' modules: the final RMSNorm (``model.model.norm``) and the LM
    head applied to the residual after every block, softmax in float64; each position's ``k``
    likeliest tokens and their probabilities, [L, t, k], likeliest first (a layer at a time: the
    whole [L, t, vocab] would take a GB at 80 tokens)."""
    model = oracle.model
    ids, probs = [], []
    for block_td in ref.block_out_ltd:
        with torch.no_grad():
            logits = model.lm_head(model.model.norm(torch.from_numpy(block_td.copy())))
        top = torch.topk(torch.softmax(logits.double(), dim=-1), k, dim=-1)
        ids.append(top.indices.numpy())
        probs.append(top.values.numpy())
    return np.stack(ids), np.stack(probs)


def settled(sorted_probs_xk: np.ndarray, margin: float = 1e-3) -> np.ndarray:
    """For probabilities sorted likeliest first, [..., k + 1]: True at rank i (of the first k)
    when every rank up to i is more than ``margin`` above the next, so its token is certain."""
    clear = -np.diff(sorted_probs_xk, axis=-1) > margin
    return np.cumprod(clear, axis=-1).astype(bool)


def relative_error_l(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Largest error per layer, relative to that layer's largest reference value (the residual
    stream reaches ~800 in SmolLM2's middle layers)."""
    axes = tuple(range(1, theirs.ndim))
    return np.abs(np.asarray(ours) - theirs).max(axis=axes) / np.abs(theirs).max(axis=axes)


def sink_shares(pattern_hqk: np.ndarray, weighted_hqk: np.ndarray, sinks: list[int]) -> tuple:
    """Per head, the share of attention on the ``sinks`` columns (mean over queries), by weight
    and by norm-weighted attention (each row of the latter renormalized to sum to 1)."""
    by_weight_h = pattern_hqk[:, :, sinks].sum(-1).mean(-1)
    rows_hq = weighted_hqk.sum(-1)
    by_norm_h = (weighted_hqk[:, :, sinks].sum(-1) / rows_hq).mean(-1)
    return by_weight_h, by_norm_h


@functools.cache
def reference(key: str, text: str, knocked: tuple[tuple[int, int], ...] = ()) -> Reference:
    """``run_reference`` of the model ``key`` on ``text``, kept for the process (the modules share
    it); its arrays are read-only."""
    ora = oracle(key)
    ref = run_reference(ora, ora.ids(text), knocked)
    for value in vars(ref).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return ref


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@functools.cache
def cli_npz(key: str, text: str, *extra: str) -> dict[str, np.ndarray]:
    """``python -m attention_core trace TEXT --model KEY [extra] --out F.npz`` in a subprocess,
    as a user runs it; the arrays of F.npz. Kept for the process."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": ROOT}
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "trace.npz")
        args = ["trace", text, "--model", key, *extra, "--out", out]
        done = subprocess.run(
            [sys.executable, "-m", "attention_core", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        with np.load(out) as npz:
            return {name: npz[name] for name in npz.files}
