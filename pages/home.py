"""Start here: what attention does, in a few sentences, and where each page takes you."""

from ui import glossary, router
from ui.cache import model_config, model_error
from ui.text import home

shared = router.shared()
glossary.heading("Attention, step by step", level="title")
cfg, error = model_config(shared.model), model_error(shared.model)
home.intro(shared, cfg, error)
home.one_head(shared, cfg, error)
if not error and shared.text.strip():
    home.your_sentence(shared, router.opening_view(shared.model, shared.text))
glossary.heading("Where to go", level="subheader")
home.where_to_go()
