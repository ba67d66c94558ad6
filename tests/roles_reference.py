"""Head-role scores from the reference libraries, for the pages' tests: transformers' eager
attentions (``tests.core.oracles.reference``: BertModel on MiniLM, LlamaForCausalLM from SmolLM2's
GGUF) scored by TransformerLens's ``head_detector`` (its three detection patterns and
``compute_head_attention_similarity_score``, error measure "mul", nothing excluded), and the
pattern-only roles written here in torch from the same attentions: ``first_token`` the mean of
column 0, ``last_token`` of the last column (MiniLM's closing [SEP] only), ``self`` the mean of
the diagonal, ``broad`` each row's entropy over log(the keys that row may see), averaged over
the rows that see at least 2 keys. No engine code is used.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

torch = pytest.importorskip("torch")
hd = pytest.importorskip("transformer_lens.head_detector")

from tests.core.oracles import oracle, reference  # noqa: E402

DETECTORS = {
    "previous_token": hd.get_previous_token_head_detection_pattern,
    "duplicate_token": hd.get_duplicate_token_head_detection_pattern,
    "induction": hd.get_induction_head_detection_pattern,
}


def detector_scores(pattern_lhqk: np.ndarray, ids: list[int]) -> dict[str, np.ndarray]:
    """TransformerLens's three detector scores [L, H] of ``pattern_lhqk`` on token ``ids``."""
    pattern = torch.from_numpy(np.array(pattern_lhqk, dtype=np.float32))  # a writable copy
    n_layers, n_heads = pattern.shape[:2]
    tokens = torch.as_tensor([ids])
    out = {}
    for role, detector in DETECTORS.items():
        detection = detector(tokens)
        out[role] = np.array(
            [
                [
                    hd.compute_head_attention_similarity_score(
                        pattern[layer, head],
                        detection_pattern=detection,
                        exclude_bos=False,
                        exclude_current_token=False,
                        error_measure="mul",
                    )
                    for head in range(n_heads)
                ]
                for layer in range(n_layers)
            ]
        )
    return out


def pattern_scores(
    pattern_lhqk: np.ndarray, causal: bool, closing: bool, count_q: torch.Tensor | None = None
) -> dict[str, np.ndarray]:
    """The roles read off the pattern directly, in torch float64, each [L, H]; ``count_q`` is how
    many keys each query may see (default: those up to itself if ``causal``, else all)."""
    p = torch.from_numpy(np.array(pattern_lhqk, dtype=np.float64))
    n = p.shape[-1]
    if count_q is None:
        seen = torch.tril(torch.ones(n, n, dtype=torch.float64)) if causal else torch.ones(n, n)
        count_q = seen.sum(-1)
    out = {
        "first_token": p[..., 0].mean(-1).numpy(),
        "self": torch.diagonal(p, dim1=-2, dim2=-1).mean(-1).numpy(),
    }
    if closing:
        out["last_token"] = p[..., -1].mean(-1).numpy()
    entropy_lhq = -torch.special.xlogy(p, p).sum(-1)
    rows = count_q > 1
    out["broad"] = (
        (entropy_lhq[..., rows] / torch.log(count_q[rows])).mean(-1).numpy()
        if rows.any()
        else np.full(p.shape[:2], np.nan)
    )
    return out


@functools.cache
def reference_scores(model_key: str, text: str) -> dict[str, np.ndarray]:
    """Every head's score per role on ``text``, role -> [L, H], from the reference libraries
    (``model_key``: "minilm" or "smollm2"); kept for the process."""
    ora = oracle(model_key)
    ids = ora.ids(text)
    pattern_lhqk = reference(model_key, text).pattern_lhqk
    causal = ora.family == "llama"
    closing = not causal  # MiniLM's tokens end in [SEP]
    scores = detector_scores(pattern_lhqk, ids) | pattern_scores(pattern_lhqk, causal, closing)
    for value in scores.values():
        value.flags.writeable = False
    return scores


@functools.cache
def reference_even(model_key: str, text: str) -> dict[str, float]:
    """Every role's score of a head spreading each query's weight evenly over the keys it may
    see, by the same reference functions on the same tokens: the rule's yardstick."""
    ora = oracle(model_key)
    ids = ora.ids(text)
    causal = ora.family == "llama"
    n = len(ids)
    seen = np.tril(np.ones((n, n))) if causal else np.ones((n, n))
    even_qk = (seen / seen.sum(-1, keepdims=True))[None, None]
    scores = detector_scores(even_qk, ids) | pattern_scores(even_qk, causal, not causal)
    return {role: float(value[0, 0]) for role, value in scores.items()}


NAMED = ("previous_token", "duplicate_token", "induction", "self", "first_token", "last_token")
MARGIN, BROAD = 0.3, 0.9  # the naming rule, as the pages state it in words


def reference_role(model_key: str, text: str, layer: int, head: int) -> tuple[str, float] | None:
    """The stated rule on the reference scores of one head: the largest job at least MARGIN
    above an even spread's score, else a passing sink, else "broad" (BROAD of the most
    even spread), else "mixed" with its largest score; None when a score is within 1e-4 of its
    threshold (rounding could go either way)."""
    ref, even = reference_scores(model_key, text), reference_even(model_key, text)
    own = {role: float(v[layer, head]) for role, v in ref.items()}
    named = [r for r in NAMED if r in own]
    edges = [abs(own[r] - (even[r] + MARGIN)) for r in named]
    if min(edges) < 1e-4 or abs(own["broad"] - BROAD) < 1e-4:
        return None
    passing = [r for r in named if own[r] >= even[r] + MARGIN]
    jobs = [r for r in passing if r not in ("first_token", "last_token")]
    for group in (jobs, [r for r in passing if r not in jobs]):
        if group:
            best = max(group, key=lambda r: own[r])
            return best, own[best]
    if own["broad"] >= BROAD:
        return "broad", own["broad"]
    return "mixed", max(own[r] for r in named)
