"""The "Verify against the reference library" button of the pattern and embedding pages.

Pressed, it runs the page's sentence through the libraries that run the sidebar's model
(references.text: transformers, and sentence-transformers for MiniLM's sentence vector) in this
process, and shows how far their numbers are from ours: a small table and one plain sentence
(ui.verify). The libraries are imported only when the button is pressed; when they are missing it
says how to install them. One check per (model, sentence) is kept for every visitor.
"""

from __future__ import annotations

import time

import streamlit as st

from attention_core.core.family import Trace, pools_sentence
from references.text import (
    INSTALL,
    NEEDS,
    TOLERANCE,
    check_sentence,
    compare_patterns,
    compare_sentence,
    compare_states,
    round_up,
)
from server.budget import Busy, reserved, verify_peak
from ui import glossary, safe
from ui.cache import get_model, trace_store
from ui.router import Shared
from ui.state.shared import VERIFY, Verify
from ui.verify import BUTTON, Verdict, differ, engineers, lacking, table

LIBRARY = {"minilm": "sentence-transformers and transformers", "smollm2": "transformers"}
SOURCE = {  # what the reference library runs, in plain words (issue 35: not "as published")
    "minilm": "the libraries the model was published for, on the same files",
    "smollm2": "which reads the same third-party 4-bit GGUF file (its weights unpacked to "
    "32-bit numbers) with its own code",
}
CALLS = {
    "minilm": '`transformers.AutoModel.from_pretrained(folder, attn_implementation="eager")` '
    "(a `BertModel`) with `output_attentions=True, output_hidden_states=True` for the weights "
    "and vectors; `sentence_transformers.SentenceTransformer(folder).encode(text)` for the "
    "sentence's vector (it reads at most 256 tokens, as our engine's pooled vector does)",
    "smollm2": "`transformers.AutoModelForCausalLM.from_pretrained(folder, gguf_file=...,"
    ' attn_implementation="eager", dtype=torch.float32)` (the GGUF file dequantized by '
    "`gguf`) with `output_attentions=True, output_hidden_states=True`",
}


def _token_problem(ours: list[int], theirs: tuple[int, ...], tokens: tuple[str, ...]) -> str:
    if ours == list(theirs):
        return ""
    if len(ours) != len(theirs):
        return f"it splits the text into {len(theirs)} tokens where ours has {len(ours)}"
    first = next(i for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b)
    return f"its token {first} differs from ours ({safe.token(tokens[first])})"


# Worst case 16 × a few hundred bytes: the check's arrays are dropped, only the verdict is kept.
@st.cache_data(max_entries=16, show_spinner=False)
def verified(model: str, text: str, _trace: Trace) -> Verdict:
    """Run ``text`` through ``model``'s reference libraries and compare with ``_trace`` (the
    sentence's own trace; not hashed: the model and text name it)."""
    start = time.perf_counter()
    cut = _trace.n_tokens if _trace.tokens.n_cut else None  # ours was cut: cut theirs the same
    # held before torch is imported: Busy, nothing loaded, when there is no room
    with reserved(trace_store(), verify_peak(model, _trace.n_tokens)):
        checked = check_sentence(model, str(get_model(model).path), text, cut)
    seconds = time.perf_counter() - start
    tokens = _trace.tokens.tokens
    problem = _token_problem(_trace.tokens.input_ids_t.tolist(), checked.ids, tokens)
    if problem:
        return Verdict((), problem, seconds)
    tol = TOLERANCE[model]
    found = [
        compare_patterns(_trace.pattern_lhqk, checked.pattern_lhqk, tokens, tol),
        compare_states(_trace.hidden_ltd, checked.hidden_ltd, tokens, tol, _trace.config),
    ]
    if checked.sentence_d is not None and pools_sentence(_trace):
        found.append(compare_sentence(_trace.sentence_embedding_d, checked.sentence_d, tol))
    return Verdict(tuple(found), "", seconds)


def summary(model: str, verdict: Verdict) -> str:
    """The one plain sentence a learner reads."""
    lib = LIBRARY[model]
    if verdict.token_problem:
        return f"The library ({lib}) reads this text differently: {verdict.token_problem}."
    weights, vectors = verdict.differences[:2]
    if all(d.agrees for d in verdict.differences):
        return (
            f"Our numbers and those of {lib} agree on this sentence: the attention weights to "
            f"within {round_up(weights.relative)}, the token vectors to within "
            f"{round_up(vectors.relative)} times their layer's largest number. That is "
            "rounding in the last digits a computer keeps."
        )
    return differ(lib, verdict)


def _text_engineers(model: str, verdict: Verdict, trace: Trace) -> str:
    return (
        f"- Reference: {CALLS[model]}, on the same files our engine reads "
        f"(`references.text.check_sentence`), in this process.\n"
        f"- Ours: `trace.pattern_lhqk`, `trace.hidden_ltd`"
        + (", `trace.sentence_embedding_d`" if model == "minilm" else "")
        + " of the plain trace (no what-if switches).\n"
        "- Largest |ours − theirs|; token vectors relative to each state's largest |value| "
        f"(`hidden_ltd[l]`); tolerance {TOLERANCE[model]:g} (`references.text.TOLERANCE`).\n"
        f"- {trace.n_tokens} tokens; the reference libraries took {verdict.seconds:.1f} s "
        "when this sentence was first checked (loading included), kept per (model, text) "
        "for every visitor (`st.cache_data`, 16 entries).\n"
        f"- Needs {', '.join(NEEDS[model])}: `{INSTALL[model]}`."
    )


def button(shared: Shared, trace: Trace) -> None:
    """The button, and after it is pressed the check of the page's sentence on the sidebar's model
    (kept on screen until the sentence or model changes)."""
    if shared.model not in LIBRARY:  # Whisper's check is on Listen: listen_button
        return
    glossary.heading("Check it yourself", level="subheader")
    glossary.note(
        f"Run this sentence through {LIBRARY[shared.model]}, {SOURCE[shared.model]}, and see how "
        "far its numbers are from ours. It checks the model as it is, without any what-if switch."
    )
    asked = (shared.model, shared.text)
    if st.button(BUTTON, key=Verify.run.key, icon=":material/fact_check:"):
        VERIFY.sentence = asked
    if VERIFY.sentence != asked:
        return
    if lacking(shared.model):
        return
    try:
        with st.spinner(f"Running your sentence through {LIBRARY[shared.model]}…"):
            verdict = verified(shared.model, shared.text, trace)
    except Busy as err:
        glossary.box(str(err), icon=":material/hourglass_empty:", kind="warning")
        return
    glossary.say(summary(shared.model, verdict))
    if verdict.differences:
        table(verdict)
    engineers(_text_engineers(shared.model, verdict, trace))
