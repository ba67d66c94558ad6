"""The one interface a model family meets the rest of the engine by, and the trace it returns.

A family (BERT, Llama, Whisper, a test's GPT-2) is one folder under ``attention_core/models/``
with an object that satisfies ``Family``: it says which names and paths it loads, loads a model
or only its config, tokenizes text its own way, runs a pass into a trace, sizes that trace before
it is computed, and says what it offers. ``attention_core.models`` holds the registry, the only
place that picks a family; methods and pages read the ``Trace`` fields below and the config's
flags, never the family's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeGuard, TypeVar

from attention_core.core.config import ModelConfig
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf


@dataclass(frozen=True)
class Offers:
    """What a family's models can show beyond attention itself."""

    causal: bool  # its own attention is causal (a decoder): the mask cannot be switched off
    sentence_vector: bool  # pools a sentence embedding (sentence-transformers)
    next_token: bool  # predicts the next token: generation, the logit lens
    audio: bool  # reads sound (its tokens are written by a decoder over an audio encoder)


class Stack(Protocol):
    """Per-layer arrays indexed ``[layer]`` or ``[layer, head]``: a NumPy array, or a decoder's
    layers computed when first read (``models.llama.cache.LayerStack``)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __getitem__(self, key: Any) -> Any: ...
    def __len__(self) -> int: ...


class Trace(Protocol):
    """The fields every method reads from a text family's pass. Rows of a pattern are queries,
    columns keys; ``hidden_ltd[l]`` enters layer ``l``."""

    @property
    def tokens(self) -> Tokens: ...
    @property
    def config(self) -> ModelConfig: ...
    @property
    def whatif(self) -> WhatIf: ...
    @property
    def n_tokens(self) -> int: ...
    @property
    def word_td(self) -> Any: ...  # the token embeddings the first layer's stream starts from
    @property
    def hidden_ltd(self) -> Any: ...  # [l+1, t, d]
    @property
    def delta_ltd(self) -> Any: ...  # the attention update ΔE added to the residual
    @property
    def ffn_out_ltd(self) -> Any: ...  # the feed-forward's update
    @property
    def value_norm_lhk(self) -> Any: ...  # ‖v_k · W_O,h‖ per layer, head and key
    @property
    def w_o_lhed(self) -> Any: ...  # each head's slice of W_O
    @property
    def q_lhqe(self) -> Stack: ...
    @property
    def k_lhke(self) -> Stack: ...
    @property
    def v_lhke(self) -> Stack: ...
    @property
    def scores_lhqk(self) -> Stack: ...
    @property
    def pattern_lhqk(self) -> Stack: ...
    @property
    def z_lhqe(self) -> Stack: ...

    def head_delta_hd(self, layer: int, token: int) -> Any: ...


N_TOP = 10  # the likeliest next tokens a NextTokenTrace keeps per position


class NextTokenTrace(Trace, Protocol):
    """A trace of a model that predicts the next token (``config.has_lm_head``): what the
    logit lens and the knock-out's prediction measures read."""

    @property
    def next_top_ids_tk(self) -> Any: ...  # each position's 10 likeliest next tokens
    @property
    def next_top_probs_tk(self) -> Any: ...  # and their probabilities

    def next_probs_v(self, position: int) -> Any:
        """The whole next-token distribution after ``position``."""
        ...

    def next_probs_tv(self, start: int, stop: int) -> Any:
        """The next-token distributions after positions ``start`` .. ``stop - 1`` [t, vocab]."""
        ...

    def unembed_top(self, x_pd: Any, normed: bool) -> tuple[Any, Any]:
        """The 10 likeliest next tokens of residual rows ``x_pd`` and their probabilities, after
        the model's final norm unless ``normed`` (the logit lens)."""
        ...

    def next_probs_from(self, layer: int, resid_btd: Any, position: int) -> Any:
        """Next-token distributions [b, vocab] at ``position`` of variants of this pass whose
        residual stream after ``layer``'s attention is ``resid_btd`` (each head knocked out
        alone, without rerunning the layers below)."""
        ...

    def token_text(self, token_id: int) -> str: ...


class SentenceTrace(Trace, Protocol):
    """A trace of an encoder that pools a sentence vector (``config.has_sentence_embedding``)."""

    @property
    def sentence_embedding_d(self) -> Any: ...
    @property
    def attn_out_ltd(self) -> Any: ...  # LayerNorm(resid + ΔE), a post-norm block's middle
    @property
    def head_delta_lhtd(self) -> Any: ...  # each head's own update, computed when asked


def predicts_next(trace: Trace) -> TypeGuard[NextTokenTrace]:
    """True when ``trace``'s model predicts the next token: its trace holds the predictions."""
    return trace.config.has_lm_head


def pools_sentence(trace: Trace) -> TypeGuard[SentenceTrace]:
    """True when ``trace``'s model pools a sentence vector (an encoder: BERT's)."""
    return trace.config.has_sentence_embedding


class HasConfig(Protocol):
    """A model or a trace: either says which config (and so which family) it is of."""

    @property
    def config(self) -> ModelConfig: ...


class LoadedModel(HasConfig, Protocol):
    """A loaded model of any family: its config is the common one; its weights (``params``, laid
    out by its family) and tokenizer (a ``tokenizers.Tokenizer``) are read by its family's code
    and by the reference checks."""

    @property
    def params(self) -> Any: ...
    @property
    def tokenizer(self) -> Any: ...
    @property
    def path(self) -> Path: ...


M = TypeVar("M", bound=LoadedModel, contravariant=True)


class Family(Protocol[M]):
    """One model family: everything the registry asks of it."""

    @property
    def name(self) -> str: ...  # what ``ModelConfig.family`` says of its models
    @property
    def offers(self) -> Offers: ...
    @property
    def keys(self) -> tuple[str, ...]: ...  # the packaged models it loads by name

    def claims(self, path: str) -> bool:
        """True for a path (not a packaged key) that this family's loader reads."""
        ...

    def load(self, path: str) -> LoadedModel: ...
    def load_config(self, path: str) -> ModelConfig: ...
    def tokenize(self, model: M, text: str, max_tokens: int | None) -> Tokens: ...
    def run(self, model: M, tokens: Tokens, whatif: WhatIf) -> Any: ...
    def trace_sentence(self, model: M, text: str, whatif: WhatIf, max_tokens: int | None) -> Any:
        """Tokenize and run: what a page asks for a sentence (a family may do more than
        ``run(tokenize(...))``, e.g. BERT's sentence vector past its pooling window)."""
        ...

    def trace_nbytes(self, config: ModelConfig, n_tokens: int) -> int: ...
