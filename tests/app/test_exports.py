"""Exports bounded: written an array at a time, their size known before the click, parts past
the limit, one at a time per visitor, and a button that holds the sentence's key, not its trace."""

from __future__ import annotations

import io
import threading
import tracemalloc

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from attention_core import trace_sentence
from attention_core.methods.export import export_nbytes, plan, trace_arrays, write_npz
from attention_core.methods.rollout import trace_rollout
from server import exports
from server.budget import Busy
from server.exports import EXPORTS, ExportFiles
from tests.app.conftest import open_page
from tests.app.test_page_pattern import open_numbers
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


def _file(model, text, part, layer, session) -> dict[str, np.ndarray]:
    path = downloads.export_file(model, text, part, layer, session)
    try:
        return _load(path.read_bytes())
    finally:
        path.unlink()


def test_prepare_writes_the_file_and_the_page_links_to_it_once():
    at = open_numbers(open_page("pattern", s="The river bank was muddy."))
    [prepare] = [b for b in at.button if b.label.startswith("Prepare All intermediates")]
    assert "MB)" in prepare.label  # the size, said before the click
    prepare.click().run()
    assert not at.exception and not at.warning
    [link] = at.get("link_button")
    file_id = link.proto.url.rsplit("/", 1)[1]
    assert link.proto.url == f"api/export/{file_id}"  # relative: under any base path
    prepared = EXPORTS.take(file_id, consume=False)
    assert prepared is not None and prepared.name == "attention_trace.npz"
    got = _load(prepared.path.read_bytes())
    assert list(got["tokens"][:3]) == ["[CLS]", "the", "river"] and got["pattern"].ndim == 4
    assert EXPORTS.take(file_id) is not None and EXPORTS.take(file_id) is None
    prepared.path.unlink()
    held = at.session_state["pattern_npz_file"]  # what the page keeps: an id and the key
    assert all(isinstance(v, str | int) for v in (held[0], *held[1])), held


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
            downloads.export_file("minilm", "Hello there.", "all", 0, "visitor")
        assert _file("minilm", "Hello there.", "all", 0, "other")
    finally:
        release.set()
        holder.join(10)
    assert _file("minilm", "Hello there.", "all", 0, "visitor")


def test_a_whole_long_decoder_trace_is_refused_and_its_parts_fit():
    with pytest.raises(Busy, match=r"over the 256\.0 MB limit"):
        downloads.export_file("smollm2", LONG, "all", 0, "v")
    assert len(_file("smollm2", LONG, "layer", 29, "v")["pattern"]) == 1
    trace = downloads.get_trace("smollm2", LONG)
    assert export_nbytes(plan(trace)) > downloads.NPZ_LIMIT
    assert export_nbytes(plan(trace, "stream")) <= downloads.NPZ_LIMIT
    assert downloads.trace_store().other == 0


def _waiting(tmp_path, name: str, size: int = 10):
    path = tmp_path / name
    path.write_bytes(b"x" * size)
    return path


def test_the_route_streams_a_prepared_file_once_then_deletes_it(tmp_path):
    files = ExportFiles()
    path = _waiting(tmp_path, "a.npz", 1000)
    file_id = files.add(path, "attention_trace.npz")
    with TestClient(Starlette(routes=exports.routes(files))) as client:
        assert client.head(f"{exports.EXPORT_PATH}/{file_id}").status_code == 200  # not taken
        got = client.get(f"{exports.EXPORT_PATH}/{file_id}")
        assert got.status_code == 200 and got.content == b"x" * 1000
        assert 'filename="attention_trace.npz"' in got.headers["content-disposition"]
        assert got.headers["content-encoding"] == "identity"
        assert not path.exists()
        again = client.get(f"{exports.EXPORT_PATH}/{file_id}")
        assert again.status_code == 404 and again.json() == {"error": exports.GONE}
        assert client.get(f"{exports.EXPORT_PATH}/guessed").status_code == 404


def test_waiting_files_are_bounded_in_number_bytes_and_age(tmp_path):
    files = ExportFiles(ttl_s=60, max_files=2, max_disk=25)
    first, second, third = (_waiting(tmp_path, f"{i}.npz") for i in range(3))
    ids = [files.add(path, "f.npz", now=0.0) for path in (first, second, third)]
    assert len(files) == 2 and not first.exists()  # the oldest out for the third
    assert files.take(ids[0]) is None
    big = _waiting(tmp_path, "big.npz", 20)
    files.add(big, "f.npz", now=1.0)  # 10 + 10 + 20 bytes > 25: the oldest go
    assert not second.exists() and not third.exists() and big.exists() and len(files) == 1
    assert files.take("nothing", now=100.0) is None  # past the age: expired and deleted
    assert not big.exists() and len(files) == 0
