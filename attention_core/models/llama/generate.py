"""Generating with a decoder one token at a time, through a KV cache, every step's attention kept.

``start_generation`` runs the prompt (the prefill) and keeps every layer's keys and values;
``gen.step(token_id)`` feeds one token: its query reads the cache, one token's work. A
``Generation`` is immutable, so a web session may keep old ones: the cache is preallocated and
append-only (positions below a generation's length are written once and never again); a step
from a generation that is no longer the cache's longest (after ``rewind``, or a second step from
the same one) copies the cache first. ``choose`` picks the next id, greedy or seeded sampling.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from attention_core.core.attention import attend
from attention_core.core.family import N_TOP
from attention_core.core.functional import softmax, top_k
from attention_core.core.pieces import show_piece
from attention_core.models import tokenize
from attention_core.models.llama.layers import (
    attention_layer,
    delta_of,
    logits,
    mlp,
    project_qkv,
    rms_norm,
    rope_tables,
)
from attention_core.models.llama.model import LlamaModel

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class StepResult:
    """One position's pass: its attention over everything before it, and the next-token odds."""

    position: int  # the query position (the token fed at this step)
    token_id: int  # the token at that position
    pattern_lhk: F32  # [l, h, position + 1]: that token's attention row, per layer and head
    logits_v: F32 = field(repr=False)  # next-token logits over the vocabulary
    top_ids_k: NDArray[np.int64]  # the 10 likeliest next tokens at temperature 1
    top_probs_k: F32  # their probabilities (float32 softmax, temperature 1)

    @property
    def greedy_id(self) -> int:
        """The likeliest next token (temperature 0)."""
        return int(self.top_ids_k[0])

    def probs_v(self, temperature: float = 1.0) -> NDArray[np.float64]:
        """The next-token distribution sampling at ``temperature`` (> 0) draws from."""
        if not (np.isfinite(temperature) and temperature > 0):
            raise ValueError(f"temperature must be a finite number > 0, got {temperature}")
        scaled = self.logits_v.astype(np.float64) / temperature
        scaled -= scaled.max()
        probs = np.exp(scaled)
        return probs / probs.sum()

    def top(self, temperature: float = 1.0, k: int = N_TOP) -> tuple[NDArray[np.int64], F32]:
        """The k likeliest next tokens at ``temperature`` and their (sampling) probabilities."""
        ids, probs = top_k(self.probs_v(temperature).astype(np.float32)[None], k)
        return ids[0], probs[0]


def choose(
    step: StepResult,
    *,
    temperature: float = 0.0,
    top_k: int = 0,
    seed: int = 0,
    step_index: int | None = None,
) -> int:
    """The next id: greedy at temperature 0, else drawn from the softmax at ``temperature``
    (among the ``top_k`` likeliest when > 0), seeded by (seed, step_index or the position), so
    the same choice comes out every time."""
    if temperature < 0 or top_k < 0:
        raise ValueError(f"temperature and top_k must be >= 0, got {temperature}, {top_k}")
    if temperature == 0:
        return step.greedy_id
    probs = step.probs_v(temperature)
    if top_k:
        keep = np.argpartition(probs, -top_k)[-top_k:]
        kept = np.zeros(probs.size, dtype=bool)
        kept[keep] = True
        probs = np.where(kept, probs, 0.0)
    index = step.position if step_index is None else step_index
    rng = np.random.default_rng([seed, index])
    cumulative = np.cumsum(probs)
    pick = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(pick, probs.size - 1)


class _KVStore:
    """Keys and values of every layer, [l, g, capacity, e], appended to and never rewritten."""

    def __init__(self, model: LlamaModel, capacity: int) -> None:
        cfg = model.config
        shape = (cfg.n_layers, cfg.n_kv_heads, capacity, cfg.d_head)
        self.k_lgte, self.v_lgte = np.zeros(shape, np.float32), np.zeros(shape, np.float32)
        self.length, self.capacity = 0, capacity
        self._lock = threading.Lock()

    def claim(self, n: int) -> bool:
        """Take position ``n`` for writing if the cache ends exactly there and has room."""
        with self._lock:
            if self.length != n or n >= self.capacity:
                return False
            self.length = n + 1
            return True

    def fork(self, model: LlamaModel, n: int, capacity: int) -> _KVStore:
        """A new store holding this one's first ``n`` positions."""
        other = _KVStore(model, capacity)
        other.k_lgte[:, :, :n] = self.k_lgte[:, :, :n]
        other.v_lgte[:, :, :n] = self.v_lgte[:, :, :n]
        other.length = n
        return other

    @property
    def nbytes(self) -> int:
        return int(self.k_lgte.nbytes + self.v_lgte.nbytes)


@dataclass(frozen=True, eq=False)
class Generation:
    """A prompt and the tokens generated after it; ``last`` is the newest position's step."""

    model: LlamaModel = field(repr=False)
    ids: tuple[int, ...]  # prompt ids, then generated ids
    n_prompt: int
    max_new_tokens: int
    steps: tuple[StepResult, ...]  # one per position from the prompt's last token on
    _store: _KVStore = field(repr=False)

    @property
    def last(self) -> StepResult:
        return self.steps[-1]

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """Display strings of every token ("▁" a space, "⏎" a newline)."""
        return tuple(show_piece(self.model.tokenizer.id_to_token(i)) for i in self.ids)

    @property
    def text(self) -> str:
        """The generated tokens decoded (the prompt left out)."""
        return str(self.model.tokenizer.decode(list(self.ids[self.n_prompt :])))

    @property
    def finished(self) -> bool:
        """The last token is the end of turn, or max_new_tokens are generated."""
        done = len(self.ids) - self.n_prompt >= self.max_new_tokens
        return done or (len(self.ids) > self.n_prompt and self.ids[-1] == self.model.eos_id)

    @property
    def k_lgte(self) -> F32:
        """The cached keys (after RoPE) of this generation's tokens: a read-only view."""
        return _read_only(self._store.k_lgte[:, :, : len(self.ids)])

    @property
    def v_lgte(self) -> F32:
        return _read_only(self._store.v_lgte[:, :, : len(self.ids)])

    @property
    def cache_nbytes(self) -> int:
        """Bytes of the KV cache this generation reads (preallocated to its full length)."""
        return self._store.nbytes

    def step(self, token_id: int) -> Generation:
        """Feed ``token_id`` at the next position: one token's pass through the cache."""
        if self.finished:
            raise ValueError("this generation is finished (end of turn or max_new_tokens)")
        if not 0 <= token_id < self.model.config.vocab_size:
            raise ValueError(f"token id {token_id} is outside the vocabulary")
        n, store = len(self.ids), self._store
        if not store.claim(n):  # someone else has appended here: copy what is ours first
            store = store.fork(self.model, n, self.n_prompt + self.max_new_tokens)
            store.claim(n)
        result = _one_token(self.model, store, n, int(token_id))
        ids = (*self.ids, int(token_id))
        return Generation(
            self.model, ids, self.n_prompt, self.max_new_tokens, (*self.steps, result), store
        )

    def rewind(self, n_tokens: int) -> Generation:
        """This generation cut back to its first ``n_tokens`` (>= the prompt): no recompute."""
        if not self.n_prompt <= n_tokens <= len(self.ids):
            raise ValueError(f"n_tokens must be in [{self.n_prompt}, {len(self.ids)}]")
        return Generation(
            self.model,
            self.ids[:n_tokens],
            self.n_prompt,
            self.max_new_tokens,
            self.steps[: n_tokens - self.n_prompt + 1],
            self._store,
        )


def _read_only(view: F32) -> F32:
    view.flags.writeable = False
    return view


def _result(model: LlamaModel, position: int, token: int, x_d: F32, rows: list[F32]) -> StepResult:
    final = rms_norm(x_d[None], model.params.final_norm_d, model.config.layer_norm_eps)
    logits_v = logits(model, final)[0]
    ids, probs = top_k(softmax(logits_v[None]), N_TOP)
    pattern = np.stack(rows)
    for array in (logits_v, pattern, ids, probs):
        array.flags.writeable = False
    return StepResult(position, token, pattern, logits_v, ids[0], probs[0])


def _one_token(model: LlamaModel, store: _KVStore, p: int, token: int) -> StepResult:
    """Token ``token`` at position ``p``: its k, v into the cache, its query over 0..p."""
    cfg, params = model.config, model.params
    cos_te, sin_te = rope_tables(cfg, np.array([p]))
    x_td, rows = params.embed_vd[token][None], []
    with np.errstate(over="ignore"):
        for i, lay in enumerate(params.layers):
            q_hqe, k_gke, v_gke = project_qkv(lay, cfg, x_td, cos_te, sin_te)
            store.k_lgte[i, :, p], store.v_lgte[i, :, p] = k_gke[:, 0], v_gke[:, 0]
            _, pattern, z = attend(q_hqe, store.k_lgte[i, :, : p + 1], store.v_lgte[i, :, : p + 1])
            rows.append(pattern[:, 0])
            resid_td = x_td + delta_of(lay, z)
            x_td = resid_td + mlp(lay, cfg, resid_td)
    return _result(model, p, token, x_td[0], rows)


SYSTEM_PROMPT = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


def chat_prompt(user_text: str, system: str = SYSTEM_PROMPT) -> str:
    """``user_text`` as one user turn in SmolLM2's chat template, ready for the assistant's
    reply (the GGUF's template with add_generation_prompt, and its default system turn)."""
    return (
        f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user_text}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def start_generation(model: LlamaModel, prompt: str, max_new_tokens: int = 64) -> Generation:
    """Run ``prompt`` (cut at ``config.max_tokens``) and keep its keys and values: the prefill.
    ``last`` is the prompt's last token's step: its attention, the first choice's odds."""
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    cfg, params = model.config, model.params
    ids = tokenize(model, prompt).input_ids_t
    n = len(ids)
    store = _KVStore(model, n + max_new_tokens)
    store.claim(0)
    store.length = n
    cos_te, sin_te = rope_tables(cfg, np.arange(n))
    x_td, rows = params.embed_vd[ids], []
    with np.errstate(over="ignore"):
        for i, lay in enumerate(params.layers):
            layer = attention_layer(lay, cfg, x_td, cos_te, sin_te)
            store.k_lgte[i, :, :n], store.v_lgte[i, :, :n] = layer.k_gke, layer.v_gke
            rows.append(layer.pattern_hqk[:, -1])
            resid_td = x_td + delta_of(lay, layer.z_hqe)
            x_td = resid_td + mlp(lay, cfg, resid_td)
    first = _result(model, n - 1, int(ids[-1]), x_td[-1], rows)
    return Generation(model, tuple(int(i) for i in ids), n, max_new_tokens, (first,), store)
