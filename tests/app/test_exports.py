"""Exports bounded: written an array at a time, their size known before the click, parts past
the limit, one at a time per visitor, and a button that holds the sentence's key, not its trace."""

from __future__ import annotations

import io
import threading
import tracemalloc

import numpy as np
import pytest

from attention_core import trace_sentence
from attention_core.export import export_nbytes, plan, trace_arrays, write_npz
from attention_core.rollout import trace_rollout
from server.budget import Busy
from ui import downloads

LONG = " ".join(f"Sentence {i} says something about rivers, banks and boats." for i in range(60))


def _load(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data)) as npz:
        return {key: npz[key] for key in npz.files}


@pytest.fixture(scope="module")
def decoder_trace(smollm2):
    return trace_sentence(smollm2, " ".join(LONG.split()[:160]))


def test_the_streamed_file_holds_the_documented_keys_and_arrays(decoder_trace):
    entries = plan(decoder_trace)
    out = io.BytesIO()
    write_npz(entries, out)
    got, whole = _load(out.getvalue()), trace_arrays(decoder_trace)
    assert set(got) == set(whole) >= {"pattern", "scores", "norm_weighted", "hidden", "rollout"}
    for key, array in whole.items():
        np.testing.assert_array_equal(got[key], array, err_msg=key)
    assert export_nbytes(entries) == sum(a.nbytes for a in got.values())  # said before: exact


def test_a_decoder_export_never_holds_its_maps_whole(decoder_trace):
    entries = plan(decoder_trace)
    one_map = decoder_trace.pattern_lhqk[0].nbytes * decoder_trace.config.n_layers
    for layer in range(decoder_trace.config.n_layers):  # the trace's own cache full first (its
        decoder_trace.layer(layer)  # growth is the store's count, not the writer's)
    trace_rollout(decoder_trace)
    tracemalloc.start()
    try:
        write_npz(entries, _Sink())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert export_nbytes(entries) > 3 * one_map
    # a layer at a time, never [L, h, t, t]: beside the layers the trace's own cache holds
    # (refilled as they are written, and counted by the store), the logit lens's blocks of
    # logits (44 MB here) are the most the writer holds
    assert peak - decoder_trace._cache.nbytes < one_map, (peak, one_map)


class _Sink(io.RawIOBase):
    """A file that keeps nothing (the test measures the writer, not the file)."""

    def __init__(self) -> None:
        self.at = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        self.at += len(memoryview(data).cast("B"))
        return len(memoryview(data).cast("B"))

    def tell(self) -> int:
        return self.at

    def seekable(self) -> bool:
        return False


def test_parts_hold_what_they_say(decoder_trace):
    stream = _load(_bytes(plan(decoder_trace, "stream")))
    assert not {"pattern", "scores", "norm_weighted"} & set(stream) and "hidden" in stream
    layer = _load(_bytes(plan(decoder_trace, "layer", 3)))
    assert int(layer["layer"]) == 3 and "hidden" not in layer
    np.testing.assert_array_equal(layer["pattern"][0], decoder_trace.pattern_lhqk[3])
    assert layer["scores"].shape == (1, *decoder_trace.scores_lhqk[3].shape)


def _bytes(entries) -> bytes:
    out = io.BytesIO()
    write_npz(entries, out)
    return out.getvalue()


def test_the_button_holds_the_key_and_fetches_the_trace_on_click():
    data = downloads._on_click("minilm", "The river bank was muddy.", "all", 0)
    held = [cell.cell_contents for cell in data.__closure__ or ()]
    assert all(isinstance(value, str | int) for value in held), held
    got = _load(data())
    assert list(got["tokens"][:3]) == ["[CLS]", "the", "river"] and got["pattern"].ndim == 4


def test_one_export_at_a_time_per_visitor():
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with downloads.one_per_visitor("visitor"):
            inside.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(10)
        with pytest.raises(Busy, match="still being written"):
            downloads.export_bytes("minilm", "Hello there.", "all", 0, "visitor")
        assert _load(downloads.export_bytes("minilm", "Hello there.", "all", 0, "other"))
    finally:
        release.set()
        holder.join(10)
    assert _load(downloads.export_bytes("minilm", "Hello there.", "all", 0, "visitor"))


def test_a_whole_long_decoder_trace_is_refused_and_its_parts_fit():
    with pytest.raises(Busy, match=r"over the 256\.0 MB limit"):
        downloads.export_bytes("smollm2", LONG, "all", 0, "v")
    assert len(_load(downloads.export_bytes("smollm2", LONG, "layer", 29, "v"))["pattern"]) == 1
    trace = downloads.get_trace("smollm2", LONG)
    assert export_nbytes(plan(trace)) > downloads.NPZ_LIMIT
    assert export_nbytes(plan(trace, "stream")) <= downloads.NPZ_LIMIT
    assert downloads.trace_store().other == 0
