"""The notes' examples page on both text models: every number a sentence quotes is the engine's,
and every worded claim (which way, stronger or not, agree or not) follows the engine's numbers."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import embed_words, trace_sentence
from attention_core.lessons.notes import (
    FLUFFY,
    JANE,
    JANE_NOTE,
    LONGER,
    MONSTER_ALONE,
    MONSTER_CONTEXT,
    MONSTER_PROBES,
    adjectives,
    context_window,
    jane,
    length_effect,
    monster_shift,
)
from attention_core.lessons.notes_bank import BANK_MONEY, BANK_PROBES, BANK_RIVER, bank_probes
from attention_core.lessons.notes_delta import plumbing_delta
from attention_core.methods.decoder_heads import NOTE_PHRASE, note_tables, pick_head
from attention_core.methods.values import output_bias
from tests.app.conftest import open_page
from tests.core.oracles import oracle
from tests.core.test_notes_bank import ref_cosine, reference_bank, reference_probe
from tests.core.test_notes_delta import reference_layer
from tests.figdata import array, spec
from ui.cache import LABELS
from ui.state.text import Decoder
from ui.text.notes.delta import ROUGHLY, SAME_WAY

MODELS = ("minilm", "smollm2")


@pytest.fixture(scope="module", params=MODELS)
def shown(request, engines):
    """(model key, its engine, the page opened on it)."""
    at = open_page("notes", model=request.param)
    assert not at.exception
    return request.param, engines[request.param], at


def _text(at) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n" + "\n".join(c.value for c in at.caption)


def _said(at, start: str) -> str:
    return next(m.value for m in [*at.markdown, *at.caption] if start in m.value)


def _charts(at) -> dict[str, dict]:
    return {c.proto.id.rsplit("-", 1)[-1]: spec(c) for c in at.get("plotly_chart")}


def _table(at, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def test_the_page_shows_the_sidebars_model_and_keeps_code_names_closed(shown):
    key, _, at = shown
    assert at.selectbox(key="model").value == key
    assert [box.label for box in at.expander] == ["For engineers"]
    assert not at.expander[0].proto.expanded
    learner = _text(at)
    for name in ("strongest_head", "soft_select", "hidden_ltd", "pattern_lhqk", "1e-"):
        assert name not in learner


def test_plumbing_table_is_smollm2s_with_queries_as_columns(shown, engines):
    _, _, at = shown
    tables = note_tables(trace_sentence(engines["smollm2"], NOTE_PHRASE))
    pick = pick_head(tables, "closest")  # the radio's first rule
    chart = _charts(at)["dec_note_model"]
    np.testing.assert_allclose(array(chart["data"][0]["z"]), tables[pick.layer, pick.head].T)
    text = chart["data"][0]["text"]  # [key row][query column]: masked below the diagonal
    assert [text[1][0], text[2][0], text[2][1]] == ["0 · masked"] * 3
    assert all("masked" not in text[r][c] for r in range(3) for c in range(r, 3))
    assert chart["layout"]["xaxis"]["title"]["text"] == "queries (attending)"
    assert "masked cells sit below the diagonal" in _text(at)


def test_fluffy_claims_are_the_engines(shown):
    key, engine, at = shown
    a = adjectives(trace_sentence(engine, FLUFFY))
    fl, bl, ve = a.best.weights
    said = _said(at, "Rule used here")
    assert f"layer {a.best.layer}, head {a.best.head}" in said
    assert all(f"**{w:.3f}**" in said for w in (fl, bl, ve))
    strength = _said(at, "How strong")
    weakest = min(a.best.weights)
    assert f"**{max(a.even):.3f}**" in strength and f"**{weakest:.3f}**" in strength
    assert f"**{a.look_back:.3f}**" in strength
    if a.look_back > max(a.best.weights):
        assert "more than any of its adjectives gets" in strength
    elif a.look_back >= weakest:
        assert "at least as much as its weakest adjective" in strength
        assert "nearly" not in strength
    elif a.look_back >= 0.8 * weakest:
        assert "nearly as much" in strength
    else:
        assert "clearly less" in strength
    assert ("not above" in strength) == (weakest <= max(a.even))
    charts = _charts(at)
    np.testing.assert_allclose(
        array(charts["notes_fluffy_best"]["data"][0]["z"]), a.best.table_ww.T
    )
    np.testing.assert_allclose(
        array(charts["notes_fluffy_next"]["data"][0]["z"]), a.next_to.table_ww.T
    )
    near = _said(at, "the head best at the two adjectives")
    fluffy = a.next_to.table_ww[a.words.index("creature"), a.words.index("fluffy")]
    assert f"layer {a.next_to.layer}, head {a.next_to.head}" in near
    assert f"gets {fluffy:.3f}" in near and fluffy < min(a.next_to.weights)  # "whatever it is"
    if key == "minilm":  # the head that looks one token back: all or nothing
        assert min(a.next_to.weights) > 0.99 and fluffy < 0.01


def test_jane_as_a_soft_select(shown):
    key, engine, at = shown
    j = jane(trace_sentence(engine, JANE))
    note = _table(at, "the notes")
    column = (
        f"{LABELS[key]}, layer {j.best.layer}, head {j.best.head}"  # the model and the picked head
    )
    np.testing.assert_allclose(note[column].to_numpy(), j.best.weights)
    np.testing.assert_allclose(note["the notes"].to_numpy(), [w for _, _, w in JANE_NOTE])
    rule = _said(at, "closest to the notes' three numbers")
    total = sum(abs(w - n) for w, (_, _, n) in zip(j.best.weights, JANE_NOTE, strict=True))
    assert f"**{total:.3f}**" in rule and f"layer {j.best.layer}, head {j.best.head}" in rule
    assert ("2 of the notes' three rows cannot happen" in rule) == engine.config.causal
    # the notes teach this sentence as self-attention inside one sentence, not translation
    assert "self-attention inside one sentence" in rule and "translat" not in rule
    assert "encoder-decoder" not in rule and "cross-attention" not in rule
    assert any(link.proto.page == "listen" for link in at.get("page_link"))
    s = j.select
    steps = _table(at, "weight × value")
    np.testing.assert_allclose(steps["weight"].to_numpy(), s.weight_k)
    np.testing.assert_allclose(steps["query · key"].to_numpy(), s.dot_k)
    top = int(np.argmax(s.weight_k))
    said = _said(at, "a weighted bag of values")
    assert f"{s.weight_k[top]:.3f} of its weight on" in said
    seen = len(s.keys)  # the even spread: over the tokens the query can see
    assert f"an even spread over the {seen} tokens it can see would give {1 / seen:.3f}" in said
    assert "Over the whole text, this head is, by the rule," in rule
    assert ", ".join(f"{x:.3f}" for x in s.z_e[:3]) in said and f"{s.z_e.size} numbers" in said


def test_dot_product_beside_cosine(shown):
    _, engine, at = shown
    s = jane(trace_sentence(engine, JANE)).select
    table = _table(at, "cosine")
    np.testing.assert_allclose(table["cosine"].to_numpy(), s.cos_k)
    np.testing.assert_allclose(table["length of the key"].to_numpy(), s.k_norm_k)
    said = _said(at, "attention uses the dot product")
    agree = int(np.argmax(s.dot_k)) == int(np.argmax(s.cos_k))
    assert ("both pick" in said) == agree and ("disagree" in said) == (not agree)
    top = int(np.argmax(s.dot_k))
    effect = length_effect(s.q_e, s.k_ke[top], LONGER)
    what_if = _said(at, "a what-if, not the model")
    assert f"**{effect.dot:.3f}** to **{effect.dot_longer:.3f}**" in what_if
    assert f"**{effect.cos:.3f}** before and **{effect.cos_longer:.3f}** after" in what_if
    assert effect.dot_longer == pytest.approx(LONGER * effect.dot)  # dot grows
    assert effect.cos_longer == pytest.approx(effect.cos)  # cosine stays


def test_monster_which_way(shown):
    _, engine, at = shown
    m = monster_shift(
        trace_sentence(engine, MONSTER_CONTEXT),
        trace_sentence(engine, MONSTER_ALONE),
        MONSTER_PROBES,
        embed_words(engine, list(MONSTER_PROBES)),
    )
    table = _table(at, "whole passage")
    np.testing.assert_allclose(table["whole passage"].to_numpy(), m.with_p, rtol=1e-6)
    np.testing.assert_allclose(table["last sentence alone"].to_numpy(), m.without_p, rtol=1e-6)
    said = _said(at, "With the passage before it")
    mike = MONSTER_PROBES.index("Mike Wazowski")
    way = "towards" if m.change_p[mike] > 0 else "away from"
    assert f"**{way}** “Mike Wazowski”" in said
    assert f"{m.without_p[mike]:.3f} → {m.with_p[mike]:.3f}" in said
    rank = int((m.with_p > m.with_p[mike]).sum()) + 1
    how = _said(at, "Each cosine compares “monster”")
    assert ("final rescaling, RMSNorm" in how) == (not engine.config.post_norm)
    assert f"number {rank} of the 4 probes" in said and f"cosine {m.moved:.3f}" in said
    if (m.change_p < 0).all():
        assert "All 4 cosines fall" in said
    elif (m.change_p > 0).all():
        assert "All 4 cosines rise" in said
    else:
        assert f"most towards “{MONSTER_PROBES[int(np.argmax(m.change_p))]}”" in said


def test_context_window_is_the_patterns_size(shown):
    _, engine, at = shown
    n = trace_sentence(engine, MONSTER_CONTEXT).n_tokens
    w = context_window(engine.config, n)
    said = _said(at, "A gentle correction: the context window")
    assert f"**{n}** tokens" in said and f"{n} × {n} = **{n * n:,}** weights" in said
    assert f"**{w.longest:,}** tokens" in said and f"{w.longest**2:,} weights per head" in said
    assert f"{w.heads} heads" in said
    # the notes' slip quoted, then corrected: the window is n tokens, the pattern n² (issue 35)
    quoted = _said(at, "The notes: “The size of the attention pattern")
    assert "is what’s commonly referred to as the context window" in quoted
    assert said.startswith("A gentle correction: the context window is the number of tokens")
    assert "n × n weights" in said and "The notes call the pattern's size" not in _text(at)
    assert (f"at most {w.runs:,} tokens" in _text(at)) == (w.runs < w.longest)


def _delta_text(at) -> str:
    return _said(at, "The notes' ΔE₂ on this head") + "\n" + _said(at, "Their sum")


def test_delta_on_the_plumbing_head_is_transformers(shown, smollm2):
    """Section 1's ΔE₂: every number from the engine, the head's sum and E₂ from transformers."""
    _, _, at = shown
    trace = trace_sentence(smollm2, NOTE_PHRASE)
    pick = pick_head(note_tables(trace), "closest")  # the radio's first rule
    d = plumbing_delta(trace, output_bias(smollm2, pick.layer), pick.layer, pick.head)
    terms = _table(at, "weight × V")
    np.testing.assert_allclose(terms["weight"].to_numpy(), d.weights_k)
    assert list(terms["token"]) == list(d.tokens) and len(d.tokens) == 4  # "dir" + "ty"
    said = _delta_text(at)
    assert f"layer {pick.layer}, head {pick.head}" in said and f"{d.v_ke.shape[1]} numbers" in said
    ref = reference_layer(pick.layer)
    e = d.v_ke.shape[1]
    z = ref["z"][-1, pick.head * e : (pick.head + 1) * e]  # transformers' o_proj input
    assert "(" + ", ".join(f"{x:.3f}" for x in z[:3]) + ", …)" in said
    assert f"length **{np.linalg.norm(z):.2f}**" in said
    assert f"length **{np.linalg.norm(ref['hidden'][-1]):.1f}**" in said  # E₂ entering the layer
    assert f"{z.size} numbers" in said and f"has {ref['hidden'].shape[1]} numbers" in said
    for word, w in zip(("dirty", "quantum", "plumbing"), d.word_weights, strict=True):
        assert f"“{word}” {w:.3f}" in said


def test_what_e2_prime_is_in_the_model(shown, smollm2):
    _, _, at = shown
    trace = trace_sentence(smollm2, NOTE_PHRASE)
    pick = pick_head(note_tables(trace), "closest")
    d = plumbing_delta(trace, output_bias(smollm2, pick.layer), pick.layer, pick.head)
    said = _said(at, "What E'₂ = E₂ + ΔE₂ is in the model")
    ref = reference_layer(pick.layer)
    delta, hidden = ref["delta"][-1], ref["hidden"][-1]  # transformers' attention output and E₂
    assert f"length **{np.linalg.norm(delta):.2f}**" in said
    assert f"{np.linalg.norm(delta) / np.linalg.norm(hidden):.0%} of E₂'s" in said
    n_heads = smollm2.config.n_heads
    rank = int((d.head_norms_h > d.head_norms_h[pick.head]).sum()) + 1
    assert f"number {rank} by length of the layer's {n_heads} heads" in said
    assert f"length **{np.linalg.norm(d.head_delta_d):.2f}**" in said
    assert f"from all {n_heads} heads, not one" in said and "W_O" in said
    what_if = _said(at, "What-if, not the model")
    cos = d.note_agreement
    way = "nearly the same" if cos >= SAME_WAY else "roughly the same" if cos >= ROUGHLY else "a"
    assert f"points {way}" in what_if and f"cosine {cos:.3f}" in what_if


def test_delta_follows_the_radios_head(smollm2):
    at = open_page("notes", model="smollm2")
    at.radio(key=Decoder.rule.key).set_value("adjective").run()
    assert not at.exception
    trace = trace_sentence(smollm2, NOTE_PHRASE)
    pick = pick_head(note_tables(trace), "adjective")
    assert f"layer {pick.layer}, head {pick.head}" in _said(at, "The notes' ΔE₂ on this head")
    d = plumbing_delta(trace, output_bias(smollm2, pick.layer), pick.layer, pick.head)
    np.testing.assert_allclose(_table(at, "weight × V")["weight"].to_numpy(), d.weights_k)


def test_bank_probes_are_transformers_and_the_words_follow_them(shown):
    key, engine, at = shown
    b = bank_probes(
        trace_sentence(engine, BANK_RIVER),
        trace_sentence(engine, BANK_MONEY),
        BANK_PROBES,
        embed_words(engine, list(BANK_PROBES)),
    )
    table = _table(at, "nearer after")
    river, money = reference_bank(key, BANK_RIVER), reference_bank(key, BANK_MONEY)
    probes_lpd = np.stack([reference_probe(key, w) for w in BANK_PROBES], axis=1)
    theirs = {
        "before attention (both)": ref_cosine(river[0], probes_lpd[0]),
        "after the layers: fisherman sentence": ref_cosine(river[-1], probes_lpd[-1]),
        "after the layers: deposit sentence": ref_cosine(money[-1], probes_lpd[-1]),
    }
    for column, expected in theirs.items():
        np.testing.assert_allclose(table[column].to_numpy(), expected, atol=2e-4)
    said = _said(at, "Before attention the two “bank” vectors")
    assert f"cosine is **{ref_cosine(river[-1], money[-1]):.3f}**" in said
    assert "the same (cosine 1.000)" in said and np.array_equal(river[0], money[0])
    for word in ("teller", "vault"):
        i = BANK_PROBES.index(word)
        assert f"“{word}” {b.river_after_p[i]:.3f} against {b.money_after_p[i]:.3f}" in said
    raw = b.raw_river_nearer_p
    if not raw.any() or raw.all():  # every raw cosine on one side: the shared shift is said
        side = "deposit" if not raw.any() else "fisherman"
        assert f"Every probe, river words and money words alike, is nearer the {side}" in said
        mean = f"{b.river_after_p.mean():.3f} against {b.money_after_p.mean():.3f}"
        assert f"(on average {mean}): a shift they all share" in said
    if b.as_expected_p.all():
        assert "all 5 probes lean the way the notes expect" in said
    elif b.as_expected_p.any():
        assert f"{int(b.as_expected_p.sum())} of the 5 probes lean the way" in said
    else:
        assert "none of the 5 probes leans the way" in said
    if key == "minilm":  # measured: the encoder separates the two meanings on all five probes
        assert b.as_expected_p.all()
    for sentence in (BANK_RIVER, BANK_MONEY):
        assert f"“{sentence}”" in _text(at)
    how = _said(at, "Each number is the cosine of “bank”")
    assert ("final rescaling (RMSNorm)" in how) == (not engine.config.post_norm)
    assert ("position's vector" in how) == (engine.config.positions == "learned")


def test_the_slips_are_quoted_and_corrected_with_the_models_numbers(shown):
    key, engine, at = shown
    ora = oracle(key)
    cfg = engine.config
    value = _said(at, "the value vector is smaller, not larger")
    assert f"**{cfg.d_model}** numbers" in value and f"has **{ora.d_head}**" in value
    assert f"{cfg.d_model} ÷ {cfg.n_heads} heads" in value and ora.d_head < cfg.d_model
    assert "higher dimensional context space" in _said(at, "The notes, on the value matrix")
    table = ora.model.get_input_embeddings().weight  # transformers' own embedding table
    embedding = _said(at, "embedding table is its own")
    assert f"**{table.shape[0]:,}** rows of **{table.shape[1]}** numbers" in embedding
    pieces = ora.tokenizer.tokenize("Wazowski")
    assert f"is {len(pieces)} rows" in embedding and "no Word2Vec or GloVe table" in embedding
    assert "Word2Vec or GLoVE" in _said(at, "The notes, on the first layer's input")
    learned = "position vectors" in embedding
    assert learned == (cfg.positions == "learned") and ("rotary" in embedding) != learned
