"""Step: heads have jobs: every head of the tour's model named by a stated rule on the visitor's
sentence (the role map, small, and how many heads do each job), then one job tested where it
can be seen to matter: SmolLM2's induction heads on random tokens read twice, the loss of each
copy, and the what-if with the top induction heads switched off."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.core.family import Trace
from attention_core.lessons.explain import copy_stripe_q
from attention_core.lessons.head_words import head_sentences
from attention_core.methods.induction import LOW_ID, PROBE_SEED
from attention_core.methods.roles import LABELS, RULE, WHAT, HeadRole
from ui import glossary, safe
from ui.cache import model_error
from ui.router import Shared
from ui.text.cache import ProbeView, head_names, head_roles, probe_view
from ui.text.decoder import MODEL as DECODER
from ui.tour.common import chart, engineers
from viz.pattern_heatmap import make_pattern_heatmap
from viz.probe_loss import make_probe_loss
from viz.role_map import make_role_map

TITLE = "Heads have jobs"
PAGE = "all_heads"  # the page that explores this step further (ui.registry)
HINT = "every head's job, sortable by each job's score"
PREVIEW = 8  # probe tokens written out in the text

INTRO = (
    "The last step showed heads of one layer with different habits. Researchers give those "
    "habits names and measure them: a **previous-token** head reads the token just before each "
    "token, a **duplicate-token** head an earlier copy of the same token, an **induction** head "
    "the token that came *after* an earlier copy (what lets a model continue a repeat), and a "
    "**sink** puts its weight on the first token, whatever that token says. "
    "Each head gets a score per job: the share of all its weight that lands where the job would "
    "put it (TransformerLens's head detector)."
)


def render(shared: Shared, trace: Trace) -> None:
    glossary.say(INTRO)
    st.latex(
        r"\text{score}_{\text{job}} = \frac{\sum_{i,j} A_{ij}\,P_{ij}}{\sum_{i,j} A_{ij}},"
        r"\qquad A\text{: the head's weights},\;"
        r"P_{ij} = 1 \text{ where the job puts token } i\text{'s weight on token } j"
    )
    names = head_names(shared.model, shared.text)
    said = head_sentences(head_roles(shared.model, shared.text), trace.tokens.tokens)
    sentence_jobs(trace, names, said)
    glossary.heading("Testing one job: induction", level="subheader")
    if error := model_error(DECODER):
        glossary.box(
            f"SmolLM2 could not be loaded, so this part is not shown. {error}", kind="warning"
        )
        return
    probe = probe_view(DECODER)
    read_twice(probe)
    top_head(probe)
    losses(probe)
    _engineers(probe)


def counts(names: list[list[HeadRole]]) -> list[tuple[str, int]]:
    """How many heads the rule gives each role, most first (ties in the map's role order)."""
    found: dict[str, int] = {}
    for row in names:
        for head in row:
            found[head.role] = found.get(head.role, 0) + 1
    return sorted(found.items(), key=lambda item: -item[1])


def _job_line(role: str, n: int) -> str:
    what = WHAT.get(role, "no single job by the rule: no share passes it")
    return f"- {LABELS[role]}: **{n}** head{'s' if n != 1 else ''} ({what})"


def sentence_jobs(trace: Trace, names: list[list[HeadRole]], said: list[list[str]]) -> None:
    """The role map in small and the count per job, with the rule in plain words."""
    cfg = trace.config
    rule = RULE.text()
    glossary.say(
        f"On your sentence, each of {cfg.name}'s {cfg.n_layers * cfg.n_heads} heads is named "
        f"by one stated rule: {rule}."
    )
    left, right = st.columns([3, 2])
    chart(
        make_role_map(names, said, small=True),
        "learn_jobs_map",
        "How to read this: one cell per head, layer 0 at the top, coloured by its job; hover "
        "for its scores.",
        left,
    )
    glossary.say("\n".join(_job_line(role, n) for role, n in counts(names)), where=right)
    glossary.note(
        "These names hold for this sentence: the scores are measured on it, and another "
        "sentence (one with repeated words, say) can name other heads.",
        where=right,
    )


def read_twice(probe: ProbeView) -> None:
    """What the probe is, with its first tokens written out."""
    first = " ".join(safe.token(t) for t in probe.tokens[:PREVIEW])
    glossary.say(
        "A job is only a name until it is shown to matter. Induction can be tested on a model "
        f"that predicts the next token, SmolLM2: it reads **{probe.n} random tokens**, then "
        f"the same {probe.n} again. Random tokens cannot be guessed the first time; the second "
        "time, a model that has learned to continue a repeat can predict each token from the "
        f"first copy. The run begins {first} … and after {probe.n} tokens it begins again "
        "with the same tokens."
    )


def top_head(probe: ProbeView) -> None:
    """The top induction head's pattern over the probe: the stripe of the second copy."""
    layer, head, score = probe.top[0]
    stripe = float(copy_stripe_q(probe.pattern_qk, probe.n).mean())
    chart(
        make_pattern_heatmap(
            probe.pattern_qk,
            list(probe.tokens),
            title=f"SmolLM2, layer {layer}, head {head} on the tokens read twice",
            numbers=False,
        ),
        "learn_jobs_probe",
        "How to read this: each row is a token (the query) and its weights over the tokens "
        "before it. In the lower half (the second copy) a stripe runs parallel to the "
        "diagonal, one step right of each token's earlier copy: token i reads token "
        f"i − {probe.n - 1}, the one that followed its earlier copy.",
    )
    glossary.say(
        f"The head that scores highest for induction is **layer {layer}, head {head}**: its "
        f"induction score is **{score:.2f}**. In the second copy, each token gives on average "
        f"**{stripe:.0%}** of its weight to the token that followed its earlier copy, the token "
        "it should predict next."
    )


def losses(probe: ProbeView) -> None:
    """The loss of each copy, and the what-if with the top induction heads switched off."""
    assert probe.loss is not None and probe.knocked is not None  # SmolLM2 predicts tokens
    first = float(np.nanmean(probe.loss[: probe.n]))
    second, knocked = (
        float(np.mean(probe.loss[probe.n :])),
        float(np.mean(probe.knocked[probe.n :])),
    )
    k = len(probe.top)
    chart(
        make_probe_loss(probe.loss, probe.knocked, f"second copy, top {k} heads off (what-if)"),
        "learn_jobs_loss",
        "How to read this: the loss of each token, −log of the probability the model gave it "
        "before seeing it (0: certain; higher: more surprised), over its position in the copy.",
    )
    st.latex(
        rf"\text{{loss}}_i = -\log p(t_i \mid t_{{<i}}):\quad "
        rf"\overline{{\text{{loss}}}}_{{\text{{first copy}}}} = {first:.1f},\quad "
        rf"\overline{{\text{{loss}}}}_{{\text{{second copy}}}} = {second:.1f}"
    )
    glossary.say(
        f"Averaged over the copy, the loss is **{first:.1f}** on the first copy and "
        f"**{second:.1f}** on the second: the model uses the repeat."
    )
    heads = ", ".join(f"layer {lay} head {h}" for lay, h, _ in probe.top)
    glossary.say(
        f"**What-if:** with the {k} heads that score highest for induction switched off "
        f"({heads}), the second copy's loss rises from **{second:.1f}** to **{knocked:.1f}**. "
        f"The model's other {probe.n_heads - k} heads still run."
    )


def _engineers(probe: ProbeView) -> None:
    with engineers():
        st.markdown(
            "- Scores: `attention_core.methods.roles.role_scores(trace)`, TransformerLens's "
            '`head_detector` (error measure "mul": score = Σ(A ⊙ P) / ΣA for a head\'s pattern '
            "A and detection pattern P, nothing excluded); induction's P[i, j] = 1 where token "
            "j − 1 equals token i, j ≤ i. Names: `name_heads(scores)` under `RULE`.\n"
            f"- Probe: `methods.induction.run_probe(model, n={probe.n}, seed={PROBE_SEED})`: "
            f"ids drawn by `numpy.random.default_rng({PROBE_SEED}).integers({LOW_ID}, vocab)`, "
            f"then repeated; first ids {probe.ids[:PREVIEW].tolist()}.\n"
            "- Loss: −log p(token | tokens before it) from the LM head, "
            "`methods.induction.token_loss`; the what-if: `knock_probe(model, probe)`, "
            f"`WhatIf(knocked={tuple((lay, h) for lay, h, _ in probe.top)})` (each head's z "
            "zeroed before W_O). Stripe: `lessons.explain.copy_stripe_q(pattern, n)`."
        )
