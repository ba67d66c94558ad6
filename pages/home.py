"""Start here: what attention does, in a few sentences, and where each page takes you."""

import streamlit as st

from ui import explore, registry, router, safe
from ui.cache import get_trace, model_config, model_error

shared = router.shared()

st.title("Attention, step by step")
cfg = model_config(shared.model)
about = f"{cfg.name}: {cfg.n_layers} layers × {cfg.n_heads} heads" if cfg else shared.model
error = model_error(shared.model)
if error:
    st.warning(
        f"The model could not be loaded, so the pages that run it show only this message. {error}"
        "  \nBuild your own head still works without it, on hashed random vectors."
    )
st.markdown(
    "A word on its own has one fixed vector, whatever sentence it sits in. **Attention** is how "
    "a transformer lets each word look at the others and move its vector toward what it finds: "
    "*bank* drifts toward *water* next to *river* and toward *money* next to *deposit*. This app "
    f"runs a real trained model ({about}) on **your** sentence and shows "
    "every number on the way, computed live."
)
st.markdown(
    "**The path of one attention head**, in the order the pages show it:  \n"
    "1. every token gets a vector *E* (its embedding);  \n"
    "2. each vector asks a question, its **query** *q = E·W_Q*, and offers an answer, its "
    "**key** *k = E·W_K*;  \n"
    "3. a query scores every key by a dot product *q·k*, divided by √d_k;  \n"
    "4. softmax turns one query's scores into weights that sum to 1: the **pattern**;  \n"
    "5. the weights blend the tokens' **values** *v = E·W_V* into this head's proposed change. "
    + (
        "The layer adds up all its heads' proposals (plus a small fixed bias) into one update "
        "**ΔE**; the token's next vector is *E + ΔE*, rescaled (LayerNorm), then changed again "
        "by a small feed-forward network and rescaled once more."
        if cfg is None or not cfg.causal
        else "The layer adds up all its heads' proposals into one update **ΔE**; the token's "
        "next vector is *E + ΔE*, then changed again by a feed-forward network (each part reads "
        "a rescaled copy of the vector, RMSNorm). In this decoder a token reads only itself and "
        "the tokens before it."
    )
    + f" {cfg.n_layers if cfg else 'Several'} such blocks in a row make the vector the model "
    "finally uses."
)
if not error and shared.text.strip():
    view = router.opening_view(shared.model, shared.text)
    if view:
        st.subheader("Your sentence, one head")
        skipped = "the first token" if cfg and cfg.causal else "[CLS]/[SEP]"
        st.markdown(safe.md(view.said))
        switches = {"layer": view.layer, "head": view.head, "q": view.query, "k": view.key}
        explore.shared_only(
            get_trace(shared.model, shared.text),
            shared.model,
            shared.text,
            "home_pattern",
            stages=("pattern",),
            switches=switches,
            controls=(),
            tell=False,
        )
        st.caption(
            "How to read this: each row is a token reading the sentence, each column a token it "
            "can read; the brighter the cell, the more weight. Shown: the head where one word "
            f"(not a little word like “the”, not {skipped}, not itself) puts the most weight on "
            "another word"
            + (
                ", chosen for this example by hand."
                if view.by_hand
                else ", measured on your sentence."
            )
            + " Open it on the Attention pattern page to take it apart."
        )
st.subheader("Where to go")
st.caption("Type a sentence in the sidebar first, or pick an example; every page uses it.")
for page in registry.PAGES[1:]:  # every page but this one
    st.page_link(page.path, label=page.title, icon=page.icon)
    st.caption(page.blurb)
