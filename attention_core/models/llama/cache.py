"""What a decoder trace holds of its layers: ``LayerStack``, one per-layer array of every layer
computed a layer at a time when indexed, and ``LayerCache``, the thread-safe LRU of computed
layers (and of arrays derived from them once, such as the rollout) behind it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from attention_core.models.llama.layers import LlamaLayer

if TYPE_CHECKING:
    from attention_core.models.llama.model import LlamaModel

F32 = NDArray[np.float32]


class LayerStack:
    """One per-layer array of every layer, [l, ...], computed a layer at a time when indexed:
    ``stack[l]``, ``stack[l, h]`` (one head: ``LlamaLayer.head``, so a head's raw scores are
    computed alone), ``stack[l][h, q]``, ``len``, ``shape``; ``np.asarray(stack)`` computes
    every layer (export, tests). Returned arrays are read-only."""

    def __init__(self, get: Callable[[int], LlamaLayer], name: str, shape: tuple[int, ...]):
        self._get, self._name, self.shape = get, name, shape
        self.dtype, self.ndim = np.dtype(np.float32), len(shape)

    def __len__(self) -> int:
        return self.shape[0]

    def _one(self, layer: int) -> F32:
        return getattr(self._get(range(len(self))[layer]), self._name)

    def __getitem__(self, key: Any) -> Any:
        first, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        if isinstance(first, int | np.integer):
            if rest and isinstance(rest[0], int | np.integer):  # one head: compute only it
                layer = self._get(range(len(self))[int(first)])
                arr = layer.head(self._name, int(rest[0]))
                return arr[rest[1:]] if rest[1:] else arr
            arr = self._one(int(first))
            return arr[rest] if rest else arr
        layers = range(len(self))[first] if isinstance(first, slice) else np.asarray(first)
        stacked = np.stack([self._one(int(i)) for i in layers])
        return stacked[(slice(None), *rest)] if rest else stacked

    def __iter__(self) -> Iterator[F32]:
        return (self._one(i) for i in range(len(self)))

    def __array__(self, dtype: Any = None, copy: Any = None) -> F32:
        stacked = np.stack(list(self))
        return stacked if dtype is None else stacked.astype(dtype)


class LayerCache:
    """Thread-safe LRU of computed layers, ``capacity`` of them at most. It also holds the model
    (not a dataclass field of the trace, so code that walks a trace's fields for its arrays,
    as the app's trace store does, never counts or touches the model's weights), and ``kept``,
    the arrays ``compute`` reads besides the model (RoPE tables, key mask), so that ``nbytes``
    is every byte the cache holds. It fills after the trace is stored: ``watch(callback)``
    has ``callback()`` called after each change of what it holds (outside its locks), so a
    store counting it can count it again."""

    def __init__(
        self,
        model: LlamaModel,
        compute: Callable[[int], LlamaLayer],
        capacity: int,
        kept: tuple[NDArray[Any], ...] = (),
    ) -> None:
        self.model, self._compute, self.capacity = model, compute, max(1, capacity)
        self.kept = kept
        self._layers: OrderedDict[int, LlamaLayer] = OrderedDict()
        self._derived: dict[str, NDArray[Any]] = {}
        self._lock = threading.Lock()
        self._derive_lock = threading.Lock()  # a derivation reads layers: another lock
        self._watcher: Callable[[], None] | None = None

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every change of the layers or derived arrays held."""
        self._watcher = callback

    def changed(self) -> None:
        """Tell the watcher that what a held layer holds has grown (its updates computed)."""
        self._changed()

    def _changed(self) -> None:
        watcher = self._watcher
        if watcher is not None:
            watcher()

    def __call__(self, layer: int) -> LlamaLayer:
        with self._lock:
            if layer in self._layers:
                self._layers.move_to_end(layer)
                return self._layers[layer]
            while len(self._layers) >= self.capacity:
                self._layers.popitem(last=False)
            self._layers[layer] = computed = self._compute(layer)
        self._changed()
        return computed

    def derived(self, name: str, compute: Callable[[], F32]) -> F32:
        """An array computed from the trace once and kept (e.g. the rollout), read-only."""
        return self.derived_all((name,), lambda: (compute(),))[0]

    def derived_all(
        self, names: tuple[str, ...], compute: Callable[[], tuple[NDArray[Any], ...]]
    ) -> tuple[NDArray[Any], ...]:
        """Arrays computed together once (e.g. the next-token ids and their probabilities) and
        kept under ``names``, read-only."""
        with self._derive_lock:
            if names[0] in self._derived:
                return tuple(self._derived[name] for name in names)
            arrays = compute()
            for name, array in zip(names, arrays, strict=True):
                array.flags.writeable = False
                self._derived[name] = array
        self._changed()
        return arrays

    def arrays(self) -> list[NDArray[Any]]:
        """Every array held: each cached layer's, the derived ones, ``kept``."""
        with self._lock:
            layers = list(self._layers.values())
        held = [array for layer in layers for array in layer.arrays()]
        return held + list(self._derived.values()) + list(self.kept)

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays())
