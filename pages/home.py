"""Start here: what attention does, in a few sentences, and where each page takes you."""

import streamlit as st

from ui import registry, router
from ui.cache import model_config, model_error
from ui.text import home

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
    "a transformer lets each word look at the others and move its vector by what it finds. This "
    f"app runs a real trained model ({about}) on **your** sentence and shows every number on the "
    "way, computed live." + ("" if error else " " + home.bank_sentence(shared.model))
)
bias, ffn = home.block_phrases(shared, cfg) if not error else ("", "a feed-forward network")
biased = cfg is None or cfg.family == "bert"  # BERT's projections have biases; Llama's none
q, k, v = (f"{x} = E·W_{x.upper()}" + (f" + b_{x.upper()}" if biased else "") for x in "qkv")
st.markdown(
    "**The path of one attention head**, in the order the pages show it:  \n"
    "1. every token gets a vector *E* (its embedding; in later layers, what the layer before "
    "hands on);  \n"
    f"2. each vector asks a question, its **query** *{q}*, and offers an answer, its "
    f"**key** *{k}*;  \n"
    "3. a query scores every key by a dot product *q·k*, divided by √d_k;  \n"
    "4. softmax turns one query's scores into weights that sum to 1: the **pattern**;  \n"
    f"5. the weights blend the tokens' **values** *{v}* into this head's proposed change. "
    + (
        f"The layer adds up all its heads' proposals{bias} into one update **ΔE**. *E + ΔE* "
        "is not yet the next vector: it is re-centred and rescaled (LayerNorm: mean 0 and "
        f"spread 1, then a learned gain and bias), changed again by {ffn}, and normalized "
        "once more."
        if cfg is None or not cfg.causal
        else "The layer adds up all its heads' proposals into one update **ΔE**; the token's "
        f"vector becomes *E + ΔE*, then is changed again by {ffn} (each part reads a rescaled "
        "copy of the vector, RMSNorm). In this decoder a token reads only itself and the tokens "
        "before it."
    )
    + f" {cfg.n_layers if cfg else 'Several'} such blocks in a row make the vector the model "
    "finally uses."
)
if not error and shared.text.strip():
    view = router.opening_view(shared.model, shared.text)
    home.your_sentence(shared, view, router.open_view)
st.subheader("Where to go")
st.caption("Type a sentence in the sidebar first, or pick an example; every page uses it.")
for page in registry.PAGES[1:]:  # every page but this one
    st.page_link(page.path, label=page.title, icon=page.icon)
    st.caption(page.blurb)
