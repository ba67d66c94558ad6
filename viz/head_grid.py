"""Every head of every layer as one tiled heatmap: a small attention pattern per head.

One figure instead of 72 subplots: the (pooled, when long) patterns are tiled into a single matrix
with NaN gaps between tiles and drawn as one Heatmap; one nearly transparent Scatter marker sits
on each tile's centre and carries the head's layer, number and summary figures, for hover text
and for click selection (Plotly reports selected scatter points, not heatmap cells).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from numpy.typing import NDArray

from attention_core import HeadSummary
from viz.common import PATTERN_SCALE, escape, figure

# Sort keys (URL values) -> (label, HeadSummary field). Every figure is averaged over query rows.
METRICS = {
    "entropy": ("entropy (bits)", "entropy_lh"),
    "special": ("share on [CLS]/[SEP]", "special_share_lh"),
    "previous": ("previous-token share", "previous_share_lh"),
    "diagonal": ("share on itself (diagonal)", "diagonal_share_lh"),
    "max": ("largest weight in a row", "max_weight_lh"),
}
MAX_TILE = 48  # a thumbnail is at most this many pixels a side; longer sentences are averaged
_GRID_PX = 700  # expected drawn width of the tiles in a wide page (the height follows from it)
_TILE_PX = (30, 110)  # smallest and largest expected tile size, in screen pixels
_GHOST = "rgba(128,128,128,0.02)"  # the hover/click markers: there, but not seen


def head_metrics(summary: HeadSummary) -> dict[str, NDArray]:
    """The summary figures by display label, each [l, h], in METRICS order."""
    return {label: getattr(summary, name) for label, name in METRICS.values()}


def pool_blocks(pattern_lhqk: NDArray, max_size: int = MAX_TILE) -> tuple[NDArray, int]:
    """Shrink the last two axes to at most ``max_size`` pixels: f×f blocks of tokens (the last
    block may be smaller), f = ceil(n / max_size). Query rows are averaged and key columns summed,
    so a pixel is the weight a block of queries gives a block of keys, and each thumbnail row
    still sums to 1 like a pattern row (a plain mean would fade every head to near 0 as the
    sentence grows). Returns (thumbs, f)."""
    n = pattern_lhqk.shape[-1]
    if pattern_lhqk.shape[-2] != n or n == 0:
        raise ValueError(f"expected square non-empty patterns, got shape {pattern_lhqk.shape}")
    factor = -(-n // max_size)
    if factor == 1:
        return np.asarray(pattern_lhqk, dtype=np.float32), 1
    starts = np.arange(0, n, factor)
    rows = np.diff(np.append(starts, n)).astype(np.float32)
    summed = np.add.reduceat(np.add.reduceat(pattern_lhqk, starts, axis=-1), starts, axis=-2)
    return (summed / rows[:, None]).astype(np.float32), factor


def order_heads(
    n_heads: int,
    layers: Sequence[int],
    top: int,
    values_lh: NDArray | None = None,
    descending: bool = True,
) -> NDArray[np.int64]:
    """Head numbers to draw for each chosen layer, [len(layers), top]: the first ``top`` heads in
    number order, or (given ``values_lh``) the first ``top`` ranked by those values per layer."""
    if not 1 <= top <= n_heads:
        raise ValueError(f"top must be in 1..{n_heads}, got {top}")
    if values_lh is None:
        return np.tile(np.arange(top), (len(layers), 1))
    rows = np.asarray(values_lh, dtype=np.float64)[list(layers)]
    ranked = np.argsort(-rows if descending else rows, axis=1, kind="stable")
    return np.ascontiguousarray(ranked[:, :top])


def list_heads(
    order_rh: NDArray,
    layers: Sequence[int],
    values_lh: NDArray | None = None,
    descending: bool = True,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The drawn heads as (layer, head) lists: layer by layer, or ranked by ``values_lh`` over
    all of them (ties keep layer order)."""
    layer_n = np.repeat(np.asarray(layers, dtype=np.int64), order_rh.shape[1])
    head_n = np.asarray(order_rh, dtype=np.int64).ravel()
    if values_lh is None:
        return layer_n, head_n
    values = np.asarray(values_lh, dtype=np.float64)[layer_n, head_n]
    rank = np.argsort(-values if descending else values, kind="stable")
    return layer_n[rank], head_n[rank]


def tile(thumbs_nss: NDArray, n_rows: int, n_cols: int, gap: int) -> NDArray:
    """Lay n_rows·n_cols square thumbnails (row-major) out in one matrix, NaN between them."""
    s = thumbs_nss.shape[-1]
    if thumbs_nss.shape != (n_rows * n_cols, s, s):
        raise ValueError(f"{thumbs_nss.shape} thumbnails do not fill a {n_rows}×{n_cols} grid")
    step = s + gap
    out = np.full((n_rows * step - gap, n_cols * step - gap), np.nan, dtype=np.float32)
    for i, thumb in enumerate(thumbs_nss):
        r, c = divmod(i, n_cols)
        out[r * step : r * step + s, c * step : c * step + s] = thumb
    return out


def _hover(metric_names: Sequence[str]) -> str:
    lines = [f"{escape(name)} %{{customdata[{i + 2}]:.3f}}" for i, name in enumerate(metric_names)]
    return (
        "<b>layer %{customdata[0]}, head %{customdata[1]}</b><br>"
        + "<br>".join(lines)
        + "<br><i>click to open it on the pattern page</i><extra></extra>"
    )


_TAG = {"xref": "x", "yref": "y", "xanchor": "left", "yanchor": "top", "showarrow": False}
_TAG_STYLE = {"font": {"size": 10, "color": "white"}, "bgcolor": "rgba(0,0,0,0.6)"}


def _tags(xs: NDArray, ys: NDArray, half: float, layer_n, head_n, values_lh) -> list[dict]:
    """A tag in each tile's top-left corner ("H7 · 0.81") when columns are ranks."""
    return [
        {
            "x": x - half,
            "y": y - half,
            "text": f"H{h} · {values_lh[la, h]:.2f}",
            **_TAG,
            **_TAG_STYLE,
        }
        for x, y, la, h in zip(xs, ys, layer_n, head_n, strict=True)
    ]


def make_head_grid(
    thumbs_lhss: NDArray,
    metrics: Mapping[str, NDArray],
    layers: Sequence[int],
    order_rh: NDArray,
    *,
    ranked_by: str | None = None,
    title: str | None = None,
) -> go.Figure:
    """Rows are layers, columns heads (or ranks when ``ranked_by`` names a metric in ``metrics``).
    ``thumbs_lhss`` holds each head's pattern (queries down, keys across) at thumbnail size;
    ``order_rh`` the head drawn at each [row, column]; ``metrics`` name -> [l, h] figures."""
    n_rows, n_cols = order_rh.shape
    if n_rows != len(layers):
        raise ValueError(f"{n_rows} rows of heads for {len(layers)} layers")
    s = thumbs_lhss.shape[-1]
    gap = max(1, round(s / 10))
    step = s + gap
    tile_px = float(np.clip(_GRID_PX / n_cols, *_TILE_PX))
    layer_n = np.repeat(np.asarray(layers), n_cols)
    head_n = order_rh.ravel()
    z = np.round(tile(thumbs_lhss[layer_n, head_n], n_rows, n_cols, gap), 3)
    col_c, row_c = np.arange(n_cols) * step + (s - 1) / 2, np.arange(n_rows) * step + (s - 1) / 2
    xs, ys = np.tile(col_c, n_rows), np.repeat(row_c, n_cols)
    # A plain list, not a typed array: a clicked point's customdata travels back to Python, and
    # a typed array would arrive as an object keyed "0", "1", …
    custom = np.column_stack([layer_n, head_n, *(m[layer_n, head_n] for m in metrics.values())])
    data = [
        go.Heatmap(
            z=z, colorscale=PATTERN_SCALE, zmin=0.0, zmax=1.0, hoverinfo="skip",
            hoverongaps=False, colorbar={"thickness": 12, "len": 0.9, "title": "weight"},
        ),
        go.Scatter(
            x=xs, y=ys, mode="markers", customdata=np.round(custom, 4).tolist(),
            hovertemplate=_hover(list(metrics)), showlegend=False,
            marker={"symbol": "square", "size": 0.8 * tile_px, "color": _GHOST},
            selected={"marker": {"opacity": 0.3}}, unselected={"marker": {"opacity": 0.02}},
        ),
    ]  # fmt: skip
    axis = {"showgrid": False, "zeroline": False, "tickmode": "array"}
    layout = {
        "yaxis": {
            "tickvals": row_c, "ticktext": [f"L{la}" for la in layers], "autorange": "reversed",
            "scaleanchor": "x", "constrain": "domain", "constraintoward": "top", **axis,
        },
    }  # fmt: skip
    if ranked_by is None:
        xtext = [f"H{h}" for h in order_rh[0]]
    else:
        xtext = [f"#{i + 1}" for i in range(n_cols)]
        layout["annotations"] = _tags(xs, ys, s / 2, layer_n, head_n, metrics[ranked_by])
    layout["xaxis"] = {
        "tickvals": col_c, "ticktext": xtext, "side": "top", "constrain": "domain", **axis
    }  # fmt: skip
    return figure(data, layout, 70 + round(tile_px * n_rows * step / s), title)
