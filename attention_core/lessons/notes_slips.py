"""The numbers behind the notes' slips, read from the model itself.

- "The value matrix translates E into a higher dimensional context space": a head's value vector
  has d_head numbers, fewer than a token's d_model (d_head × heads = d_model in both text models).
- "static embeddings from Word2Vec or GloVe": the model's embedding table is its own, one row per
  entry of its own vocabulary of word pieces (a word such as "Wazowski" is several rows), each row
  d_model numbers wide, trained with the rest of the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_core.core.config import ModelConfig
from attention_core.core.family import Trace

PIECES_WORD = "Wazowski"  # a name the notes use, that both models read as several pieces


@dataclass(frozen=True)
class ModelSizes:
    """The sizes the slips are corrected with."""

    d_model: int  # numbers per token vector (E)
    d_head: int  # numbers per value vector of one head (V)
    n_heads: int  # heads per layer
    n_layers: int
    vocab: int  # rows of the embedding table: the model's own word pieces
    pieces: tuple[str, ...]  # how the model splits ``PIECES_WORD`` into rows of its table

    @property
    def table_shape(self) -> tuple[int, int]:
        return (self.vocab, self.d_model)

    @property
    def value_share(self) -> float:
        """A value vector's size as a share of a token vector's."""
        return self.d_head / self.d_model


def model_sizes(config: ModelConfig, word_trace: Trace) -> ModelSizes:
    """The model's sizes, with ``word_trace`` (a pass over ``PIECES_WORD`` alone) giving the
    pieces its vocabulary splits the word into ([CLS]/[SEP] left out)."""
    tokens = word_trace.tokens.tokens
    special = word_trace.tokens.special_t
    pieces = tuple(tok for tok, sp in zip(tokens, special, strict=True) if not sp)
    return ModelSizes(
        config.d_model, config.d_head, config.n_heads, config.n_layers, config.vocab_size, pieces
    )
