"""What did that word do? One word of the sidebar's sentence hidden from every token, and how a
watched token's vector, its probe cosines and the sentence embedding change, layer by layer."""

import numpy as np
import streamlit as st

from attention_core.methods.hide_word import default_base, default_choice, words_of
from ui import callbacks, params, router, safe, show
from ui.presets import auto_probes, curated
from ui.show import NUM
from ui.text.cache import read_probes, word_effect
from viz.embedding_shift import layer_name
from viz.word_effect import make_word_effect
from viz.word_effect_probes import make_word_effect_probes

shared = router.shared()
trace = router.require_trace(shared)
tokens, after = trace.tokens.tokens, shared.layer + 1
st.title("What did that word do?")
st.caption(
    "Hide one word from every other token, in every layer, and run the sentence again: whatever "
    "changes in another token's vector is what that word passed on through attention. The "
    "notes say “river” makes “bank” a riverside bank; here you can take “river” away "
    "and measure what “bank” loses."
)
words = words_of(trace.tokens)
preset = curated(shared.text, shared.model)
start = default_choice(trace.tokens, (preset.token, preset.key) if preset else None)
if start is None:
    st.info(
        "This sentence has only one word, so there is no other word to hide it from. Type a "
        "sentence of at least two words in the sidebar."
    )
    st.stop()

state, previous = st.session_state, st.session_state.get("_hw_text")
if previous != shared.text:  # a new sentence: its own defaults (the URL's on the first run)
    if previous is not None:
        state["hw_word"], state["hw_token"], state["hw_base"] = "", -1, ""
    state["_hw_text"] = shared.text
state["hw_probes"] = auto_probes(state["hw_probes"], previous, shared.text)  # unless edited
keep = shared.visible(trace)
if state["hw_word"] not in words:
    if state["hw_word"]:
        st.warning(
            safe.md(
                f"“{state['hw_word']}” is not a word of this sentence; hiding “{start[0]}” instead."
            )
        )
    state["hw_word"] = start[0]
if state["hw_token"] not in keep:
    if state["hw_token"] != -1:
        st.warning(
            f"Token {state['hw_token']} is not one of the tokens shown; watching token "
            f"{start[1]} instead."
        )
    state["hw_token"] = start[1] if start[1] in keep else int(keep[0])
bases = [w for w, pos in words.items() if w != state["hw_word"] and state["hw_token"] not in pos]
if bases and state["hw_base"] not in bases:
    state["hw_base"] = default_base(bases)
params.write_url("hide_word")  # the defaults just chosen

left, middle, right = st.columns(3)
word = left.selectbox(
    "Word to hide",
    list(words),
    key="hw_word",
    help="Hidden from every token in every layer; first occurrence.",
)
token = middle.selectbox(
    "Token to watch", keep.tolist(), key="hw_token", format_func=callbacks.numbered(tokens)
)
base = right.selectbox(
    "Compare with hiding",
    bases,
    key="hw_base",
    disabled=not bases,
    help="A second word, hidden instead, to show what a word that does not matter much changes.",
)
raw = st.text_input(
    "Probe words, comma-separated (at most 12, each up to 40 characters)",
    key="hw_probes",
    max_chars=params.MAX_CHARS,
    help="Each probe is run through the model alone and compared with the "
    "watched token at the same layer.",
)
hw, who = safe.token(word), safe.token(tokens[token])
if token in words[word]:
    st.error(
        f"You are watching {who}, which is part of {hw}, the word you hid. A hidden word is "
        "hidden from every token, itself included, so this would only measure the word losing "
        "sight of itself. Pick another token to watch, or another word to hide."
    )
    st.stop()

probes, _, problems = read_probes(shared.model, raw)
for problem in problems:
    st.warning(safe.md(problem))
effect = word_effect(shared.model, shared.text, words[word], token, tuple(probes))
other = word_effect(shared.model, shared.text, words[base], token, ()) if bases else None
pairs = [(word, effect), *([(base, other)] if other is not None else [])]  # hidden word, numbers

most = effect.most_changed
cos, dist = effect.cosine_l[most], effect.distance_l[most]
summary = (
    f"Hiding {hw} changes {who} most {layer_name(most)}: there its vectors with and "
    f"without {hw} have cosine {cos:.3f} (an angle of {np.degrees(np.arccos(min(cos, 1))):.0f}°) "
    f"and lie {dist:.2f} apart, {dist / effect.length_l[most]:.0%} of the vector's length."
)
if other is not None:
    top = other.most_changed
    summary += (
        f" Hiding {safe.token(base)} instead changes it at most to cosine "
        f"{other.cosine_l[top]:.3f}, distance {other.distance_l[top]:.2f}."
    )
st.markdown(summary)

st.subheader(f"How far {who} moved, layer by layer")
fig = make_word_effect(
    {w: e.distance_l for w, e in pairs},
    {w: e.cosine_l for w, e in pairs},
    effect.length_l,
    watched=tokens[token],
)
show.plot(fig, "hw_moved")
st.caption(
    f"How to read this: each bar is the distance between {who}'s vector in the ordinary pass and "
    "in a second pass with one word hidden, at the same layer (hover for the cosine and the "
    "angle). In the embedding, before the first layer, no token has read any other yet, so "
    "nothing has moved there. Cosines stay high even for large effects: a move of "
    f"{dist:.2f} on a vector about {effect.length_l[most]:.0f} long still leaves a cosine of "
    f"{cos:.3f}. So read the distances, and compare the two words."
    + ("" if other is not None else " (No other word is left to compare with.)")
)
table = {"layer": [layer_name(i) for i in range(effect.cosine_l.size)]}
for w, e in pairs:
    table |= {f"cosine, {w} hidden": e.cosine_l, f"distance, {w} hidden": e.distance_l}
table[f"length of {tokens[token]}"] = effect.length_l
st.dataframe(
    table, key="hw_table", hide_index=True, column_config=dict.fromkeys(list(table)[1:], NUM)
)

st.subheader(f"What {hw} adds to the meaning of {who}")
if probes:
    with_p, without_p = effect.probe_cosine_with_lp[after], effect.probe_cosine_without_lp[after]
    left, right = st.columns([3, 2])
    fig = make_word_effect_probes(
        with_p, without_p, probes, hidden_word=word, state_label=layer_name(after)
    )
    show.plot(fig, "hw_probes_chart", left)
    cols = {"with": with_p, "hidden": without_p, "with − hidden": with_p - without_p}
    right.dataframe(
        {"probe": probes} | cols,
        key="hw_probe_table",
        hide_index=True,
        column_config=dict.fromkeys(cols, NUM),
    )
    right.caption(
        f"How to read this: the cosine of {who} with each probe word (run through the model "
        f"alone), both taken {layer_name(after)} (the sidebar's layer); move the sidebar's "
        "Layer slider to compare another layer's output. A positive "
        f"difference means {hw} pulls {who} towards that probe."
    )
    big = int(np.argmax(np.abs(with_p - without_p)))
    pull = with_p[big] - without_p[big]
    left.markdown(
        f"Largest effect {layer_name(after)}: {hw} changes {who}'s cosine with "
        f"{safe.token(probes[big])} by {pull:+.3f} (pulls it "
        f"{'towards' if pull > 0 else 'away from'} that probe)."
    )
else:
    st.info("Add at least one probe word to see what the hidden word adds to the meaning.")
if effect.sentence_cosine is None:
    st.info(
        f"{trace.config.name} makes no sentence embedding (it is a decoder: it predicts the next "
        "token), so there is none to compare. In a decoder a hidden word changes only the tokens "
        "after it: the ones before it never saw it."
    )
else:
    for col, (name, e) in zip(st.columns(2), pairs, strict=False):
        col.metric(
            f"Sentence embedding: cosine, {safe.token(name)} hidden", f"{e.sentence_cosine:.3f}"
        )
        col.caption(
            f"Distance between the two embeddings: {e.sentence_distance:.3f} (each has "
            "length 1, so the largest possible is 2)."
        )
    st.caption(
        "How to read this: the cosine between the sentence's embedding (the mean of its tokens' "
        "final vectors, made length 1, as sentence-transformers computes it) with and without the "
        "word. Part of the change is only that the hidden word's own vector is left out of the "
        "mean."
    )

with st.expander("For engineers"):
    st.markdown(
        f"Hidden token positions {list(effect.hidden)} (the word's pieces, first occurrence); "
        f"watched position {list(effect.watched)}. The second pass is `trace_sentence(model, "
        f"text, WhatIf(hidden={effect.hidden}))`: the hidden keys are masked in every layer and "
        "every head, as transformers does for `attention_mask` 0; the hidden tokens keep their "
        "positions and still run their own query rows. `tests/core/test_hide_word.py` checks the "
        "patterns, hidden states and pooled embedding against transformers (eager attention) "
        "with `attention_mask` 0 at those positions, to 1e-5 / 1e-4 / 1e-5. Check on this "
        f"sentence: in the embedding the distance is {effect.distance_l[0]:.1e} (nothing read "
        "yet). "
        "Numbers come from `attention_core.methods.hide_word.hide_word`; the sentence embedding "
        "uses "
        "sentence-transformers' 256-token window and leaves the hidden tokens out of its mean."
    )
