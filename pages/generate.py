"""Generate, token by token: SmolLM2 writes one token per click; each step shows the new token's
attention over everything before it, the model's top guesses, and the KV cache it keeps."""

from ui import glossary, router
from ui.text import generate

router.shared()  # frames the run (sidebar, URL); the sidebar shows SmolLM2 here (ui.registry)
glossary.heading("Generate, token by token", level="title")
glossary.note(generate.LEAD)
generate.require_model()
prompt = generate.prompt()
generate.steps(prompt)
