"""The glossary: every term a learner meets, each in one plain sentence true of the three models
(MiniLM the encoder, SmolLM2 the decoder, Whisper the encoder-decoder; where they differ the
sentence says so). The pages hover a term's sentence where it first appears (``ui.glossary``)
and the glossary page lists them all, in this order.

Matching rules, one ``pattern`` per term: whole words only (``key`` never fires inside
``keyboard``, ``bias`` never inside ``biased``, ``token`` never inside ``tokenizer``), plurals
and the usual endings spelled out; case ignored except for names written one way (GELU, RMSNorm,
PCA, KV cache, W_Q). Text inside ``$…$`` LaTeX is matched like any other: a formula that shows
``\\sqrt{d_k}`` names √d_k as surely as the words do.

To add a term: one ``Term`` in ``TERMS`` where a learner would meet it, its sentence one plain
sentence ending in a full stop (tests/core/test_glossary.py checks), its pattern tried on the
phrases the pages use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

IGNORE = re.IGNORECASE


@dataclass(frozen=True)
class Term:
    """One glossary entry: its name as the glossary lists it, the words that name it on a page,
    and its one-sentence explanation."""

    name: str
    pattern: re.Pattern[str]
    sentence: str


def _term(name: str, pattern: str, sentence: str, flags: int = IGNORE) -> Term:
    return Term(name, re.compile(pattern, flags), sentence)


TERMS: tuple[Term, ...] = (
    _term(
        "token",
        r"\btokens?\b",
        "A token is one piece of text the model handles as a unit: a whole word, part of a "
        "word or a punctuation mark.",
    ),
    _term(
        "vocabulary",
        r"\bvocabular(?:y|ies)\b",
        "The vocabulary is the fixed list of every token a model knows: 30,522 for MiniLM, "
        "49,152 for SmolLM2 and 51,864 for Whisper.",
    ),
    _term(
        "vector",
        r"\bvectors?\b",
        "A vector is a list of numbers; each token is held as one vector of 384 numbers in "
        "MiniLM and Whisper tiny, 576 in SmolLM2.",
    ),
    _term(
        "embedding",
        r"\bembeddings?\b",
        "An embedding is the vector that stands for a token, numbers the model learned during "
        "its training.",
    ),
    _term(
        "position",
        r"\bposition(?:al)? (?:encodings?|vectors?|embeddings?)\b|\brotary\b|\bRoPE\b",
        "Position information tells the model where each token stands: MiniLM and Whisper's "
        "decoder add a learned position vector, Whisper's encoder adds fixed sine waves, and "
        "SmolLM2 rotates each query and key by an angle that grows with the position (rotary, "
        "RoPE).",
    ),
    _term(
        "segment vector",
        r"\bsegment vectors?\b",
        "The segment vector is one learned vector MiniLM adds to every token of a single "
        "sentence (a second one would mark a second sentence); SmolLM2 and Whisper have none.",
    ),
    _term(
        "layer",
        r"\blayers?\b",
        "A layer is one round of attention (two in Whisper's decoder: over its own tokens, then "
        "over the sound) followed by a feed-forward network, and a model stacks several: 6 in "
        "MiniLM, 30 in SmolLM2, 4 in Whisper tiny's encoder and 4 in its decoder.",
    ),
    _term(
        "head",
        r"\bheads?\b",
        "A head is one of the attention units working side by side in a layer, each with its "
        "own weights and so its own pattern: 12 per layer in MiniLM, 9 in SmolLM2, 6 in "
        "Whisper tiny.",
    ),
    _term(
        "query",
        r"\bquer(?:y|ies)\b",
        "A token's query is a vector computed from it that stands for what it is looking for "
        "in the other tokens.",
    ),
    _term(
        "key",
        r"\bkeys?\b",
        "A token's key is a vector computed from it that the other tokens' queries are "
        "compared with, to find how well it matches what they look for.",
    ),
    _term(
        "value",
        r"\bvalue vectors?\b|\bvalues? \(V\)|\bkeys? and values?\b|\bkeys?, values?\b",
        "A token's value vector is what it hands on to the tokens that attend to it, mixed in "
        "by their weights.",
    ),
    _term(
        "W_Q, W_K, W_V",
        r"\bW_?\{?[QKVO]\}?(?![A-Za-z])",
        "W_Q, W_K and W_V are grids of learned numbers (matrices) that turn a token's vector "
        "into its query, key and value; W_O turns a head's result back into a change to the "
        "token.",
        0,
    ),
    _term(
        "matrix",
        r"\bmatri(?:x|ces)\b",
        "A matrix is a grid of numbers; multiplying a vector by it gives a new vector.",
    ),
    _term(
        "projection",
        r"\bprojections?\b",
        "A projection is a multiplication by a learned matrix that turns one vector into "
        "another, such as a token's vector into its query.",
    ),
    _term(
        "dot product",
        r"\bdot products?\b",
        "The dot product of two vectors multiplies them number by number and adds the results "
        "up: large when they point the same way, negative when they point apart.",
    ),
    _term(
        "score",
        r"\bscores?\b",
        "A score is the dot product of one token's query with another token's key: how well "
        "the two match, before softmax.",
    ),
    _term(
        "d_k",
        r"\bd_\{?k\}?(?![A-Za-z])|\bd_\{?\\text\{k\}\}?",
        "d_k is how many numbers each query and key holds: 32 in MiniLM, 64 in SmolLM2 and "
        "Whisper tiny.",
    ),
    _term(
        "√d_k",
        r"√\s*d_k|\\sqrt\{\s*d_",
        "Scores are divided by √d_k, the square root of d_k, so that longer vectors do not give "
        "bigger scores just for being long and softmax does not put all the weight on one "
        "token.",
    ),
    _term(
        "softmax",
        r"\bsoftmax\b",
        "Softmax turns a row of scores into weights between 0 and 1 that add up to 1, giving "
        "bigger scores much bigger shares.",
    ),
    _term(
        "attention pattern",
        r"\b(?:attention )?patterns?\b",
        "An attention pattern is the grid of weights a head gives: row by row, how much each "
        "token draws from each token it may see, every row adding up to 1.",
    ),
    _term(
        "mask",
        r"\bmask(?:s|ed|ing)?\b",
        "A mask sets some scores to minus infinity before softmax so that those tokens get "
        "weight 0; a decoder's mask hides from each token the tokens that come after it.",
    ),
    _term(
        "encoder",
        r"\bencoders?\b",
        "An encoder reads its whole input at once, every token (or moment of sound) seeing "
        "every other: MiniLM is one, and so is Whisper's first half, which listens to the sound.",
    ),
    _term(
        "decoder",
        r"\bdecoders?\b",
        "A decoder writes text one token at a time, each token seeing only itself and the "
        "tokens before it: SmolLM2 is one, and so is Whisper's second half, which writes the "
        "transcript.",
    ),
    _term(
        "self-attention",
        r"\bself-attention\b",
        "Self-attention is attention among the tokens of one sequence: each token's query "
        "against the keys of the same sequence.",
    ),
    _term(
        "cross-attention",
        r"\bcross-attention\b",
        "Cross-attention lets each token a decoder writes look at an encoder's output (in "
        "Whisper, at moments of the sound); MiniLM and SmolLM2 have none.",
    ),
    _term(
        "ΔE",
        r"ΔE|\\Delta\s*E",
        "ΔE is the change a head proposes to a token's vector: the blend of the value vectors "
        "it attends to, weighted by its pattern and turned back by W_O.",
        0,
    ),
    _term(
        "residual stream",
        r"\bresidual(?: stream)?s?\b",
        "The residual stream is each token's running vector, to which every layer adds its "
        "change instead of replacing it.",
    ),
    _term(
        "hidden state",
        r"\bhidden states?\b",
        "A hidden state is a token's vector as it stands between two layers, after the layers "
        "below have added their changes.",
    ),
    _term(
        "feed-forward",
        r"\bfeed-?forward\b|\bMLP\b",
        "The feed-forward network is the part of each layer after attention that works on each "
        "token's vector on its own, without looking at other tokens.",
    ),
    _term(
        "d_ff",
        r"\bd_\{?(?:\\text\{)?ff\}?",
        "d_ff is how many numbers the feed-forward network's wider middle holds for each token: "
        "1,536 in all three models here.",
    ),
    _term(
        "GELU",
        r"\bGELU\b|\bSiLU\b",
        "GELU is the bend the feed-forward network applies to each number, letting positive "
        "numbers through and squashing negative ones towards 0; MiniLM and Whisper use it, "
        "SmolLM2 a close cousin called SiLU.",
        0,
    ),
    _term(
        "dense layer",
        r"\bdense\b",
        "A dense layer multiplies every token's vector by a full learned matrix: the query, "
        "key, value and output projections and the feed-forward network are dense layers.",
    ),
    _term(
        "LayerNorm",
        r"\bLayerNorms?\b|\blayer norm(?:alization)?s?\b",
        "LayerNorm rescales a token's vector so its numbers have mean 0 and spread 1, then "
        "applies learned scales and shifts; MiniLM and Whisper use it.",
    ),
    _term(
        "RMSNorm",
        r"\bRMSNorms?\b",
        "RMSNorm, SmolLM2's version of LayerNorm, only rescales a token's vector to a typical "
        "size (no mean taken off, no shift) and then applies learned scales.",
        0,
    ),
    _term(
        "bias",
        r"\bbias(?:es)?\b",
        "A bias is a learned number added after a multiplication by a matrix, shifting the "
        "result even when the input is all zeros; MiniLM's queries, keys and values have one, "
        "Whisper's queries and values, SmolLM2's none.",
    ),
    _term(
        "[CLS] and [SEP]",
        r"\[CLS\]|\[SEP\]",
        "[CLS] and [SEP] are the special tokens MiniLM puts at the start and the end of every "
        "sentence; SmolLM2 and Whisper do not use them.",
        0,
    ),
    _term(
        "start token",
        r"\bstart token\b|<\|startoftranscript\|>",
        "The start token is the special token Whisper's decoder is given first, so that it has "
        "something to read before it has written any word.",
    ),
    _term(
        "logit",
        r"\blogits?\b",
        "A logit is the raw score a decoder (SmolLM2, or Whisper's) gives one token of the "
        "vocabulary as the next token, before softmax turns all of them into probabilities.",
    ),
    _term(
        "temperature",
        r"\btemperatures?\b",
        "Temperature divides scores before softmax: below 1 it sharpens the weights towards the "
        "top one, above 1 it evens them out (Generate uses it on the next-token logits, the "
        "pattern page on attention scores).",
    ),
    _term(
        "KV cache",
        r"\bKV cache\b|\bkey/value cache\b",
        "A KV cache keeps the keys and values of the tokens already read, so a decoder writing "
        "a new token computes only the new token's.",
        0,
    ),
    _term(
        "shared key/value heads",
        r"\bshared key/value heads?\b|\bgrouped-query\b|\bGQA\b",
        "In grouped-query attention several query heads share one key head and one value head "
        "(SmolLM2: 9 query heads, 3 key/value heads); MiniLM and Whisper give every head its "
        "own.",
    ),
    _term(
        "context window",
        r"\bcontext windows?\b",
        "The context window is the largest number of tokens n a model reads at once; a head's "
        "pattern over n tokens then holds n × n weights.",
    ),
    _term(
        "entropy",
        r"\bentrop(?:y|ies)\b",
        "Entropy in bits measures how spread a row of weights is: 0 bits when all the weight "
        "sits on one token, log₂ n bits when it is spread evenly over n tokens.",
    ),
    _term(
        "gradient",
        r"\bgradients?\b",
        "A gradient says how much a result changes when one number is nudged; training follows "
        "the gradients to adjust the weights.",
    ),
    _term(
        "saturate",
        r"\bsaturat(?:e|es|ed|ing|ion)\b",
        "Softmax saturates when one score is so far above the others that nearly all the weight "
        "goes to it, so small changes to the scores barely move the weights and the gradient "
        "is near 0.",
    ),
    _term(
        "backpropagation",
        r"\bback-?propagat(?:ion|es|ed|ing)\b|\bbackprop\b",
        "Backpropagation is how training works out every weight's gradient, passing the error "
        "back from the output through each layer.",
    ),
    _term(
        "cosine",
        r"\bcosines?\b",
        "The cosine of two vectors measures how alike their directions are: 1 for the same "
        "direction, 0 at right angles, −1 for opposite directions.",
    ),
    _term(
        "probe",
        r"\bprobes?\b|\bprobe words?\b",
        "A probe is a word whose vector we place beside a token's, to see which of them the "
        "token's vector moves towards.",
    ),
    _term(
        "PCA",
        r"\bPCA\b|\bprincipal components?\b",
        "PCA finds the directions in which a set of vectors spreads the most, so that they can "
        "be drawn on a flat plane.",
        0,
    ),
    _term(
        "sentence embedding",
        r"\bsentence (?:embeddings?|vectors?)\b",
        "A sentence embedding is one vector for a whole sentence, which MiniLM makes by "
        "averaging its tokens' last vectors; SmolLM2 and Whisper are not trained to make one.",
    ),
    _term(
        "previous-token head",
        r"\bprevious-token(?: heads?)?\b",
        "A previous-token head puts most of each token's weight on the token just before it.",
    ),
    _term(
        "induction head",
        r"\binduction(?: heads?)?\b",
        "An induction head finds an earlier copy of the current token and attends to the token "
        "that came right after it, so the model can repeat a sequence it has seen.",
    ),
    _term(
        "attention sink",
        r"\b(?:attention )?sinks?\b",
        "An attention sink is a token (often the first one, or [CLS] and [SEP] in MiniLM) where "
        "a head puts most of its weight when nothing else is useful to it.",
    ),
    _term(
        "norm-weighted",
        r"\bnorm-weighted\b",
        "Norm-weighted attention multiplies each weight by the size of what that token actually "
        "hands on, so a big weight on a token that passes almost nothing counts for little.",
    ),
    _term(
        "knock-out",
        r"\bknock(?:s|ed|ing)?[- ]out\b|\bknock-outs?\b",
        "Knocking out a head zeroes what it passes on, so that it adds nothing to any token, "
        "to see what the model does without it.",
    ),
    _term(
        "rollout",
        r"\brollouts?\b",
        "Attention rollout multiplies the layers' patterns together, each with the token's own "
        "path kept, to estimate how much each input token reaches each token at the top.",
    ),
    _term(
        "logit lens",
        r"\blogit lens\b",
        "The logit lens reads a decoder's unfinished hidden state as if it were the last one, "
        "to see which next token it leans towards after each layer.",
    ),
    _term(
        "log-mel spectrogram",
        r"\blog-mel\b|\bspectrograms?\b",
        "A log-mel spectrogram is the picture of sound Whisper reads: for every 10 milliseconds, "
        "how loud each band of pitches is, on a scale close to how we hear.",
    ),
    _term(
        "frame",
        r"\bframes?\b",
        "A frame is one 20-millisecond slice of the sound as Whisper's encoder holds it, 1,500 "
        "of them for 30 seconds.",
    ),
    _term(
        "aligning head",
        r"\baligning heads?\b|\balignment heads?\b",
        "An aligning head is one of the few cross-attention heads of Whisper whose weights "
        "follow the moment each word was said; Whisper's makers list them, and most heads do "
        "not do this.",
    ),
    _term(
        "rank correlation ρ",
        r"\brank correlations?\b|ρ",
        "The rank correlation ρ (Spearman's) measures how well two lists agree in order: 1 when "
        "they rise together, 0 when unrelated, −1 when one falls as the other rises.",
    ),
    _term(
        "multiply-add",
        r"\bmultiply-adds?\b",
        "A multiply-add is one multiplication and one addition, the unit a model's work is "
        "counted in here.",
    ),
    _term(
        "log-log chart",
        r"\blog-log\b",
        "A log-log chart spaces both axes by multiplication (1, 10, 100, …), so a cost that "
        "grows like a power of n draws a straight line.",
    ),
    _term(
        "slope",
        r"\bslopes?\b",
        "On a log-log chart the slope is that power: slope 1 means twice the tokens cost twice "
        "as much, slope 2 four times as much.",
    ),
)


def terms_in(text: str) -> tuple[Term, ...]:
    """The terms ``text`` names, in the order of their first mention (ties: glossary order)."""
    found = [(m.start(), k) for k, t in enumerate(TERMS) if (m := t.pattern.search(text))]
    return tuple(TERMS[k] for _, k in sorted(found))


def help_text(terms: tuple[Term, ...]) -> str:
    """The hover of ``terms``: one Markdown paragraph per term, its name in bold."""
    return "\n\n".join(f"**{t.name}**: {t.sentence}" for t in terms)


def term(name: str) -> Term:
    """The term called ``name``; KeyError if there is none."""
    for t in TERMS:
        if t.name == name:
            return t
    raise KeyError(name)
