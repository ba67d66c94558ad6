"""Bad input everywhere a user types or a link sets: every page either shows a clear message or
a correct chart; user text stays literal (never HTML, Markdown or LaTeX); no NaN or infinity
reaches a figure except the intended gaps.

One table row is (what, where, value, what must show up). Sentence rows run on every page that
reads the sidebar sentence; probe rows on Embedding shift; compare rows on Compare; URL rows on
the page that owns the parameter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core import load_model, tokenize
from tests.app.conftest import LONG_RUN_S, open_page
from tests.figdata import array
from ui.params import MAX_CHARS
from ui.presets import DEFAULT_SENTENCE
from viz.common import category_ticks

ROOT = Path(__file__).resolve().parents[2]


def _finished(page: str) -> bool:
    """Pages still under construction are a placeholder script; they join the table once built."""
    return "Placeholder until this page lands" not in (ROOT / "pages" / f"{page}.py").read_text()


SENTENCE_PAGES = [
    "home",
    "pattern",
    "all_heads",
    "values",
    "embedding_shift",
    "hide_word",
    *(p for p in ("build_head", "learn") if _finished(p)),
]
EMPTY = "Type a sentence"  # the prompt for empty or whitespace-only text
UNREADABLE = "invisible or control characters"  # the prompt for text without any word piece
CUT = "the text is cut after"  # the truncation notice
LONG_CHARS = 5_000  # a SmolLM2 row this long runs a pass of up to 2,048 tokens: more time
XSS = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LONG_TEXT = ("The river bank was muddy, and the bank by the river was closed. " * 400)[:MAX_CHARS]


@dataclass(frozen=True)
class Case:
    """One bad input. ``where`` is a URL parameter name, "url" (``value`` is a dict of them) or
    "typed:<key>" (sent as that box's value after the page opened with its defaults: set_value,
    not input, so an over-long value reaches the server as from a client that skips the
    browser's own max_chars cut)."""

    name: str
    where: str
    value: Any
    pages: list[str]
    message: str | None = None  # text that must appear in an info/warning/error
    chart: bool = True  # a chart must be drawn (False: no chart may be drawn)
    text: str | None = None  # the sentence the charts must show, when it differs from value
    extra: dict[str, str] = field(default_factory=dict)  # more URL parameters


def sentence(name: str, value: str, **kw: Any) -> Case:
    return Case(name, "s", value, SENTENCE_PAGES, **kw)


def typed(name: str, value: str, **kw: Any) -> Case:
    return Case(name, "typed:s", value, SENTENCE_PAGES, **kw)


# The decoder on every page that reads the sidebar sentence (the tour teaches on MiniLM and says
# so instead). A byte-level tokenizer reads control and zero-width characters as tokens.
DECODER_PAGES = [p for p in SENTENCE_PAGES if p != "learn"]


def decoder(name: str, value: str, **kw: Any) -> Case:
    return Case(f"SmolLM2, {name}", "s", value, DECODER_PAGES, extra={"model": "smollm2"}, **kw)


def probes(name: str, value: str, **kw: Any) -> Case:
    return Case(name, "es_probes", value, ["embedding_shift"], **kw)


def url(name: str, page: str, message: str | None = None, **params: str) -> Case:
    return Case(name, "url", params, [page], message=message)


CASES = [
    # -- the sidebar sentence, from a link (s=) --
    sentence("empty", "", message=EMPTY, chart=False),
    sentence("spaces and tabs", "   \t  ", message=EMPTY, chart=False),
    sentence("newlines only", "\n\r\n", message=EMPTY, chart=False),
    sentence("zero-width only", "\u200b\u200c\u200d\ufeff", message=UNREADABLE, chart=False),
    sentence("control characters only", "\x01\x02\x1b\x7f", message=UNREADABLE, chart=False),
    sentence("NUL only", "\x00", message=EMPTY, chart=False),  # the URL parser drops NUL
    sentence("NUL inside a word", "river\x00bank flows", text="riverbank flows"),
    sentence("replacement character only", "\ufffd\ufffd", message=UNREADABLE, chart=False),
    sentence("600 identical words", "bank " * 600, message=CUT),
    sentence("20 000 characters", LONG_TEXT, message=CUT),
    sentence(
        "20 001 characters",
        "a" * (MAX_CHARS + 1),
        message="longer than 20,000",
        text=DEFAULT_SENTENCE,
    ),
    sentence("one 300-character word", "x" * 300),
    sentence("a 300-character word among words", "the " + "abc" * 100 + " bank"),
    sentence("emoji", "I 😀 love 🎉 the river 👍🏽 bank"),
    sentence("CJK", "河岸很泥泞，我在银行存了钱"),
    sentence("Arabic (right to left)", "ضفة النهر كانت موحلة"),
    sentence("Hebrew (right to left)", "גדת הנהר הייתה בוצית"),
    sentence("bidi override", "\u202etext reversed\u202c river bank"),
    sentence("combining accents", "café\u0301\u0301 Zalgo̸̢̨͓ ñ"),
    sentence("zero-width inside words", "ri\u200bver ba\u200dnk"),
    sentence("script tag", XSS),
    sentence("img onerror", IMG),
    sentence("Plotly's own tags", "<b>bold</b><br><a href='x'>link</a> <i>it</i>"),
    sentence("Markdown", "**bold** _it_ # heading `code` > quote"),
    sentence("LaTeX", "$x$ and $$\\int_0^1$$ \\(a\\) \\begin{align}"),
    sentence("javascript link", "[click](javascript:alert(1)) javascript:alert(2)"),
    sentence("HTML entities", "&lt;b&gt; &amp; &#60;script&#62;"),
    sentence("Plotly template syntax", "%{x} %{y:.2f} %{customdata[0]}"),
    # -- the same on the decoder --
    decoder("empty", "", message=EMPTY, chart=False),
    decoder("spaces and tabs", "   \t  ", message=EMPTY, chart=False),
    decoder("control characters only", "\x01\x02\x1b\x7f"),
    # SmolLM2 reads 2,048 tokens: one page only, past them (each page's own work at that length
    # is timed by hand, not in CI)
    Case(
        "SmolLM2, 2,500 identical words",
        "s",
        "bank " * 2500,
        ["pattern"],
        message=CUT,
        extra={"model": "smollm2"},
    ),
    decoder("emoji", "I 😀 love 🎉 the river 👍🏽 bank"),
    decoder("CJK", "河岸很泥泞，我在银行存了钱"),
    decoder("script tag", XSS),
    # -- the sidebar sentence, typed into the box --
    typed("typed empty", "", message=EMPTY, chart=False),
    typed("typed NUL only", "\x00", message=UNREADABLE, chart=False),
    typed("typed script tag", f"{XSS} {IMG}"),
    typed("typed 25 000 characters", LONG_TEXT + "z" * 5000, message=CUT, text=LONG_TEXT),
    # -- probe words (Embedding shift) --
    probes("no probes", "", message="Add at least one probe word"),
    probes("only commas and spaces", " ,  , ,", message="Add at least one probe word"),
    probes("one 300-character probe", "p" * 300, message="longer than 40 characters"),
    probes("unreadable probes", "\u200b, \x01, \ufffd", message="reads no word pieces"),
    probes("script and img probes", f"{XSS}, {IMG}"),
    probes("Markdown and LaTeX probes", "**bold**, $x$, [a](javascript:alert(1))"),
    probes("emoji, CJK, Arabic probes", "😀, 河岸, نهر, גדה"),
    probes("twenty probes", ", ".join(f"word{i}" for i in range(20)), message="first 12"),
    probes("repeated probes", "bank, BANK, Bank", message="repeated"),
    Case("typed probes with tags", "typed:es_probes", f"{IMG}, **b**", ["embedding_shift"]),
    # -- the two compare boxes --
    Case("compare A empty", "cmp_a", "", ["compare"], message="Type sentence A"),
    Case("compare B spaces", "cmp_b", "   ", ["compare"], message="Type sentence B"),
    Case("compare A zero-width", "cmp_a", "\u200b\u200b", ["compare"], message=UNREADABLE),
    Case("compare A script", "cmp_a", f"{XSS} bank", ["compare"]),
    Case("compare B img and Markdown", "cmp_b", f"{IMG} **bank** $x$", ["compare"]),
    Case("compare A too long", "cmp_a", "bank " * 600, ["compare"], message=CUT),
    Case(
        "compare nothing shared",
        "cmp_a",
        "river",
        ["compare"],
        message="share no word",
        extra={"cmp_b": "money"},
    ),
    Case("compare CJK", "cmp_a", "河岸", ["compare"], extra={"cmp_b": "河流"}),
    Case(
        "compare typed 25 000 characters", "typed:cmp_b", "bank " * 5000, ["compare"], message=CUT
    ),
    Case("compare word not shared", "cmp_word", "<b>x</b>", ["compare"]),
    # -- URL settings: malformed, out of range, wrong type, extremes --
    url("layer 99", "pattern", "layer='99'", layer="99"),
    url("head -1", "pattern", "head='-1'", head="-1"),
    url("layer not a number", "pattern", "layer='abc'", layer="abc"),
    url("layer as a float", "pattern", "layer='2.5'", layer="2.5"),
    url("temperature 0", "pattern", "temp='0'", temp="0"),
    url("temperature nan", "pattern", "temp='nan'", temp="nan"),
    url("temperature inf", "pattern", "temp='inf'", temp="inf"),
    url("temperature overflow", "pattern", "temp='1e999'", temp="1e999"),
    url("temperature minimum", "pattern", temp="0.05", causal="1"),
    url("temperature maximum", "pattern", temp="5.0", scale="0"),
    url("layer and head maximum", "pattern", layer="5", head="11", transpose="1"),
    url("layer and head minimum", "pattern", layer="0", head="0", hide_special="1"),
    url("boolean garbage", "pattern", "causal='maybe'", causal="maybe"),
    url("query beyond the sentence", "pattern", None, q="511", k="300"),
    url("query out of range", "pattern", "q='9999'", q="9999"),
    url("model path", "pattern", "model='../../etc/passwd'", model="../../etc/passwd"),
    url("model folder", "pattern", "model='/tmp'", model="/tmp"),
    url("unknown model", "pattern", "model='gpt5'", model="gpt5"),
    url("the old model name", "pattern", None, model="all-MiniLM-L6-v2"),
    url("decoder, last layer and head", "pattern", None, model="smollm2", layer="29", head="8"),
    url("decoder, layer beyond it", "pattern", "layer='30'", model="smollm2", layer="30"),
    url("layer past MiniLM's", "pattern", "layer='29'", layer="29"),
    url("unknown parameter", "pattern", "unknown URL parameter", bogus="<script>"),
    url("sort by script", "all_heads", "ah_sort=", ah_sort=XSS),
    url("heads per layer 0", "all_heads", "ah_top='0'", ah_top="0"),
    url("layer choice 7", "all_heads", "ah_layers='7'", ah_layers="7"),
    url("heads per layer 1, one layer", "all_heads", None, ah_top="1", ah_layers="5"),
    url("value token -5", "values", "v_token='-5'", v_token="-5"),
    url("value token beyond the sentence", "values", None, v_token="511"),
    url("embedding token beyond the sentence", "embedding_shift", None, es_token="511"),
    url("embedding token text", "embedding_shift", "es_token='x'", es_token="x"),
    *(
        [
            url("d_k 1, one head", "build_head", None, bh_dk="1", bh_heads="1"),
            url("d_k and heads at maximum", "build_head", None, bh_dk="384", bh_heads="12"),
            url("d_k abc", "build_head", "bh_dk='abc'", bh_dk="abc"),
            url("heads -1", "build_head", "bh_heads='-1'", bh_heads="-1"),
        ]
        if _finished("build_head")
        else []
    ),
]
ROWS = [pytest.param(case, page, id=f"{page}-{case.name}") for case in CASES for page in case.pages]


# ---------------------------------------------------------------- figure inspection helpers

# Tags the figure builders write themselves into hover templates (user text there is escaped,
# so a typed "<b>" arrives as "&lt;b&gt;"); any other "<" is user text that Plotly would read.
TEMPLATE_TAGS = re.compile(r"</?(br|extra|sub|sup|b|i)>")
TEMPLATES = ("hovertemplate", "texttemplate")
UNESCAPED = re.compile(r"(?<!\\)(<(script|img|b>|a |i>|/)|javascript:|\$)")


def chart_key(chart: Any) -> str:
    return chart.proto.id.rsplit("-", 1)[-1]


def number_arrays(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, np.ndarray, bool]]:
    """Every number array in a figure's JSON: (path, values, came from a plain list). Plain lists
    hold null where a value was NaN, infinity or a deliberate gap (None in a line)."""
    if isinstance(node, dict):
        if "bdata" in node and "dtype" in node:
            yield path, array(node), False
            return
        for key, value in node.items():
            if path == ("layout",) and key == "template":
                continue  # Plotly's theme, not ours
            yield from number_arrays(value, (*path, key))
    elif isinstance(node, list):
        scalars = [v for v in node if not isinstance(v, dict | list | str)]
        numbers = [v for v in scalars if isinstance(v, int | float) and not isinstance(v, bool)]
        if numbers and len(numbers) + scalars.count(None) == len(scalars):
            values = np.array([np.nan if v is None else v for v in scalars], dtype=np.float64)
            yield path, values, True
        for i, value in enumerate(node):
            if isinstance(value, dict | list):
                yield from number_arrays(value, (*path, i))
    elif isinstance(node, int | float) and not isinstance(node, bool):
        yield path, np.array([node], dtype=np.float64), False


def strings(node: Any, path: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """Every string in a figure's JSON except Plotly's theme."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not (path == ("layout",) and key == "template"):
                yield from strings(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from strings(value, (*path, i))
    elif isinstance(node, str):
        yield path, node


def assert_figure_is_clean(key: str, fig: dict) -> None:
    """No infinity anywhere, NaN only in intended gaps, no user text read as markup."""
    for path, values, from_list in number_arrays(fig):
        where = f"{key}: {'.'.join(map(str, path))}"
        assert not np.isinf(values).any(), f"infinity in {where}"
        if np.isnan(values).any():
            name = next(p for p in reversed(path) if isinstance(p, str))  # z of z[i][j]
            gap = from_list and name in ("x", "y")  # a line's deliberate break (None)
            assert gap, f"NaN (or a null for NaN/inf) in {where}"
    for path, text in strings(fig):
        name = next(p for p in reversed(path) if isinstance(p, str))
        stray = TEMPLATE_TAGS.sub("", text) if name in TEMPLATES else text
        assert "<" not in stray, f"unescaped '<' in {key}: {'.'.join(map(str, path))} = {text!r}"


# ---------------------------------------------------------------- running a row


def _run(case: Case, page: str) -> AppTest:
    if case.where == "url":
        return open_page(page, **case.value)
    if case.extra.get("model") == "smollm2" and len(case.value) > LONG_CHARS:
        return open_page(page, LONG_RUN_S, **{case.where: case.value}, **case.extra)
    if case.where.startswith("typed:"):
        at = open_page(page, **case.extra)
        box = case.where.removeprefix("typed:")
        if box == "s":
            at.sidebar.text_input(key="s").set_value(case.value)
            next(b for b in at.sidebar.button if b.label == "Run").click()
        else:
            at.text_input(key=box).set_value(case.value)
        return at.run()
    return open_page(page, **{case.where: case.value}, **case.extra)


def _messages(at: AppTest) -> str:
    return " ".join(e.value for kind in (at.info, at.warning, at.error) for e in kind)


def plain_text(markdown: str) -> str:
    """Markdown source with ui.safe.md's backslash escapes removed: the text a person reads."""
    return re.sub(r"\\(.)", r"\1", markdown)


@cache
def _decoder() -> Any:
    return load_model("smollm2")


def _expected_tokens(model, case: Case) -> list[str]:
    text = case.text if case.text is not None else case.value
    if case.extra.get("model") == "smollm2":
        model = _decoder()
    return list(tokenize(model, text).tokens)


def _check_tokens(
    model, case: Case, page: str, charts: dict[str, dict], views: dict[str, dict]
) -> None:
    """The token axis shows the row's own sentence: escaped for Plotly, literal for the
    explorer (which writes tokens as text, never as HTML)."""
    if case.where in ("s", "typed:s") and page == "pattern" and case.chart:
        tokens = views["pattern_explorer"]["header"]["tokens"]
        assert tokens == _expected_tokens(model, case)
    if case.where in ("s", "typed:s") and page == "values" and case.chart:
        expected = category_ticks(_expected_tokens(model, case))["ticktext"]
        assert charts["v_tokens"]["layout"]["xaxis"]["ticktext"] == expected
    if case.where in ("cmp_a", "cmp_b", "typed:cmp_b"):
        key = "cmp_pattern_" + case.where[-1]
        if case.message in (EMPTY, UNREADABLE, "Type sentence A", "Type sentence B"):
            assert key not in views  # a prompt instead of a chart of nothing
        else:
            assert views[key]["header"]["tokens"] == _expected_tokens(model, case)


@pytest.mark.parametrize(("case", "page"), ROWS)
def test_bad_input_gives_a_message_or_a_clean_chart(model, case: Case, page: str):
    at = _run(case, page)
    assert not at.exception, [e.value for e in at.exception]
    messages = _messages(at)
    if case.message and (page != "home" or case.message not in (EMPTY, UNREADABLE)):
        assert case.message in plain_text(messages), messages  # home: no prompts, only warnings
    if case.where.startswith("typed:"):
        assert len(at.session_state[case.where.removeprefix("typed:")]) <= MAX_CHARS
    charts = {chart_key(c): json.loads(c.proto.spec) for c in at.get("plotly_chart")}
    # The attention explorer's data: its tokens go into the page as text, never as markup.
    views = {chart_key(c): json.loads(c.proto.json) for c in at.get("bidi_component")}
    if page != "home":
        # Hiding a word needs two words: a one-word text gets that message instead of a chart.
        one_word = page == "hide_word" and "only one word" in messages
        expected = case.chart and not one_word
        assert bool(charts or views) == expected, (sorted(charts), sorted(views), messages)
    for key, fig in charts.items():
        assert_figure_is_clean(key, fig)
    _check_tokens(model, case, page, charts, views)
    shown = [
        e.value for kind in ("markdown", "caption", "title", "subheader") for e in at.get(kind)
    ]
    for text in [*shown, messages]:
        assert not UNESCAPED.search(text), text


def test_the_table_is_big_enough():
    assert len(CASES) >= 40
    assert {"s", "typed:s", "es_probes", "cmp_a", "cmp_b", "url"} <= {c.where for c in CASES}


def test_the_figure_checks_catch_what_they_are_for():
    # The helpers above must fail on the very things they guard against.
    fig = {"data": [{"type": "heatmap", "z": [[1.0, None]], "x": ["<b>x</b>"]}], "layout": {}}
    template = {"data": [{"hovertemplate": "<b>%{x}</b><br><img src=x>"}]}
    with pytest.raises(AssertionError, match="unescaped"):
        assert_figure_is_clean("pattern_scores", template)
    with pytest.raises(AssertionError, match="NaN"):
        assert_figure_is_clean("pattern_scores", fig)
    with pytest.raises(AssertionError, match="NaN"):  # no heatmap has gaps on purpose
        assert_figure_is_clean("dec_pattern", {"data": [{"z": [[1.0, None]]}]})
    assert_figure_is_clean("es_lines", {"data": [{"x": [0, None, 1], "y": [1.0, None, 2.0]}]})
    with pytest.raises(AssertionError, match="unescaped"):
        assert_figure_is_clean("dec_pattern", {**fig, "data": [{"z": [[1.0]], "x": ["<b>x</b>"]}]})
    typed_inf = {"dtype": "f8", "bdata": "AAAAAAAA8H8=", "shape": "1"}  # [inf]
    with pytest.raises(AssertionError, match="infinity"):
        assert_figure_is_clean("dec_pattern", {"data": [{"z": typed_inf}]})
    assert UNESCAPED.search("**<script>**") and not UNESCAPED.search(r"\<script\> \$x\$")
