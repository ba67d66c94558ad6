"""What a head does, in sentences built from its numbers and nothing else.

Two measures, both from the engine:

- one weight (query → key) against an even spread over the keys that query may see, ``1 / n``
  where n counts the visible keys (``methods.roles.visible_qk``): "Layer 1, head 9: “bank” puts
  0.750 of its weight on “river”, the token just before it; an even spread over the 7 tokens it
  can see would give 0.143.";
- the head's role over the whole text by ``methods.roles.RULE``, with its score against an even
  spread's: every role that passes the rule, largest share first ("a first-token sink, 71% of its
  weight on “[CLS]” (an even spread: 14%), and a previous-token head, 38% …"), "a broad head", or
  "mixed, with no single job" and its two largest shares.

Nothing here says what a word means to another word, or why a head weighs it: only measured
relations (a weight, an even spread, a role and its share, and positions such as the token just
before or an earlier copy of the same token). Pure functions, no streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

from attention_core.core.family import Trace
from attention_core.core.tokens import Tokens
from attention_core.methods.geometry import SPACE, split_words
from attention_core.methods.roles import (
    LABELS,
    NAMED,
    RULE,
    RoleScores,
    name_head,
    visible_qk,
)
from attention_core.methods.telling import TellingHead

SINKS = ("first_token", "last_token")


def visible_keys(trace: Trace, query: int) -> int:
    """How many keys ``query`` may see (a decoder's query: itself and the tokens before it)."""
    return int(visible_qk(trace)[query].sum())


def even_weight(trace: Trace, query: int) -> float:
    """The weight each key would get if ``query`` spread its weight evenly over what it sees."""
    return 1.0 / max(visible_keys(trace, query), 1)


def shown(piece: str) -> str:
    """A token as prose shows it: without the mark of the space it starts with."""
    return piece.removeprefix(SPACE) or piece


def token_name(tokens: Tokens, position: int) -> str:
    """A token in quotes; a piece of a longer word names that word too."""
    piece = tokens.tokens[position]
    for word, pieces in split_words(tokens.tokens):
        if position in pieces and len(pieces) > 1:
            return f"“{shown(piece)}” (part of “{word}”)"
    return f"“{shown(piece)}”"


def relation(tokens: Tokens, query: int, key: int) -> str:
    """Where ``key`` stands from ``query`` when a position or a repeat says it, in parentheses
    (" (the token just before it)"); else ""."""
    same = tokens.input_ids_t[key] == tokens.input_ids_t[query] and key != query
    if key == query - 1:
        said = "the token just before it"
    elif key == query + 1:
        said = "the token just after it"
    elif same:
        said = f"{'an earlier' if key < query else 'a later'} copy of the same token"
    else:
        return ""
    return f" ({said})"


def weight_sentence(
    trace: Trace,
    layer: int,
    head: int,
    query: int,
    keys: int | Sequence[int],
    lead: str | None = None,
) -> str:
    """One head's weights from ``query`` to ``keys`` beside an even spread's, as a sentence that
    starts with ``lead`` (default "Layer L, head H")."""
    tokens = trace.tokens
    picked = [keys] if isinstance(keys, int) else list(keys)
    row_k = trace.pattern_lhqk[layer][head, query]
    parts = [
        f"{float(row_k[k]):.3f}{' of its weight' if i == 0 else ''} on "
        f"{token_name(tokens, k)}{relation(tokens, query, k)}"
        for i, k in enumerate(picked)
    ]
    said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    n, even = visible_keys(trace, query), even_weight(trace, query)
    each = "" if len(picked) == 1 else " to each"
    return (
        f"{lead or f'Layer {layer}, head {head}'}: {token_name(tokens, query)} puts {said}; an "
        f"even spread over the {n} tokens it can see would give {even:.3f}{each}."
    )


def where(role: str, tokens: Sequence[str]) -> str:
    """Where a role puts a head's weight, in positions (``tokens``: the pass's tokens)."""
    places = {
        "previous_token": "on the token just before each token",
        "duplicate_token": "on earlier copies of each token",
        "induction": "on the token after an earlier copy of each token",
        "self": "on each token itself",
        "first_token": f"on the first token, “{shown(tokens[0])}”" if tokens else "",
        "last_token": f"on the closing “{shown(tokens[-1])}”" if tokens else "",
    }
    return places[role]


def noun(role: str) -> str:
    """A role's name as a noun phrase: "a previous-token head", "a first-token sink"."""
    return f"a {LABELS[role]}" + ("" if role in SINKS else " head")


def passing(scores: RoleScores, layer: int, head: int) -> list[tuple[str, float, float]]:
    """Every named role the head passes ``RULE`` at: (role, score, even), largest share first."""
    found = []
    for role in NAMED:
        if role in scores.scores_lh:
            score = float(scores.scores_lh[role][layer, head])
            if RULE.passes(role, score, scores.even[role]):
                found.append((role, score, scores.even[role]))
    return sorted(found, key=lambda item: -item[1])


def role_phrase(scores: RoleScores, layer: int, head: int, tokens: Sequence[str]) -> str:
    """What the head is by ``RULE`` over the whole text, with its shares and an even spread's:
    "a first-token sink, 71% of its weight on the first token, “[CLS]” (an even spread: 14%),
    and a previous-token head, …", "a broad head: …" or "mixed, with no single job: …"."""
    named = name_head(scores, layer, head)
    if named.role == "broad":
        return (
            f"a broad head: each row of its weights is on average {named.score:.0%} as even as "
            f"it can be (the rule asks for {RULE.broad_floor:.0%})"
        )
    roles = passing(scores, layer, head)
    if roles:
        return ", and ".join(
            f"{noun(role)}, {score:.0%} of its weight {where(role, tokens)} (an even spread: "
            f"{even:.0%})"
            for role, score, even in roles
        )
    (a, sa), (b, sb) = named.top
    return (
        f"mixed, with no single job: its two largest shares are {LABELS[a]} {sa:.0%} (an even "
        f"spread: {scores.even[a]:.0%}) and {LABELS[b]} {sb:.0%} ({scores.even[b]:.0%}), where a "
        f"job needs {RULE.margin * 100:.0f} points more than an even spread's share"
    )


def head_sentence(
    scores: RoleScores,
    layer: int,
    head: int,
    tokens: Sequence[str],
    subject: str | None = None,
) -> str:
    """The head's role over the whole text as a sentence: "Over the whole text, layer 1, head 9
    is, by the rule, …" (``subject`` replaces "layer L, head H", e.g. "this head")."""
    who = subject or f"layer {layer}, head {head}"
    return (
        f"Over the whole text, {who} is, by the rule, {role_phrase(scores, layer, head, tokens)}."
    )


def head_sentences(scores: RoleScores, tokens: Sequence[str]) -> list[list[str]]:
    """``head_sentence`` of every head, [layer][head] (the role map's hover)."""
    n_layers, n_heads = scores.scores_lh["self"].shape
    return [
        [head_sentence(scores, lay, h, tokens) for h in range(n_heads)] for lay in range(n_layers)
    ]


def view_sentence(
    trace: Trace,
    scores: RoleScores,
    layer: int,
    head: int,
    query: int,
    keys: int | Sequence[int],
    lead: str | None = None,
) -> str:
    """The weights of one view (``weight_sentence``) and what its head is by the rule over the
    whole text (``head_sentence``), in two sentences."""
    tokens = trace.tokens.tokens
    return (
        weight_sentence(trace, layer, head, query, keys, lead)
        + " "
        + head_sentence(scores, layer, head, tokens, "this head")
    )


def telling_sentence(trace: Trace, scores: RoleScores, pick: TellingHead) -> str:
    """The most telling head's pick (``methods.telling``) in words: its weight beside an even
    spread's, and the head's role by the rule."""
    return view_sentence(trace, scores, pick.layer, pick.head, pick.query, pick.key)


def rule_sentence() -> str:
    """The naming rule, as a sentence a page can show beside a role."""
    return f"The rule: {RULE.text()}."


def count_sentence(scores: RoleScores, layer: int | None = None) -> str:
    """How many heads (of one layer, or of every layer) pass each role on this text: "On your
    sentence, by the rule, the 12 heads of layer 2 are 5 first-token sinks, 1 previous-token
    head, 2 broad heads and 4 mixed (no single job)." A head that passes two roles is counted
    under its name (``methods.roles.name_head``)."""
    n_layers, n_heads = scores.scores_lh["self"].shape
    layers = range(n_layers) if layer is None else (layer,)
    names = [name_head(scores, lay, h).role for lay in layers for h in range(n_heads)]
    order = [*NAMED, "broad", "mixed"]
    counts = [(role, names.count(role)) for role in order if names.count(role)]
    parts = [f"{c} {_plural(role, c)}" for role, c in counts]
    said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    which = f"of layer {layer}" if layer is not None else f"of its {n_layers} layers"
    return f"On your sentence, by the rule, the {len(names)} heads {which} are {said}."


def _plural(role: str, count: int) -> str:
    """A role's name counted: "1 previous-token head", "5 first-token sinks", "4 mixed"."""
    if role == "mixed":
        return "mixed (no single job)"
    one = LABELS[role] if role in SINKS else f"{LABELS[role]} head"
    return one if count == 1 else one + "s"


def sink_sentence(scores: RoleScores, tokens: Sequence[str]) -> str:
    """How many heads pass the rule as a sink on this text: "On your sentence, by the rule, 42 of
    the 72 heads are first-token sinks or [SEP] sinks: 30 points more of their weight than an
    even spread would put on the first token, “[CLS]”, or on the closing “[SEP]”."""
    n_layers, n_heads = scores.scores_lh["self"].shape
    sinks = [role for role in SINKS if role in scores.scores_lh]
    count = sum(
        any(RULE.passes(r, float(scores.scores_lh[r][lay, h]), scores.even[r]) for r in sinks)
        for lay in range(n_layers)
        for h in range(n_heads)
    )
    kinds = " or ".join(f"{LABELS[r]}s" for r in sinks)
    places = ", or ".join(where(r, tokens).removeprefix("on ") for r in sinks)
    return (
        f"On your sentence, by the rule, {count} of the {n_layers * n_heads} heads are {kinds}: "
        f"{RULE.margin * 100:.0f} points more of their weight than an even spread would put "
        f"on {places}."
    )
