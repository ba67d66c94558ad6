"""Beyond the weights (pages/beyond.py): what each head really moves and how the layers mix the
tokens (``weights``), heads knocked out (``knock``) and ranked by their effect (``sweep``), a
decoder's guess after every layer (``lens``), and the page's cached computations (``cache``). Its
session entries are declared in ``ui.state.beyond``."""
