"""One Whisper decoder layer taken apart: what each of its three sub-layers (masked
self-attention, cross-attention, feed-forward) adds to the stream.

``decode_tokens`` adds the three updates in place and keeps only the stream entering each layer;
this recomputes one layer from that stream with the same functions, so the updates are the
pass's own (tests/core/test_decoder_block.py checks them against transformers' modules).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.models.whisper.forward import (
    KV,
    cross_attention,
    ffn,
    self_attention,
)
from attention_core.models.whisper.model import WhisperModel

F32 = NDArray[np.float32]


@dataclass(frozen=True)
class LayerUpdates:
    """The updates one decoder layer adds to each token's vector, in order, and its output."""

    self_td: F32  # masked self-attention's update, [t, d]
    cross_td: F32  # cross-attention's update (reading the audio), [t, d]
    ffn_td: F32  # the feed-forward's update, [t, d]
    out_td: F32  # the stream leaving the layer: in + the three updates, [t, d]


def layer_updates(model: WhisperModel, stream_td: F32, layer: int, memory: KV) -> LayerUpdates:
    """Decoder layer ``layer`` on ``stream_td`` (every token from the first, as it enters the
    layer: ``DecoderPass.hidden_ltd[layer]``) with that layer's cross-attention keys and values
    ``memory`` (``memory_of``): the update of each sub-layer, under the causal mask."""
    layers, cfg = model.params.decoder_layers, model.config
    if not 0 <= layer < len(layers):
        raise ValueError(f"layer {layer} is outside 0..{len(layers) - 1}")
    if stream_td.ndim != 2 or stream_td.shape[1] != cfg.d_model:
        raise ValueError(f"stream_td must be [t, {cfg.d_model}], got {list(stream_td.shape)}")
    lay = layers[layer]
    if lay.cross_attn is None:
        raise ValueError(f"decoder layer {layer} has no cross-attention")
    _, self_td, _ = self_attention(lay.self_attn, cfg, stream_td, None, causal=True)
    x_td = stream_td + self_td
    _, cross_td = cross_attention(lay.cross_attn, cfg, x_td, memory)
    x_td = x_td + cross_td
    ffn_td = ffn(lay.ffn, cfg, x_td)
    return LayerUpdates(self_td, cross_td, ffn_td, x_td + ffn_td)
