"""The notes' examples (pages/notes.py), each run on the real models beside the notes' own
numbers: the word tables of "dirty quantum plumbing" and "fluffy blue creature" (``tables``,
with the page's cached measurements), then "Jane visits Africa" as a soft SELECT, dot product or
cosine, the "monster" vector and the context window (``select``)."""
