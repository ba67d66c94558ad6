"""Beyond the weights: what each head really moves (the norm-weighted view), how the layers mix
the tokens (rollout), what the model does without some heads (knock-out and the importance
sweep), and a decoder's guess after every layer (the logit lens), on the sidebar's sentence."""

from ui import glossary, router
from ui.beyond import knock, lens, sweep, weights

shared = router.shared()
trace = router.require_trace(shared)
glossary.heading("Beyond the weights", level="title")
glossary.note(
    "Every attention picture shows the weights. They say where a head looks, not what it "
    "changes. Here, on your sentence: what each head really passes on, how the layers mix the "
    f"tokens, and what {trace.config.name} does when heads are switched off."
)

glossary.heading("1 · A weight is not an effect", level="subheader")
weights.norm_weighted(shared, trace)

glossary.heading("2 · How the layers mix the tokens: attention rollout", level="subheader")
weights.rollout(shared, trace)

glossary.heading("3 · Knock out heads", level="subheader")
glossary.say(
    "Switch heads off (their output is replaced by zeros) and run the sentence again: what "
    "changes is what those heads did."
)
heads = knock.choose_heads(shared, trace)
at = knock.position(shared, trace)
knock.render(shared, trace, heads, at)
glossary.say("**Which heads matter here?** Knock out each head alone and rank them.")
sweep.render(shared, trace, at)

glossary.heading("4 · The logit lens: the guess after every layer", level="subheader")
lens.render(shared, trace, at)

glossary.note(weights.READ_MORE)
weights.engineers(trace)
