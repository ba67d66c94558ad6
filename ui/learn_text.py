"""The words of the guided tour: each step's title, explanation and "how to read this" captions.

Plain Markdown without user text; the steps add the reader's own tokens and numbers (escaped)
around these constants.
"""

from __future__ import annotations

TITLES: tuple[str, ...] = (
    "Tokens and static embeddings",
    "Positional information",
    "Queries and keys",
    "Scores, and why they are scaled",
    "Masking",
    "Softmax: who looks at whom",
    "Values and the update ΔE",
    "Many heads at once",
    "The encoder block",
    "Decoder and cross-attention",
    "Context size and cost",
)
N_STEPS = len(TITLES)

INTRO = (
    "A guided walk through one transformer layer, on your own sentence (change it in the "
    "sidebar). Every number and chart below comes from running all-MiniLM-L6-v2 on that "
    "sentence; each step ends with a link to the page that explores it in full."
)

TOKENS = (
    "The model never sees letters. A tokenizer cuts the text into pieces from a fixed vocabulary "
    "of about 30,000 (rare words split into several, the later ones marked ##) and adds two "
    "markers, [CLS] at the start and [SEP] at the end. Each piece is then replaced by one row of "
    "a big lookup table: a list of 384 numbers, its static embedding. The lookup ignores the "
    "neighbours, so a word gets the same vector in every sentence — the problem attention solves."
)
TOKENS_CAPTION = (
    "How to read this: one row per token, one coloured cell per dimension (384 of them). "
    "Red cells are positive, blue negative. These are the rows of the lookup table, before "
    "anything has been mixed in."
)
BANK = (
    "Try it with the word *bank*: in the two sentences below it is the same token, so the "
    "lookup returns exactly the same vector (cosine 1). Only after the six layers of attention "
    "do the two vectors part ways."
)

POSITIONS = (
    "Attention itself treats its input as a set: shuffle the words and each would get the "
    "same update. To make order visible, a vector that depends only on the position is added "
    "to every token's embedding. MiniLM learned its 512 position vectors during training; the "
    "original transformer used fixed sine and cosine waves of different wavelengths instead "
    "(the ones the build-your-own-head page adds)."
)
POSITIONS_CAPTION = (
    "How to read this: row p is the vector added at position p (0 is [CLS]); columns are "
    "dimensions. Neighbouring rows look alike, far-apart rows less so."
)
SINUSOID_CAPTION = (
    "How to read this: the fixed encoding. Early dimensions oscillate fast (they tell close "
    "positions apart), later ones slowly (they tell far-apart positions apart)."
)

QUERIES = (
    "Each head turns every token's vector E into two short vectors of 32 numbers. The query "
    "q = E·W_Q is what the token is looking for; the key k = E·W_K is what it offers to others. "
    "Both matrices were learned in training, and every head has its own pair, so each head asks "
    "its own kind of question."
)
QUERIES_CAPTION = (
    "How to read this: one row per token, the first 8 of the head's 32 query (left) or key "
    "(right) numbers. The input E is the token's vector entering this layer."
)

SCORES = (
    "How well key j answers query i is their dot product q_i·k_j: large and positive when the "
    "two point the same way. All pairs at once give the score matrix Q·Kᵀ. Before softmax the "
    "scores are divided by √d_k: a dot product of d_k numbers grows with d_k, and softmax of "
    "large numbers picks one winner and ignores the rest."
)
SCORES_CAPTION = (
    "How to read this: rows are queries, columns keys. Left the raw dot products, right the "
    "same divided by √32 ≈ 5.66 — same shape, smaller range."
)
SATURATION = (
    "The effect grows with the width d_k. Below, random heads (unit-variance queries and keys, "
    "so q·k has variance d_k) are run on your sentence's tokens for widths 1 to 384."
)
SATURATION_CAPTION = (
    "How to read this: left, how spread out each row's weights are (entropy; the dotted line is "
    "an even spread); right, the largest weight in a row. Without scaling (dashed) the rows "
    "collapse onto a single key as d_k grows; with it they keep their shape."
)

MASKING = (
    "A mask decides which keys a query may see. A decoder, which writes text one token at a "
    "time, must not peek at later tokens, so every score above the diagonal is set to −∞ before "
    "softmax; e^−∞ = 0, so those weights vanish and the rest of the row shares the whole weight. "
    "MiniLM is an encoder and normally sees in both directions; here the mask is switched on "
    "to show the difference."
)
MASKING_CAPTION = (
    "How to read this: left, the scaled scores with the hidden cells blanked out (−∞); right, "
    "the pattern that results — the upper triangle is exactly 0."
)
PADDING = (
    "The second kind of mask handles batches. Sentences of different lengths are padded with "
    "[PAD] tokens to a common length, and a padding mask (key_mask_k) hides those keys, so the "
    "real tokens' weights come out as if the padding were not there (up to float rounding)."
)
PADDING_CAPTION = (
    "How to read this: your sentence with three [PAD] tokens appended, in the first layer. "
    "Left without the padding mask (real tokens leak weight onto [PAD]), right with it."
)

SOFTMAX = (
    "Softmax turns each row of scaled scores into weights: exponentiate, then divide by the "
    "row's total, so every weight is positive and each row sums to 1. Read a row as the answer "
    "to “what does this word look at?”. It is like a database SELECT that, instead of returning "
    "the one matching record, returns a blend of all records weighted by how well they match."
)
SOFTMAX_CAPTION = (
    "How to read this: row i is where token i looks; the brighter the cell, the larger its "
    "share of the row's total of 1."
)
TOP3_CAPTION = (
    "For each query: its three largest weights and the row's sum (1 up to float32 rounding)."
)

VALUES = (
    "The weights only say where to look; the value vectors say what is passed along. Each "
    "token also gets a value V = E·W_V. The chosen token's output is the weighted sum "
    "z = Σ_j a_j V_j, which this head's slice of W_O maps back to 384 numbers: its proposed "
    "change. The layer adds all its heads' proposals and a bias into one update ΔE, and "
    "E + ΔE is the token's vector nudged by its context. Not the last word yet: a LayerNorm "
    "rescales that sum, the block's feed-forward network adds its own change, and a second "
    "LayerNorm gives the vector the next layer reads."
)
VALUES_CAPTION = (
    "How to read this: the weight the chosen token (orange) gives each key in this head: the "
    "a_j of the weighted sum."
)
STRIPS_CAPTION = (
    "How to read this: the token's vector entering the layer (E), the update from all heads "
    "(ΔE), and their sum (E + ΔE), dimension by dimension, on one colour scale."
)

HEADS = (
    "A layer runs 12 heads side by side, each with its own W_Q, W_K and W_V, so each looks "
    "for something different: the next word, the previous word, the sentence markers, a "
    "related word. Each head proposes its own update ΔE_h for every token; the layer adds the "
    "12 proposals and one bias b_O to get ΔE."
)
HEADS_CAPTION = (
    "How to read this: four heads of the same layer on the same sentence, starting at the "
    "sidebar's head; same colour scale, different habits."
)
HEAD_NORMS_CAPTION = (
    "How to read this: the size of each head's proposed update for the chosen token (the "
    "sidebar's head in orange). The layer's ΔE is their sum plus b_O."
)

BLOCK = (
    "Attention is one half of an encoder block. Its update is added to the input (the "
    "residual connection) and LayerNorm rescales the sum to zero mean and unit spread. A "
    "feed-forward network then processes each token on its own — 384 numbers to 1,536, GELU, "
    "back to 384 — and is added and normalized the same way. MiniLM stacks six such blocks; "
    "each block's output is the next one's input."
)
BLOCK_NORMS_CAPTION = (
    "How to read this: the size of the chosen token's vector after each sub-step of this "
    "layer's block. LayerNorm pulls the size back to about the same value each time."
)
BLOCK_STRIPS_CAPTION = (
    "How to read this: the same vectors, dimension by dimension (the 1,536-wide GELU layer is "
    "left out)."
)
STACK_CAPTION = (
    "How to read this: the chosen token through the stack. Cosine with the previous row shows "
    "how much each block turned the vector; cosine with row 0 how far it has come."
)

DECODER = (
    "MiniLM is an encoder only: it reads a whole sentence and was never trained to write one. "
    "A translation model pairs an encoder with a decoder. This demonstration borrows one of "
    "MiniLM's trained layers to show the decoder's two kinds of attention, so the numbers are "
    "real computations but the weights were not trained for this job."
)
DECODER_STEPS = (
    "1. **Masked self-attention** on the target sentence: each target token looks only at "
    "itself and the tokens before it.  \n"
    "2. **Cross-attention**: queries come from the target tokens, keys and values from the "
    "source sentence as the encoder (all six MiniLM layers) left it."
)
SELF_CAPTION = (
    "How to read this: the target sentence attending to itself under the causal mask: the "
    "upper triangle is 0."
)
CROSS_CAPTION = (
    "How to read this: each row is a target token; its weights over the source tokens sum to 1. "
    "The rows and columns are different sentences, so the matrix need not be square."
)

COST = (
    "Every layer and head computes one score for every pair of tokens: n² of them. Double the "
    "length and the attention matrices take four times the memory and, once they dominate, "
    "four times the time. That is why context windows were hard to enlarge. Below, the engine "
    "behind this app is timed on this machine at six lengths (one pass each, measured once per "
    "server; the time depends on the length, not on the words)."
)
COST_CAPTION = (
    "How to read this: log-log axes, so n² is a straight line of slope 2 (dashed). Memory sits "
    "exactly on it; time grows more slowly for short inputs, where the per-token work dominates, "
    "and bends towards n² as the sentence gets longer. Times vary with the machine's load."
)
