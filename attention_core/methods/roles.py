"""What each head does, measured: every head's score for each job a head is known to do, on the
visitor's own tokens, and a name given only when a score passes a stated rule.

The scores are TransformerLens's head detector (``transformer_lens/head_detector.py``, error
measure "mul", nothing excluded): for a head's pattern A ([query, key], rows summing to 1) and a
detection pattern P of the job, score = Σ(A ⊙ P) / ΣA, the share of all the head's weight that
lands where the job would put it. The detection patterns, each kept below the diagonal as
TransformerLens keeps them:

- ``previous_token``: P[i, i−1] = 1 (each token reads the one just before it);
- ``duplicate_token``: P[i, j] = 1 for j < i where token j is the same token as token i;
- ``induction``: P[i, j] = 1 for 1 ≤ j ≤ i where token j−1 is the same token as token i (the
  token that came *after* an earlier copy of this one: what lets a model continue a repeat).

Three more are read off the pattern directly:

- ``first_token``: the mean over queries of the weight on token 0 (the "sink": [CLS] in MiniLM,
  the first token in SmolLM2), and ``last_token`` the same for a closing special token ([SEP]);
- ``self``: the mean weight a token gives itself;
- ``broad``: the mean over queries of the row's entropy divided by the entropy of an even spread
  over the keys that query may see (1: as even as possible, 0: all on one key).

The yardstick of every score is a head that spreads each query's weight evenly over the keys it
may see: it gets ``even[role]`` by the same formula on the same tokens. A head is *named* by a
role only when its score passes ``RULE`` (at least ``RULE.margin`` above the even spread's);
otherwise it is "mixed", described by its two largest scores.

Shape suffixes: l layer, h head, q query, k key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.core.family import Trace

F64 = NDArray[np.float64]
Mask = NDArray[np.bool_]

TOKEN_ROLES = ("previous_token", "duplicate_token", "induction")  # TransformerLens's detectors
ROLE_KEYS = (*TOKEN_ROLES, "first_token", "self", "broad")  # every model; + "last_token"
NAMED = ("previous_token", "duplicate_token", "induction", "self", "first_token", "last_token")

LABELS = {
    "previous_token": "previous-token",
    "duplicate_token": "duplicate-token",
    "induction": "induction",
    "first_token": "first-token sink",
    "last_token": "[SEP] sink",
    "self": "self",
    "broad": "broad",
    "mixed": "mixed",
}
WHAT = {  # what a head of each role does, in plain words (true of any head that passes RULE)
    "previous_token": "reads the token just before each token",
    "duplicate_token": "reads an earlier copy of the same token",
    "induction": "reads the token that followed an earlier copy of the same token",
    "first_token": "parks its weight on the first token",
    "last_token": "parks its weight on the closing [SEP]",
    "self": "reads each token itself",
    "broad": "spreads its weight almost evenly",
}


@dataclass(frozen=True)
class Rule:
    """When a score names a head: its share beats an even spread's share by ``margin`` (a
    fixed gap, so a job stays within reach on a short text, where an even spread already gives
    much, and a share near an even spread's never names one). ``broad`` is named at
    ``broad_floor`` of normalised entropy, and only when no other role is."""

    margin: float = 0.3
    broad_floor: float = 0.9

    def needs(self, even: float) -> float:
        """The share a job needs where an even spread gives ``even``."""
        return even + self.margin

    def passes(self, role: str, score: float, even: float) -> bool:
        if role == "broad":
            return score >= self.broad_floor
        return score >= self.needs(even)

    def short(self) -> str:
        """The rule in a few words: "a job needs an even spread's share + 30 points"."""
        return f"a job needs {self.margin * 100:.0f} points more than an even spread's share"

    def text(self) -> str:
        return (
            f"a head is named by a job when the share of its weight that goes where that job "
            f"puts it is at least {self.margin * 100:.0f} percentage points above the share an "
            f"even spread over the tokens each token can see would put there; 'broad' when its "
            f"spread is at least {self.broad_floor:.0%} as even as it can be; otherwise 'mixed'"
        )


RULE = Rule()


def visible_qk(trace: Trace) -> Mask:
    """True where a query may see a key under the trace's model and switches."""
    n = trace.n_tokens
    causal = trace.config.causal or trace.whatif.causal
    allowed = np.tril(np.ones((n, n), bool)) if causal else np.ones((n, n), bool)
    key_mask_k = trace.whatif.key_mask_k(n)
    return allowed if key_mask_k is None else allowed & key_mask_k[None, :]


def detection_patterns(ids_t: NDArray[np.int64]) -> dict[str, Mask]:
    """TransformerLens's three detection patterns over token ids ``ids_t``, as [q, k] masks."""
    n = len(ids_t)
    same_qk = ids_t[:, None] == ids_t[None, :]
    below = np.tril(np.ones((n, n), bool), -1)
    duplicate = same_qk & below
    induction = np.zeros((n, n), bool)
    induction[:, 1:] = duplicate[:, :-1]  # key j where key j-1 is an earlier copy of query i
    return {
        "previous_token": np.eye(n, k=-1, dtype=bool),
        "duplicate_token": duplicate,
        "induction": np.tril(induction),
    }


def _entropy_share_q(pattern_hqk: NDArray[np.floating], n_visible_q: F64) -> F64:
    """[h] each row's entropy over its entropy if even, averaged over rows seeing ≥ 2 keys.
    p·log p in float32 (0 where p is 0: log of the smallest normal instead), summed in float64."""
    rows = n_visible_q > 1
    if not rows.any():
        return np.full(pattern_hqk.shape[0], np.nan)
    p = np.asarray(pattern_hqk, np.float32)[:, rows]
    plogp = np.log(np.maximum(p, np.finfo(np.float32).tiny))
    plogp *= p
    share_hq = -plogp.sum(-1, dtype=np.float64) / np.log(n_visible_q[rows])
    return np.asarray(share_hq.mean(-1))


def head_scores(
    pattern_hqk: NDArray[np.floating], masks: dict[str, Mask], visible: Mask, closing: bool
) -> dict[str, F64]:
    """Every role's score [h] for one layer's patterns (float32 read, float64 sums; a job's
    share sums only the cells its mask holds)."""
    p = np.asarray(pattern_hqk, np.float32)
    total_h = p.sum((-2, -1), dtype=np.float64)
    out = {}
    for role in TOKEN_ROLES:
        q_c, k_c = np.nonzero(masks[role])
        out[role] = p[:, q_c, k_c].sum(-1, dtype=np.float64) / total_h
    out["first_token"] = p[:, :, 0].mean(-1, dtype=np.float64)
    if closing:
        out["last_token"] = p[:, :, -1].mean(-1, dtype=np.float64)
    out["self"] = np.einsum("hqq->hq", p).mean(-1, dtype=np.float64)
    out["broad"] = _entropy_share_q(p, visible.sum(-1).astype(np.float64))
    return out


@dataclass(frozen=True)
class RoleScores:
    """Every head's score per role on one pass's tokens, and an even spread's."""

    scores_lh: dict[str, F64]  # role -> [layers, heads]
    even: dict[str, float]  # role -> the score of a head spreading evenly over visible keys
    n_tokens: int

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.scores_lh)

    def arrays(self) -> dict[str, F64]:
        """The scores as the CLI's npz keys."""
        return dict(self.scores_lh)


def _closing(trace: Trace) -> bool:
    """True when the tokens end in a special token the model always adds ([SEP])."""
    special_t = trace.tokens.special_t
    return bool(trace.config.special_tokens and len(special_t) > 1 and special_t[-1])


def role_scores(trace: Trace) -> RoleScores:
    """Score every head of ``trace`` (a decoder's layers are computed as they are read)."""
    masks = detection_patterns(trace.tokens.input_ids_t)
    visible = visible_qk(trace)
    closing = _closing(trace)
    layers = [
        head_scores(np.asarray(trace.pattern_lhqk[layer]), masks, visible, closing)
        for layer in range(trace.config.n_layers)
    ]
    even_qk = visible / np.maximum(visible.sum(-1, keepdims=True), 1)  # a blind row: zeros
    even = {k: float(v[0]) for k, v in head_scores(even_qk[None], masks, visible, closing).items()}
    scores = {role: np.stack([lay[role] for lay in layers]) for role in layers[0]}
    return RoleScores(scores, even, trace.n_tokens)


def article(word: str) -> str:
    """ "an" before a vowel ("an induction head"), else "a"."""
    return "an" if word[:1].lower() in "aeiou" else "a"


@dataclass(frozen=True)
class HeadRole:
    """One head's name under ``RULE``: its leading role, or "mixed" with its top two scores."""

    layer: int
    head: int
    role: str  # a key of LABELS
    score: float  # the leading role's score (mixed: the larger of the two)
    even: float  # an even spread's score for that role
    top: tuple[tuple[str, float], tuple[str, float]]  # the two largest of the NAMED scores

    @property
    def named(self) -> bool:
        return self.role != "mixed"

    def badge(self) -> str:
        """Short text for a badge: "previous-token 0.52" or "mixed: sink 0.41 · self 0.20"."""
        if self.named:
            return f"{LABELS[self.role]} {self.score:.2f}"
        (a, sa), (b, sb) = self.top
        return f"mixed: {LABELS[a]} {sa:.2f} · {LABELS[b]} {sb:.2f}"


def name_head(scores: RoleScores, layer: int, head: int, rule: Rule = RULE) -> HeadRole:
    """Name one head: the largest passing token job (previous, duplicate, induction, self)
    first; else a sink that passes; else "broad" if it passes; else "mixed"."""
    own = {role: float(scores.scores_lh[role][layer, head]) for role in scores.roles}
    ranked = sorted((r for r in NAMED if r in own), key=lambda r: -own[r])
    passing = [r for r in ranked if rule.passes(r, own[r], scores.even[r])]
    jobs = [r for r in passing if r not in ("first_token", "last_token")]
    sinks = [r for r in passing if r in ("first_token", "last_token")]
    role = (jobs or sinks or [""])[0]
    if not role and rule.passes("broad", own["broad"], 1.0):
        role = "broad"
    top = ((ranked[0], own[ranked[0]]), (ranked[1], own[ranked[1]]))
    if not role:
        return HeadRole(layer, head, "mixed", top[0][1], scores.even[top[0][0]], top)
    return HeadRole(layer, head, role, own[role], scores.even.get(role, 1.0), top)


def name_heads(scores: RoleScores, rule: Rule = RULE) -> list[list[HeadRole]]:
    """Every head named: [layer][head]."""
    n_layers, n_heads = scores.scores_lh["self"].shape
    return [[name_head(scores, lay, h, rule) for h in range(n_heads)] for lay in range(n_layers)]
