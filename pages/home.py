"""Start here: what attention does, in a few sentences, and where each page takes you."""

import streamlit as st

from ui import sidebar
from ui.cache import model_error

shared = sidebar.shared()

st.title("Attention, step by step")
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
    "runs a real trained model (all-MiniLM-L6-v2: 6 layers × 12 heads) on **your** sentence and "
    "shows every number on the way, computed live."
)
st.markdown(
    "**The path of one attention head**, in the order the pages show it:  \n"
    "1. every token gets a vector *E* (its embedding);  \n"
    "2. each vector asks a question, its **query** *q = E·W_Q*, and offers an answer, its "
    "**key** *k = E·W_K*;  \n"
    "3. a query scores every key by a dot product *q·k*, divided by √d_k;  \n"
    "4. softmax turns one query's scores into weights that sum to 1: the **pattern**;  \n"
    "5. the weights blend the tokens' **values** *v = E·W_V* into an update **ΔE**, and "
    "*E′ = E + ΔE* is the token's vector in context."
)
st.subheader("Where to go")
st.caption("Type a sentence in the sidebar first, or pick an example; every page uses it.")
LINKS = [
    ("pages/learn.py", "Learn step by step", ":material/school:",
     "New to Q, K and V? A guided tour of all of it, eleven short steps, on your sentence."),
    ("pages/pattern.py", "Attention pattern", ":material/grid_on:",
     "One head: scores → scaled → masked → softmax, and the arithmetic behind any cell."),
    ("pages/all_heads.py", "All heads", ":material/apps:",
     "Every head of every layer at once, sorted by what it attends to; click one to open it."),
    ("pages/values.py", "Value updates ΔE", ":material/add_circle:",
     "How the weights blend value vectors into the update each head proposes."),
    ("pages/embedding_shift.py", "Embedding shift", ":material/scatter_plot:",
     "Watch each token's vector move with context, layer by layer, next to probe words."),
    ("pages/build_head.py", "Build your own head", ":material/tune:",
     "Choose heads, d_k, weights and masks; see why scores are divided by √d_k."),
    ("pages/compare.py", "Compare sentences", ":material/compare_arrows:",
     "Two sentences on the same head; the same word's vector compared layer by layer."),
]  # fmt: skip
for path, label, icon, blurb in LINKS:
    st.page_link(path, label=label, icon=icon)
    st.caption(blurb)
