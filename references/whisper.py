"""Whisper's reference libraries, shared by the Listen page's "Verify against the reference
library" button (ui/verify.py) and the tests (tests/core/whisper_refs.py).

- CTranslate2 itself on the package's ``model.bin`` (``models.Whisper(folder, device="cpu",
  compute_type="float32")``): ``encode`` gives the encoder's output, ``generate(...,
  beam_size=1)`` the greedy tokens.
- transformers' ``WhisperForConditionalGeneration`` with model.bin's weights (as our engine read
  them) mapped in, eager attention, for every attention pattern (``output_attentions``).

Each is loaded at most once per process. No streamlit here, and torch, transformers and
ctranslate2 are imported inside the functions that use them: importing this module costs the app
nothing at start.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Protocol, cast

import numpy as np
from numpy.typing import NDArray

from attention_core.models.whisper.forward import encoder_pattern
from attention_core.models.whisper.model import WhisperModel
from references.text import Difference

F32 = NDArray[np.float32]
FRAME_S = 0.02  # one encoder frame
# How far our numbers may be from the references' (tests/core/test_whisper_exact.py uses the same):
# the encoder's output relative to its largest value (CTranslate2 runs its own kernels), attention
# weights absolute (they lie in [0, 1]).
TOL_ENCODER = 1e-3
TOL_ATTENTION = 1e-4


# Worst case 1 × Whisper tiny.en in float32 (150 MB).
@functools.lru_cache(maxsize=1)
def ct2_whisper(folder: str) -> Any:
    """CTranslate2's Whisper on the folder's model.bin, float32 on the CPU, one thread."""
    import ctranslate2  # type: ignore[import-untyped,unused-ignore]

    return ctranslate2.models.Whisper(folder, device="cpu", compute_type="float32", intra_threads=1)


def ct2_encode(model: WhisperModel, mel_ft: F32) -> F32:
    """CTranslate2's encoder output [1500, d] for one log-mel input [80, 3000]."""
    import ctranslate2  # type: ignore[import-untyped,unused-ignore]

    features = ctranslate2.StorageView.from_array(np.array(mel_ft[None], np.float32))
    out = ct2_whisper(str(model.path)).encode(features)
    return np.asarray(np.array(out)[0], np.float32)


def ct2_tokens(model: WhisperModel, mel_ft: F32, max_length: int = 448) -> list[int]:
    """CTranslate2's greedy text tokens after the model's prompt
    (<|startoftranscript|><|notimestamps|>)."""
    import ctranslate2  # type: ignore[import-untyped,unused-ignore]

    features = ctranslate2.StorageView.from_array(np.array(mel_ft[None], np.float32))
    result = ct2_whisper(str(model.path)).generate(
        features, [list(model.dims.prompt_ids)], beam_size=1, max_length=max_length
    )
    return [int(i) for i in result[0].sequences_ids[0]]


def _attn(prefix: str, w: Any, d: int) -> dict[str, F32]:
    """One attention's weights in transformers' names (q, k, v split from the fused rows)."""
    w_in, b_in = w.w_in_nd, w.b_in_n
    names = {}
    for i, kind in enumerate(("q", "k", "v")):
        names[f"{prefix}.{kind}_proj.weight"] = w_in[i * d : (i + 1) * d]
        if kind != "k":  # Whisper's key projection has no bias (CTranslate2 stores zeros)
            names[f"{prefix}.{kind}_proj.bias"] = b_in[i * d : (i + 1) * d]
    names[f"{prefix}.out_proj.weight"], names[f"{prefix}.out_proj.bias"] = w.w_o_dd, w.b_o_d
    ln = prefix.replace("self_attn", "self_attn_layer_norm").replace(
        "encoder_attn", "encoder_attn_layer_norm"
    )
    names[f"{ln}.weight"], names[f"{ln}.bias"] = w.norm_gamma_d, w.norm_beta_d
    return names


def _layer(prefix: str, lay: Any, d: int) -> dict[str, F32]:
    names = _attn(f"{prefix}.self_attn", lay.self_attn, d)
    if lay.cross_attn is not None:
        names.update(_attn(f"{prefix}.encoder_attn", lay.cross_attn, d))
    f = lay.ffn
    names[f"{prefix}.fc1.weight"], names[f"{prefix}.fc1.bias"] = f.w_up_fd, f.b_up_f
    names[f"{prefix}.fc2.weight"], names[f"{prefix}.fc2.bias"] = f.w_down_df, f.b_down_d
    names[f"{prefix}.final_layer_norm.weight"] = f.norm_gamma_d
    names[f"{prefix}.final_layer_norm.bias"] = f.norm_beta_d
    return names


def mapped_state(model: WhisperModel) -> dict[str, F32]:
    """model.bin's weights (as the engine read them) under transformers' names."""
    p, d = model.params, model.config.d_model
    names = {
        "model.encoder.conv1.weight": p.conv1_w_oik,
        "model.encoder.conv1.bias": p.conv1_b_o,
        "model.encoder.conv2.weight": p.conv2_w_oik,
        "model.encoder.conv2.bias": p.conv2_b_o,
        "model.encoder.embed_positions.weight": p.encoder_pos_td,
        "model.encoder.layer_norm.weight": p.encoder_norm[0],
        "model.encoder.layer_norm.bias": p.encoder_norm[1],
        "model.decoder.embed_tokens.weight": p.embed_vd,
        "model.decoder.embed_positions.weight": p.decoder_pos_td,
        "model.decoder.layer_norm.weight": p.decoder_norm[0],
        "model.decoder.layer_norm.bias": p.decoder_norm[1],
        "proj_out.weight": p.embed_vd,
    }
    for i, lay in enumerate(p.encoder_layers):
        names.update(_layer(f"model.encoder.layers.{i}", lay, d))
    for i, lay in enumerate(p.decoder_layers):
        names.update(_layer(f"model.decoder.layers.{i}", lay, d))
    return names


def _hf_config(model: WhisperModel) -> Any:
    from transformers import WhisperConfig

    cfg, dims, make = model.config, model.dims, cast(Any, WhisperConfig)  # kwargs typed narrower
    return make(
        vocab_size=cfg.vocab_size,
        num_mel_bins=dims.n_mels,
        encoder_layers=dims.n_encoder_layers,
        decoder_layers=cfg.n_layers,
        encoder_attention_heads=cfg.n_heads,
        decoder_attention_heads=cfg.n_heads,
        d_model=cfg.d_model,
        encoder_ffn_dim=cfg.d_ff,
        decoder_ffn_dim=cfg.d_ff,
        max_source_positions=dims.n_frames,
        max_target_positions=cfg.n_positions,
        activation_function="gelu",
        pad_token_id=dims.eot_id,
        bos_token_id=dims.eot_id,
        eos_token_id=dims.eot_id,
        decoder_start_token_id=dims.prompt_ids[0],
        attn_implementation="eager",
    )


# Worst case one model's modules: its weights are the engine's own arrays (no copy).
_HF: list[tuple[WhisperModel, Any]] = []


def hf_whisper(model: WhisperModel) -> Any:
    """transformers' Whisper with ``model``'s weights, eager attention, float32 (built once per
    loaded model). Built on the meta device and given the engine's arrays themselves
    (``assign=True``): no random init, no copy; nothing writes to them (inference only)."""
    if _HF and _HF[0][0] is model:
        return _HF[0][1]
    import torch
    from transformers import WhisperForConditionalGeneration

    with torch.device("meta"):
        hf: Any = WhisperForConditionalGeneration(_hf_config(model))
    hf.eval()
    with warnings.catch_warnings():  # the engine's arrays are read-only; torch only reads them
        warnings.filterwarnings("ignore", "The given NumPy array is not writable", UserWarning)
        state = {k: torch.from_numpy(v) for k, v in mapped_state(model).items()}
    hf.load_state_dict(state, strict=True, assign=True)  # raises on a name mapped wrong
    left = [n for n, t in [*hf.named_parameters(), *hf.named_buffers()] if t.is_meta]
    if left:
        raise ValueError(f"weights not mapped: {left}")
    _HF[:] = [(model, hf)]
    return hf


def hf_outputs(model: WhisperModel, mel_ft: F32, token_ids: tuple[int, ...]) -> Any:
    """transformers' outputs (encoder, decoder and cross attentions, hidden states) for the
    clip's log-mel and the decoder input ``token_ids``."""
    import torch

    with torch.no_grad():
        return hf_whisper(model)(
            input_features=torch.from_numpy(np.array(mel_ft[None], np.float32)),
            decoder_input_ids=torch.tensor([list(token_ids)]),
            output_attentions=True,
            output_hidden_states=True,
        )


def _worst(diff: NDArray[Any]) -> tuple[float, tuple[int, ...]]:
    at = tuple(int(i) for i in np.unravel_index(int(diff.argmax()), diff.shape))
    return float(diff[at]), at


def compare_encoder(ours_td: F32, theirs_td: F32) -> Difference:
    """The encoder's output against CTranslate2's, relative to its largest value."""
    diff = np.abs(np.asarray(ours_td, np.float64) - theirs_td)
    largest, (t, d) = _worst(diff)
    where = f"the frame at {t * FRAME_S:.2f} s, number {d} of {diff.shape[1]}"
    scale = float(np.abs(theirs_td).max())
    quantity = "encoder output (CTranslate2)"
    return Difference(
        quantity, largest, largest / scale, where, TOL_ENCODER, " times its largest number"
    )


def compare_decoder(ours: F32, theirs: F32, tokens: list[str], cross: bool) -> Difference:
    """Decoder attention [layer, head, token, key] against transformers': cross-attention
    (keys = 20 ms frames of the sound) or self-attention (keys = tokens)."""
    largest, (layer, head, q, k) = _worst(np.abs(np.asarray(ours, np.float64) - theirs))
    if cross:
        quantity = "cross-attention, every head (transformers)"
        key = f"the sound at {k * FRAME_S:.2f} s"
    else:
        quantity = "decoder self-attention, every head (transformers)"
        key = f"“{tokens[k]}”"
    where = f"layer {layer}, head {head}: “{tokens[q]}” attending to {key}"
    return Difference(quantity, largest, largest, where, TOL_ATTENTION)


def compare_encoder_self(model: WhisperModel, hidden_ltd: F32, theirs: list[Any]) -> Difference:
    """Every encoder layer's self-attention, recomputed from the stream entering it one layer at
    a time (54 MB each), against transformers' ``encoder_attentions`` (each dropped from
    ``theirs`` once compared)."""
    best: tuple[float, tuple[int, ...]] = (-1.0, (0, 0, 0, 0))
    for layer in range(len(theirs)):
        want, theirs[layer] = theirs[layer], None
        got = encoder_pattern(model, hidden_ltd, layer)
        largest, at = _worst(np.abs(got - want[0].numpy()))  # float32: weights in [0, 1]
        if largest > best[0]:
            best = (largest, (layer, *at))
    largest, (layer, head, q, k) = best
    where = (
        f"layer {layer}, head {head}: the frame at {q * FRAME_S:.2f} s attending to the one at "
        f"{k * FRAME_S:.2f} s"
    )
    quantity = "encoder self-attention, every head (transformers)"
    return Difference(quantity, largest, largest, where, TOL_ATTENTION)


class Clip(Protocol):
    """What the check reads of a heard clip (ui.listen.cache.Heard has it)."""

    @property
    def token_ids(self) -> tuple[int, ...]: ...  # prompt + text tokens
    @property
    def n_prompt(self) -> int: ...
    @property
    def mel_ft(self) -> F32: ...  # [80, 3000] the log-mel input
    @property
    def cross_pattern_lhqk(self) -> F32: ...  # [layers, heads, T, 1500]
    @property
    def self_pattern_lhqk(self) -> F32: ...  # [layers, heads, T, T]
    @property
    def encoder_hidden_ltd(self) -> F32: ...  # entering each encoder layer, then its output


def token_problem(ours: list[int], theirs: list[int], tokens: list[str]) -> str:
    """How CTranslate2's greedy transcript differs from ours ("" when it writes the same ids;
    ``tokens``: ours, as shown)."""
    if ours == theirs:
        return ""
    if len(ours) != len(theirs) and ours[: len(theirs)] == theirs[: len(ours)]:
        return f"it writes {len(theirs)} tokens where ours writes {len(ours)}"
    first = next(i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b)
    return f"its token {first} differs from ours (“{tokens[first]}”)"


def check_clip(
    model: WhisperModel, clip: Clip, tokens: list[str]
) -> tuple[str, tuple[Difference, ...]]:
    """The clip through CTranslate2 (tokens, encoder output) and transformers (every attention,
    on our tokens), against our numbers: why the tokens differ ("" when they do not), and the
    largest difference of each quantity. ``tokens``: every token (prompt included), as shown."""
    ours_text = list(clip.token_ids[clip.n_prompt :])
    problem = token_problem(ours_text, ct2_tokens(model, clip.mel_ft), tokens[clip.n_prompt :])
    encoder = compare_encoder(clip.encoder_hidden_ltd[-1], ct2_encode(model, clip.mel_ft))
    out = hf_outputs(model, clip.mel_ft, clip.token_ids)
    cross = np.stack([a[0].numpy() for a in out.cross_attentions])
    self_ = np.stack([a[0].numpy() for a in out.decoder_attentions])
    encoder_self = list(out.encoder_attentions)  # 4 × 54 MB: freed layer by layer below
    del out
    found = (
        encoder,
        compare_decoder(clip.cross_pattern_lhqk, cross, tokens, cross=True),
        compare_decoder(clip.self_pattern_lhqk, self_, tokens, cross=False),
        compare_encoder_self(model, clip.encoder_hidden_ltd, encoder_self),
    )
    return problem, found
