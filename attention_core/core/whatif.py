"""The what-if switches of a forward pass: the causal mask, √d_k scaling, the softmax
temperature, hidden tokens and knocked-out heads. The defaults are the trained model."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray


def _is_position(p: object) -> bool:
    return bool(isinstance(p, int | np.integer) and not isinstance(p, bool) and p >= 0)


def _check_knocked(whatif: WhatIf) -> None:
    """Sorted (layer, head) pairs of non-negative integers, without repeats."""
    pairs = whatif.knocked
    ok = isinstance(pairs, tuple | list) and all(
        isinstance(p, tuple | list) and len(p) == 2 and all(map(_is_position, p)) for p in pairs
    )
    if not ok:
        raise ValueError(f"knocked must be (layer, head) pairs >= 0, got {pairs!r}")
    object.__setattr__(whatif, "knocked", tuple(sorted({(int(a), int(b)) for a, b in pairs})))


@dataclass(frozen=True)
class WhatIf:
    """Switches that change how attention is computed; the defaults are the trained model."""

    causal: bool = False  # hide later tokens from each query (a decoder's is always on)
    scale: bool = True  # divide scores by √d_k before softmax
    temperature: float = 1.0  # divide the logits by this before softmax (> 0)
    hidden: tuple[int, ...] = ()  # token positions no query may see: their keys masked everywhere
    knocked: tuple[tuple[int, int], ...] = ()  # (layer, head) pairs knocked out: each one's
    # output z is zeroed before W_O (its pattern is still computed and kept)

    def __post_init__(self) -> None:
        _check_knocked(self)
        # Sorted and without repeats, so that equal switches are equal (and hash equal) as the
        # cache key they are used as.
        flat = not isinstance(self.hidden, str) and np.ndim(np.asarray(self.hidden, object)) == 1
        items = list(self.hidden) if flat else [None]
        if not all(map(_is_position, items)):
            raise ValueError(f"hidden must be a tuple of token positions >= 0, got {self.hidden!r}")
        object.__setattr__(self, "hidden", tuple(sorted({int(p) for p in items if p is not None})))

    def knocked_in(self, layer: int) -> tuple[int, ...]:
        """The heads of ``layer`` knocked out."""
        return tuple(head for lay, head in self.knocked if lay == layer)

    def check_heads(self, n_layers: int, n_heads: int) -> None:
        """ValueError when a knocked head is not one of the model's."""
        bad = [(lay, h) for lay, h in self.knocked if lay >= n_layers or h >= n_heads]
        if bad:
            raise ValueError(
                f"knocked heads {bad} are outside the model's {n_layers} layers × {n_heads} heads"
            )

    def check_tokens(self, n_tokens: int) -> None:
        """ValueError unless the hidden positions are tokens of a pass over ``n_tokens`` and
        leave one to see (a pass checks this before any work)."""
        if self.hidden and self.hidden[-1] >= n_tokens:
            raise ValueError(f"hidden positions {self.hidden} out of range for {n_tokens} tokens")
        if len(self.hidden) == n_tokens:
            raise ValueError(f"cannot hide all {n_tokens} tokens: no query would see anything")

    def up_to(self, n_tokens: int) -> WhatIf:
        """The same switches over the first ``n_tokens`` tokens only (a pass resumed over a
        prefix: a causal model's later tokens cannot change the earlier ones)."""
        return replace(self, hidden=tuple(p for p in self.hidden if p < n_tokens))

    def key_mask_k(self, n_tokens: int) -> NDArray[np.bool_] | None:
        """True for the keys every query may see, False for hidden ones; None if none is hidden.

        A hidden token still computes its own row as a query (as in transformers when its
        ``attention_mask`` is 0): it is hidden from every token, itself included.
        """
        if not self.hidden:
            return None
        if self.hidden[-1] >= n_tokens:
            raise ValueError(f"hidden positions {self.hidden} out of range for {n_tokens} tokens")
        mask_k = np.ones(n_tokens, dtype=bool)
        mask_k[list(self.hidden)] = False
        return mask_k
