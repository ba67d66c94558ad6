"""How Whisper writes one token (the tour's step after "Decoder and cross-attention"): one
decoder block taken in order on a transcribed clip, for the position that wrote a chosen token.

Masked self-attention over the tokens written so far (its row, zero after it), cross-attention
over the encoder's 1500 vectors (where it looks, how much weight lies on the sound), what each
sub-layer adds to the vector, then the final LayerNorm, the linear layer to one score per
vocabulary entry and softmax: the next token's probabilities. And the count behind "computed
once": the cross-attention's keys and values are made from the encoder's output once per clip
and read by every decoding step (``models.whisper.generate.transcribe``).

Every number comes from the engine's pass; tests/core/test_decoder_block.py checks them against
transformers' WhisperForConditionalGeneration with model.bin's weights (attentions, module
outputs read with hooks, logits, its cross-attention cache) and CTranslate2's tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from attention_core.models.whisper.forward import decode_tokens, memory_of
from attention_core.models.whisper.generate import logits_v
from attention_core.models.whisper.model import WhisperModel
from attention_core.models.whisper.sublayers import LayerUpdates, layer_updates

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
TOP = 5  # next-token probabilities shown

# What the special tokens a learner meets are, in plain words (Whisper's own names).
SPECIAL_WORDS = {
    "<|startoftranscript|>": "Whisper's start token: every transcript begins with it",
    "<|notimestamps|>": "a task token: write the words without timestamps",
    "<|transcribe|>": "a task token: write down what is said",
    "<|translate|>": "a task token: write it in English",
    "<|en|>": "a task token: the speech is in English",
    "<|endoftext|>": "the end token: Whisper stops writing",
}


@dataclass(frozen=True)
class Sizes:
    """Sizes (Euclidean lengths) of one token's vector through one decoder layer."""

    stream_in: float  # the vector entering the layer
    self_attention: float  # masked self-attention's update
    cross_attention: float  # cross-attention's update
    feed_forward: float  # the feed-forward's update
    stream_out: float  # the vector leaving the layer


@dataclass(frozen=True)
class Writing:
    """One written token followed through one decoder layer and head, then to the next-token
    probabilities; positions index ``token_ids`` (prompt + text)."""

    token_ids: tuple[int, ...]
    n_prompt: int
    written: int  # the position of the written token
    layer: int
    head: int
    self_row_k: F32  # masked self-attention of the writing row over every token ([T]; 0 after)
    cross_row_k: F32  # its cross-attention over the encoder's frames, 20 ms each ([1500])
    span: tuple[int, int]  # the frames that hold the sound (half-open)
    sizes: Sizes
    last_size: float  # the vector after the last block, before the final LayerNorm
    final_size: float  # after the final LayerNorm
    n_vocab: int  # scores the linear layer gives: one per vocabulary entry
    top_ids: tuple[int, ...]  # the TOP most probable next tokens, most probable first
    top_p: F64  # their probabilities (softmax over every vocabulary entry, float64)
    allowed_id: int  # the most probable token Whisper's decoding rules allow here
    n_steps: int  # decoding steps that read the same keys and values (text tokens + end)
    kv_shape: tuple[int, int, int]  # (decoder layers, encoder frames, d_model): keys, values

    @property
    def row(self) -> int:
        """The position that wrote the token: the one just before it (its vector asks)."""
        return self.written - 1

    @property
    def written_id(self) -> int:
        return self.token_ids[self.written]

    @property
    def after_max(self) -> float:
        """The largest self-attention weight on a token after the writing row (0: masked)."""
        return float(self.self_row_k[self.row + 1 :].max(initial=0.0))

    @property
    def self_sum(self) -> float:
        return float(self.self_row_k.sum(dtype=np.float64))

    @property
    def peak_frame(self) -> int:
        """The 20 ms frame the cross-attention row weighs most."""
        return int(np.argmax(self.cross_row_k))

    @property
    def in_sound(self) -> float:
        """The cross-attention weight on the frames that hold the sound."""
        return float(self.cross_row_k[self.span[0] : self.span[1]].sum(dtype=np.float64))

    @property
    def cross_sum(self) -> float:
        return float(self.cross_row_k.sum(dtype=np.float64))

    def role(self, i: int, name: str) -> str:
        """What token ``i`` (``name``: as the vocabulary spells it) is, in plain words."""
        if name in SPECIAL_WORDS:
            return SPECIAL_WORDS[name]
        if i == self.row:
            return "itself: the token written last"
        if i < self.row:
            return "written earlier"
        return "being written (masked)" if i == self.written else "not written yet (masked)"


def _rule_choice(model: WhisperModel, scores_v: F64, first: bool) -> int:
    """The token greedy decoding picks from ``scores_v``: suppressed ids never, the begin
    ones (a bare space, the end token) not at the first step (``generate.greedy``'s rules)."""
    allowed = scores_v.copy()
    allowed[list(model.dims.suppress_ids)] = -np.inf
    if first:
        allowed[list(model.dims.suppress_ids_begin)] = -np.inf
    return int(np.argmax(allowed))


def logits_of(model: WhisperModel, final_d: F32) -> F64:
    """The linear layer's scores for one vector after the final LayerNorm, one per vocabulary
    entry (the engine's ``logits_v``: the tied token table), as float64 for softmax."""
    return logits_v(model, final_d).astype(np.float64)


def _probs(scores_v: F64) -> F64:
    exp = np.exp(scores_v - scores_v.max())
    return exp / exp.sum()


def _sizes(stream_d: F32, ups: LayerUpdates, row: int) -> Sizes:
    s, c, f = (float(np.linalg.norm(u[row])) for u in (ups.self_td, ups.cross_td, ups.ffn_td))
    return Sizes(float(np.linalg.norm(stream_d)), s, c, f, float(np.linalg.norm(ups.out_td[row])))


def _check(model: WhisperModel, n_ids: int, n_prompt: int, written: int, head: int) -> None:
    """Refuse a token that is not a written one, or a head the model does not have."""
    if not 0 < n_prompt < n_ids:
        raise ValueError(f"need 0 < n_prompt < {n_ids} tokens, got n_prompt {n_prompt}")
    if not n_prompt <= written < n_ids:
        raise ValueError(f"written must be a text token in {n_prompt}..{n_ids - 1}, got {written}")
    if not 0 <= head < model.config.n_heads:
        raise ValueError(f"head {head} is outside 0..{model.config.n_heads - 1}")


def writing(
    model: WhisperModel,
    audio_kd: F32,
    token_ids: tuple[int, ...],
    n_prompt: int,
    written: int,
    where: tuple[int, int],
    span: tuple[int, int],
) -> Writing:
    """The token at ``written`` (a text token of ``token_ids``, after ``n_prompt`` prompt
    tokens) as decoder layer, head ``where`` saw it while writing it, on the encoder's output
    ``audio_kd`` [1500, d]; ``span``: the frames that hold the sound."""
    layer, head = where
    _check(model, len(token_ids), n_prompt, written, head)
    memory = memory_of(model, audio_kd)
    passed = decode_tokens(model, list(token_ids), memory)  # every row at once, causal
    row, last = written - 1, model.config.n_layers - 1
    ups = layer_updates(model, passed.hidden_ltd[layer], layer, memory[layer])
    out_td = (
        ups.out_td
        if layer == last
        else layer_updates(model, passed.hidden_ltd[last], last, memory[last]).out_td
    )
    final_td = passed.hidden_ltd[-1]
    scores_v = logits_of(model, final_td[row])
    probs = _probs(scores_v)
    top = np.argsort(-probs, kind="stable")[:TOP]
    ends = _rule_choice(model, logits_of(model, final_td[-1]), first=False) == model.dims.eot_id
    n_text = len(token_ids) - n_prompt
    return Writing(
        token_ids=tuple(token_ids),
        n_prompt=n_prompt,
        written=written,
        layer=layer,
        head=head,
        self_row_k=np.array(passed.self_pattern_lhqk[layer][head, row]),
        cross_row_k=np.array(passed.cross_pattern_lhqk[layer][head, row]),
        span=span,
        sizes=_sizes(passed.hidden_ltd[layer][row], ups, row),
        last_size=float(np.linalg.norm(out_td[row])),
        final_size=float(np.linalg.norm(final_td[row])),
        n_vocab=int(model.params.embed_vd.shape[0]),
        top_ids=tuple(int(i) for i in top),
        top_p=probs[top],
        allowed_id=_rule_choice(model, scores_v, row == n_prompt - 1),
        n_steps=n_text + int(ends),
        kv_shape=(len(memory), audio_kd.shape[0], model.config.d_model),
    )
