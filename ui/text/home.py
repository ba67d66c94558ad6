"""Start here (pages/home.py): what attention does in a few sentences, with the numbers that back
them (what the bank probes really show, how long the attention bias is next to ΔE, how many
weights the feed-forward network has next to attention), the sentence's head drawn with the
sidebar's layer and head (one truth per screen) and said from its numbers
(``attention_core.lessons.head_words``), and where each page takes the visitor."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import streamlit as st
from numpy.typing import NDArray

from attention_core import ModelConfig, cosine, output_bias
from attention_core.core.family import Trace
from attention_core.lessons.head_words import (
    head_sentence,
    rule_sentence,
    view_sentence,
    weight_sentence,
)
from attention_core.methods.roles import RoleScores
from attention_core.methods.telling import NEIGHBOUR_SHARE
from ui import explore, glossary, registry, safe
from ui.cache import get_model, get_trace
from ui.presets import BANK_PROBES, MONEY_BANK, RIVER_BANK, picked_by
from ui.router import OpeningView, Shared, cut_notice, open_view
from ui.state.text import Home
from ui.text.cache import head_roles, read_probes

ATTENTION = ("w_qkv", "w_o_")  # a block's attention matrices (W_Q, W_K, W_V; W_O)
FEED_FORWARD = ("w_in", "w_out", "w_gate", "w_up", "w_down")  # its feed-forward matrices


@dataclass(frozen=True)
class BankContrast:
    """The two "bank"s after the last layer against one probe of each sense."""

    water: str  # the river-sense probe the river sentence pulls "bank" towards most
    money: str  # the money-sense probe the deposit sentence pulls "bank" towards most
    river_water: float  # cosine of "bank" in the river sentence with ``water``
    river_money: float
    deposit_water: float  # cosine of "bank" in the deposit sentence with ``water``
    deposit_money: float


def bank_position(trace: Trace) -> int | None:
    """The last token that is the word "bank" (whatever the tokenizer's space mark)."""
    found = [i for i, t in enumerate(trace.tokens.tokens) if t.lstrip("▁Ġ#").lower() == "bank"]
    return found[-1] if found else None


def bank_contrast(model: str) -> BankContrast | None:
    """Measure what the bank probes show on ``model``; None when it cannot read them."""
    probes, vectors_lpd, _ = read_probes(model, ", ".join(BANK_PROBES))
    traces = [get_trace(model, text) for text in (RIVER_BANK, MONEY_BANK)]
    where = [bank_position(trace) for trace in traces]
    if len(probes) != len(BANK_PROBES) or None in where:
        return None
    river_p, deposit_p = (
        cosine(trace.hidden_ltd[-1, t], vectors_lpd[-1])
        for trace, t in zip(traces, where, strict=True)
    )  # [d] vs [p,d] -> [p]
    water = int(np.argmax((river_p - deposit_p)[:2]))  # shore, stream
    money = 2 + int(np.argmax((deposit_p - river_p)[2:]))  # money, finance
    return BankContrast(
        probes[water],
        probes[money],
        float(river_p[water]),
        float(river_p[money]),
        float(deposit_p[water]),
        float(deposit_p[money]),
    )


def bank_sentence(model: str) -> str:
    """What the bank probes show on ``model``, in plain words with the numbers."""
    c = bank_contrast(model)
    if c is None:
        return ""
    said = (
        f"Take *bank*: after the model's last layer, in “{RIVER_BANK}” it has cosine "
        f"{c.river_water:.3f} with the word *{c.water}* and {c.river_money:.3f} with "
        f"*{c.money}*; in “{MONEY_BANK}”, {c.deposit_water:.3f} and {c.deposit_money:.3f}."
    )
    if c.river_water > c.deposit_water and c.deposit_money > c.river_money:
        said += " Each sentence pulls its *bank* towards its own sense, compared with the other"
        if c.river_money > c.river_water and c.deposit_money > c.deposit_water:
            said += (
                f", yet both stay nearer *{c.money}* than *{c.water}*: context nudges the "
                "vector, it does not swap the word's meaning."
            )
        else:
            said += "."
    return said


def block_weights(model: str) -> tuple[int, int]:
    """How many weights one block has in attention and in its feed-forward network (matrices
    only: biases and norms are small next to them)."""
    layer = get_model(model).params.layer(0)
    arrays = {f.name: getattr(layer, f.name) for f in dataclasses.fields(layer)}
    sizes = {name: a.size for name, a in arrays.items() if isinstance(a, np.ndarray)}
    attention = sum(n for name, n in sizes.items() if name.startswith(ATTENTION))
    feed_forward = sum(n for name, n in sizes.items() if name.startswith(FEED_FORWARD))
    return attention, feed_forward


def bias_shares(model: str, trace: Trace) -> NDArray[np.float64]:
    """‖b_O‖ / ‖ΔE‖ of every layer and token of ``trace`` [l, t] (zeros without a bias)."""
    engine = get_model(model)
    n_layers = len(trace.delta_ltd)
    bias_l = np.array([np.linalg.norm(output_bias(engine, layer)) for layer in range(n_layers)])
    if not bias_l.any():  # no bias (SmolLM2): its ΔE, recomputed a layer at a time, is not read
        return np.zeros((n_layers, trace.n_tokens))
    delta_lt = np.linalg.norm(np.asarray(trace.delta_ltd, np.float64), axis=-1)
    shares: NDArray[np.float64] = np.divide(
        bias_l[:, None], delta_lt, out=np.zeros_like(delta_lt), where=delta_lt > 0
    )
    return shares


def block_phrases(shared: Shared, cfg: ModelConfig | None) -> tuple[str, str]:
    """Start here's words for the bias of the heads' sum (with its length next to ΔE on the
    sentence, when the model has one) and for the feed-forward network (with its weights next
    to attention's)."""
    attention, feed_forward = block_weights(shared.model)
    ffn = (
        f"a feed-forward network with {feed_forward / attention:.1f} times as many weights as "
        "the attention"
    )
    if cfg is None or cfg.causal or not shared.text.strip():
        return " (plus a fixed bias)", ffn
    shares = bias_shares(shared.model, get_trace(shared.model, shared.text))
    bias = (
        f" (plus a fixed bias, not a small one: on your sentence its length is a median "
        f"{np.median(shares):.0%} of ΔE's, from {shares.min():.0%} to {shares.max():.0%})"
    )
    return bias, ffn


def _sidebar_head(
    trace: Trace, scores: RoleScores, layer: int, head: int, query: int, key: int
) -> None:
    """What the sidebar's head does with the sentence's query token, from its numbers: its
    largest weight against an even spread, and the head's role by the rule."""
    lead = f"Layer {layer}, head {head} (the sidebar's)"
    weight = weight_sentence(trace, layer, head, query, key, lead)
    role = head_sentence(scores, layer, head, trace.tokens.tokens, "this head")
    glossary.say(safe.md(f"{weight} No token gets more of its weight in this head. {role}"))


def _caption(view: OpeningView, on_view: bool, trace: Trace) -> str:
    """How to read the view, and how its head was picked."""
    skipped = "the first token" if trace.config.causal else "[CLS]/[SEP]"
    if not on_view:
        shown = "Shown: the layer and head of the sidebar's sliders."
    elif view.preset is not None:
        shown = f"Shown: {picked_by(view.preset, trace.tokens.tokens)}, measured on this example."
    else:
        shown = (
            f"Shown: the head where one word (not a little word like “the”, not {skipped}, not "
            "a piece of itself) puts the most weight on another word, measured on your "
            f"sentence; heads that give at least {NEIGHBOUR_SHARE:.0%} of every token's weight to "
            "the token just "
            "before or just after it are left out, since they would pick a neighbour whatever "
            "it says (with fewer than two content words, the little words are allowed too)."
        )
    return (
        "How to read this: each row is a token reading the sentence, each column a token it can "
        f"read; the brighter the cell, the more weight. {shown} {rule_sentence()} Open it on "
        "the Attention pattern page to take it apart."
    )


def your_sentence(shared: Shared, view: OpeningView | None) -> None:
    """The sentence on the sidebar's layer and head, with what it shows said from its numbers,
    and a button to the sentence's own ``view`` (``ui.router.open_view`` opens it) when the
    sidebar is elsewhere."""
    if view is None:
        return
    trace = get_trace(shared.model, shared.text)
    scores = head_roles(shared.model, shared.text)
    if notice := cut_notice(trace):
        st.warning(notice)
    layer, head = shared.layer, shared.head
    on_view = (layer, head) == (view.layer, view.head)
    query = view.query
    key = view.key if on_view else int(np.argmax(trace.pattern_lhqk[layer][head, query]))
    glossary.heading(f"Your sentence, layer {layer}, head {head}", level="subheader")
    if on_view:
        glossary.say(safe.md(view_sentence(trace, scores, layer, head, query, view.keys)))
    else:
        _sidebar_head(trace, scores, layer, head, query, key)
        st.button(
            f"Back to the view picked for this sentence: layer {view.layer}, head {view.head}",
            key=Home.open_view.key,
            on_click=open_view,
        )
    explore.shared_only(
        trace,
        shared.model,
        shared.text,
        Home.pattern.key,
        stages=("pattern",),
        switches={"layer": layer, "head": head, "q": query, "k": key},
        controls=(),
        tell=False,
    )
    glossary.note(_caption(view, on_view, trace))


def intro(shared: Shared, cfg: ModelConfig | None, error: str | None) -> None:
    """What attention is, and what this app runs it on (a warning when the model is missing)."""
    about = f"{cfg.name}: {cfg.n_layers} layers × {cfg.n_heads} heads" if cfg else shared.model
    if error:
        glossary.box(
            "The model could not be loaded, so the pages that run it show only this message. "
            f"{error}  \nBuild your own head still works without it, on hashed random vectors.",
            kind="warning",
        )
    glossary.say(
        "A word on its own has one fixed vector, whatever sentence it sits in. **Attention** is "
        "how a transformer lets each word look at the others and move its vector by what it "
        f"finds. This app runs a real trained model ({about}) on **your** sentence and shows "
        "every number on the way, computed live."
        + ("" if error else " " + bank_sentence(shared.model))
    )


def one_head(shared: Shared, cfg: ModelConfig | None, error: str | None) -> None:
    """The path of one attention head, in the order the pages show it."""
    bias, ffn = block_phrases(shared, cfg) if not error else ("", "a feed-forward network")
    biased = cfg is None or cfg.attention_bias  # BERT's projections have biases; Llama's none
    causal = cfg is not None and cfg.causal  # Llama: RMSNorm before, q and k rotated after
    e = "RMSNorm(E)" if causal else "E"
    q, k, v = (f"{x} = {e}·W_{x.upper()}" + (f" + b_{x.upper()}" if biased else "") for x in "qkv")
    rotated = (
        " (in this model E is first rescaled, RMSNorm, and q and k are then turned by an angle "
        "that grows with the token's position, RoPE)"
        if causal
        else ""
    )
    glossary.say(
        "**The path of one attention head**, in the order the pages show it:  \n"
        "1. every token gets a vector *E* (its embedding; in later layers, what the layer before "
        "hands on);  \n"
        f"2. each vector asks a question, its **query** *{q}*, and offers an answer, its "
        f"**key** *{k}*{rotated};  \n"
        "3. a query scores every key by a dot product *q·k*, divided by √d_k;  \n"
        "4. softmax turns one query's scores into weights that sum to 1: the **pattern**;  \n"
        f"5. the weights blend the tokens' **values** *{v}* into this head's proposed change. "
        + (
            f"The layer adds up all its heads' proposals{bias} into one update **ΔE**. *E + ΔE* "
            "is not yet the next vector: it is re-centred and rescaled (LayerNorm: mean 0 and "
            f"spread 1, then a learned gain and bias), changed again by {ffn}, and normalized "
            "once more."
            if cfg is None or not cfg.causal
            else "The layer adds up all its heads' proposals into one update **ΔE**; the token's "
            f"vector becomes *E + ΔE*, then is changed again by {ffn} (each part reads a rescaled "
            "copy of the vector, RMSNorm). In this decoder a token reads only itself and the "
            "tokens before it."
        )
        + f" {cfg.n_layers if cfg else 'Several'} such blocks in a row make the vector the model "
        "finally uses."
    )


def where_to_go() -> None:
    """Every other page, with its line."""
    glossary.note("Type a sentence in the sidebar first, or pick an example; every page uses it.")
    for page in registry.PAGES[1:]:  # every page but this one
        st.page_link(page.path, label=page.title, icon=page.icon)
        glossary.note(page.blurb)
