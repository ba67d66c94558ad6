"""The text pages' rooms: the pages that run a text model (MiniLM or SmolLM2), one module per page
(``home``, ``pattern``, ``all_heads``, ``values``, ``embedding_shift``, ``hide_word``,
``build_head``, ``compare``, ``decoder``, ``generate`` with its session's ``generation``) and
one package (``notes``); their cached computations (``cache``) and the pattern and embedding
pages' verify button (``verify``). Their session entries are declared in ``ui.state.text``."""
