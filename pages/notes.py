"""The notes' examples: each example of the learners' notes run on the real models, the notes'
own numbers beside the model's, and where and why they differ."""

import streamlit as st

from ui import glossary, router
from ui.cache import LABELS, model_error
from ui.text import decoder
from ui.text.notes import bank, delta, select, slips, tables

shared = router.shared()  # the sidebar's model runs every example but the decoder's table
model = shared.model
glossary.heading("The notes' examples", level="title")
if error := model_error(model) or model_error(decoder.MODEL):
    st.error(f"A model could not be loaded. {error}")
    st.stop()
glossary.note(
    f"Each example of the notes, run on {LABELS[model]} (pick the model in the sidebar), with the "
    "notes' own numbers beside the model's. The examples bring their own sentences: the "
    "sidebar's sentence, layer and head are not used here, and each head shown is picked by a "
    "rule stated next to it."
)

glossary.heading("1 · “Dirty quantum plumbing”: the notes' table on a real decoder")
tables.plumbing()
delta.delta()
glossary.heading("2 · “Fluffy blue creature”, “verdant forest”: adjectives and their nouns")
tables.fluffy(model)
glossary.heading("3 · “Jane visits Africa” as a soft SELECT")
select.jane(model)
glossary.heading("4 · Dot product or cosine similarity?")
select.dot_cosine(model)
glossary.heading("5 · Does “monster” move towards “Mike Wazowski”?")
select.monster(model)
glossary.heading("6 · “Bank” by the river and “bank” for money")
bank.bank(model)
glossary.heading("7 · The context window")
select.context(model)
glossary.heading("8 · Two more slips in the notes, said plainly")
slips.value_slip(model)
slips.embedding_slip(model)

tables.engineers()
