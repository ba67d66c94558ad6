"""The one config every family fills: sizes, positions, what the model offers.

Each family's loader reads its own files into a ``ModelConfig``; the pages, methods and the
server read only this. A field that one family lacks has the value that says so (``n_kv_heads``
equal to ``n_heads``, ``rope_theta`` 0.0, ``has_lm_head`` False)."""

from __future__ import annotations

from dataclasses import dataclass


class ModelLoadError(ValueError):
    """A model's files are missing, incomplete or not of a family the engine runs."""


@dataclass(frozen=True)
class ModelConfig:
    """What every page, method and pass needs to know about a model, whatever its family: the
    family's loader fills it from the model's own files. A page never writes 6 or 12: it asks
    this."""

    name: str  # display name (folder name or the default's name)
    n_layers: int  # encoder blocks
    n_heads: int  # attention heads per block
    d_model: int  # residual stream width
    d_head: int  # per-head query/key/value width (d_k)
    d_ff: int  # feed-forward hidden width
    n_positions: int  # learned position embeddings, the longest input
    vocab_size: int  # WordPiece vocabulary
    layer_norm_eps: float  # LayerNorm epsilon
    pooling: str = ""  # sentence pooling: "mean" or "cls" ("": no sentence vector)
    normalize: bool = False  # L2-normalize the pooled sentence embedding
    max_seq_length: int = 0  # where sentence-transformers truncates before pooling; 0: n_positions
    key: str = "minilm"  # registry key ("minilm", "smollm2") or the folder/file path given
    family: str = "bert"  # the registry's name of the family that runs it (attention_core.models)
    n_kv_heads: int = 0  # key/value heads (GQA: query head h reads h // (n_heads/n_kv_heads));
    # 0 means n_heads (set in __post_init__), as every BERT has
    causal: bool = False  # the model's own attention is causal (a decoder)
    positions: str = "learned"  # "learned" (added embeddings) or "rotary" (RoPE on q and k)
    rope_theta: float = 0.0  # RoPE base (0.0 without rotary positions)
    has_lm_head: bool = False  # predicts the next token (vocabulary logits)
    has_sentence_embedding: bool = True  # pools a sentence vector (sentence-transformers)
    max_tokens: int = 0  # longest input the engine runs (tokenize cuts there); 0: n_positions
    quantization: str = ""  # how the weights are stored on disk ("" float, "Q4_1")
    special_tokens: bool = True  # the tokenizer wraps a text in [CLS] … [SEP]
    attention_bias: bool = True  # the Q, K, V projections add a bias (BERT's do, Llama's not)
    post_norm: bool = True  # LayerNorm after the residual add (BERT), not before (Llama, Whisper)
    final_norm: str = ""  # the norm the last hidden state has been through after the last layer
    # ("RMSNorm" SmolLM2, "LayerNorm" Whisper's decoder; "": none, a post-norm encoder's last
    # state is its last layer's output)
    audio: bool = False  # reads sound: the layers are a decoder's over an audio encoder

    def __post_init__(self) -> None:
        if self.n_kv_heads == 0:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        if self.max_tokens == 0:
            object.__setattr__(self, "max_tokens", self.n_positions)
        if self.max_seq_length == 0:
            object.__setattr__(self, "max_seq_length", self.n_positions)
