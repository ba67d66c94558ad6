"""Streamlit's page files answered from memory (server/static_cache.py): the bytes Streamlit's own
static handler would send, gzipped when the browser takes gzip, 304 for a version it holds,
nothing for HEAD's body, and every request that is not one of those files handed on untouched.
The files are Streamlit's real ones, from the installed package."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from streamlit import file_util

from server.static_cache import StaticCache

ROOT = Path(file_util.get_static_dir())


def _inner(request):
    return PlainTextResponse("inner", status_code=404)


@pytest.fixture(scope="module")
def client():
    app = Starlette(
        routes=[Route("/{path:path}", _inner, methods=["GET", "HEAD"])],
        middleware=[Middleware(StaticCache)],
    )
    return TestClient(app)


@pytest.fixture(scope="module")
def bundle() -> Path:
    """Streamlit's largest JavaScript file: the page's main bundle."""
    return max((ROOT / "static" / "js").glob("*.js"), key=lambda p: p.stat().st_size)


def test_a_file_is_sent_as_it_is_on_disk_and_gzipped_when_asked(client, bundle):
    url = "/" + bundle.relative_to(ROOT).as_posix()
    plain = client.get(url, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and plain.content == bundle.read_bytes()
    assert "content-encoding" not in plain.headers
    assert plain.headers["content-type"].startswith("text/javascript")
    assert "immutable" in plain.headers["cache-control"]
    zipped = client.get(url, headers={"Accept-Encoding": "gzip, deflate"})
    assert zipped.headers["content-encoding"] == "gzip"  # httpx decodes it: the same bytes
    assert zipped.content == bundle.read_bytes()
    assert int(zipped.headers["content-length"]) < len(bundle.read_bytes()) // 2


def test_a_held_version_is_304_and_head_has_no_body(client, bundle):
    url = "/" + bundle.relative_to(ROOT).as_posix()
    etag = client.get(url).headers["etag"]
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    head = client.head(url)
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) > 0


@pytest.mark.parametrize(
    "url",
    [
        "/static/js/no-such-file.js",
        "/static/../index.html",  # leaves the folder: Streamlit's handler decides
        "/index.html",
        "/pattern",
        "/static/js",  # a folder
    ],
)
def test_anything_else_goes_on_to_streamlit(client, url):
    answer = client.get(url)
    assert answer.status_code == 404 and answer.text == "inner"


def test_gzip_bytes_are_gzip_of_the_file(bundle):
    from server.static_cache import read_asset

    asset = read_asset(bundle)
    assert asset.gzipped is not None and gzip.decompress(asset.gzipped) == bundle.read_bytes()
