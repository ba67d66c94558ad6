"""Every sentence Embedding shift says about a token's move, built from its numbers against a
stated yardstick: what the PCA plane keeps (``plane_words``) and which probe the token moved
towards, beyond the drift every probe shares (``probe_move_words``). Tokens and probe words come
in already quoted for Markdown (the page escapes what a visitor typed)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from attention_core.methods.geometry import ProbeCosines

F64 = NDArray[np.float64]
ONE_DIRECTION = 0.95  # from this share of the spread on the first axis, the plane shows little else
EVEN = 0.01  # below this spread of the relative cosines, a token is equally near every probe


def plane_words(ratio_c: F64, width: int) -> str:
    """What the PCA plane keeps of the vectors, read off its axes' shares of the spread."""
    if ratio_c[0] < ONE_DIRECTION:
        return f"It keeps {ratio_c.sum():.0%} of their spread: a shadow of {width} dimensions."
    return (
        f"Its first axis alone holds {ratio_c[0]:.0%} of the vectors' spread: here they "
        "move mostly along one direction, so the picture shows that movement and little "
        "else; read the numbers below."
    )


def probe_move_words(cos: ProbeCosines, state: int, now: str, who: str, probes: list[str]) -> str:
    """Which probe ``who`` moved towards from the embedding to hidden state ``state`` (named
    ``now``), relative to the other probes; or that it is equally near them all (relative
    cosines within ``EVEN``). Needs at least two probes."""
    if len(probes) < 2:
        raise ValueError("the relative measure needs at least two probes")
    rel, change, raw = cos.relative_lp[state], cos.change(state), cos.raw_lp[state]
    if np.ptp(rel) < EVEN:
        return (
            f"{now[0].upper()}{now[1:]}, {who} is about equally near every probe (raw cosines "
            f"{raw.min():.3f} to {raw.max():.3f}): the differences its embedding had are gone, "
            "not turned towards one probe."
        )
    up, down = int(np.argmax(change)), int(np.argmin(change))
    return (
        f"From the embedding to {now}, {who} moved most towards {probes[up]} "
        f"({change[up]:+.3f}) and most away from {probes[down]} ({change[down]:+.3f}), relative "
        "to the other probes."
    )
