"""Whisper's words placed in time: the dynamic-time-warping path through its alignment heads'
cross-attention, and each word's start and end read off that path, as CTranslate2's
``Whisper.align`` (``src/models/whisper.cc``, ``src/dtw.cc``) and faster-whisper's
``find_alignment`` compute them, in NumPy with CTranslate2's float32 arithmetic.

The rule, in plain words:

1. Take the cross-attention of the alignment heads (config.json's ``alignment_heads``) on every
   row the decoder reads: <|startoftranscript|>, <|notimestamps|>, each text token and the end
   token <|endoftext|> (the trace stops before the end token, so its row is one more decoder
   step). Keep the frames that hold the clip (``n_samples // 160 // 2`` of the 20 ms frames)
   and make each row sum to 1 again over them (CTranslate2 takes the softmax of the cut scores).
2. Per head and per frame, standardize over the rows (mean 0, variance 1: the variance is
   E[x²] − mean², no epsilon); smooth each row with a median filter of width 7 along time (the
   edges mirrored, the edge frame not repeated); average the heads.
3. The rows that wrote the text and the end token (<|notimestamps|> … the last text token)
   make an (n + 1) × frames matrix. DTW finds the cheapest monotone path from its first cell to
   its last, a step's cost being minus the weight (float32 sums); each cell comes from the
   diagonal when that is strictly cheapest, else from above when that is strictly cheapest,
   else from the left. ``align_path`` lists (token, frame) pairs; token n is the end token.
4. Words: a new word begins at a token that starts with a space, is punctuation or is special
   (faster-whisper's ``split_tokens_on_spaces``). A word starts at the frame where the path
   first reaches its first token and ends where the path first reaches the token after it (the
   last word: the end token), in seconds (frame / 50). Then punctuation joins its neighbour
   (faster-whisper's ``merge_punctuations``: "'“¿([{- onto the next word, "'.。,，!！?？:：”)]}、
   onto the one before) without changing that word's time. faster-whisper's later trims of
   over-long words at sentence and segment boundaries are not applied: these are the path's
   times alone.

Shape suffixes: l layer, h head, q token row, k frame.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.models.whisper.forward import decode_tokens, memory_of, self_attention
from attention_core.models.whisper.generate import WhisperTrace

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
I64 = NDArray[np.int64]

MEDIAN_WIDTH = 7  # faster-whisper's median_filter_width
HOP = 160  # samples per mel frame; two mel frames make one 20 ms encoder frame
FRAMES_PER_SECOND = 50  # encoder frames per second (faster-whisper's tokens_per_second)
PREPENDED = "\"'“¿([{-"  # faster-whisper's prepend_punctuations
APPENDED = "\"'.。,，!！?？:：”)]}、"  # faster-whisper's append_punctuations


@dataclass(frozen=True)
class WordTiming:
    """The DTW path and the words placed on it (module docstring: the rule)."""

    align_path: I64  # [P, 2] (text token index, 20 ms frame); token n is the end token
    words: tuple[str, ...]  # as written, a leading space where the text has one
    word_starts: F64  # [W] seconds
    word_ends: F64  # [W] seconds
    word_tokens: I64  # [W, 2] the tokens whose first frames on the path time the word


def end_row_lhk(trace: WhisperTrace) -> F32:
    """The end token's cross-attention row [layers, heads, frames]: one decoder step after the
    trace's tokens, the past keys and values recomputed from the streams the trace kept."""
    model = trace.model
    memory = memory_of(model, trace.encoder_hidden_ltd[-1])
    past = [
        self_attention(lay.self_attn, model.config, trace.decoder_hidden_ltd[i], None, True)[2]
        for i, lay in enumerate(model.params.decoder_layers)
    ]
    step = decode_tokens(model, [model.dims.eot_id], memory, past)
    return np.stack([pattern_hqk[:, 0] for pattern_hqk in step.cross_pattern_lhqk])


def head_order(heads: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """The alignment heads in CTranslate2's order: by layer, each layer's in config order."""
    return sorted(heads, key=lambda pair: pair[0])


def alignment_rows_hqk(trace: WhisperTrace, end_lhk: F32, n_frames: int) -> F32:
    """The alignment heads' weights [h, every row + the end token's, n_frames], each row
    renormalized over the first ``n_frames`` frames (the softmax of the cut scores)."""
    rows = [
        np.concatenate([trace.cross_pattern_lhqk[layer, head], end_lhk[layer, head][None]])
        for layer, head in head_order(trace.alignment_heads)
    ]
    cut_hqk = np.stack(rows)[:, :, :n_frames]
    total = cut_hqk.sum(axis=-1, keepdims=True, dtype=np.float32)
    return np.asarray(cut_hqk / total, dtype=np.float32)


def standardize_rows(x_hqk: F32) -> F32:
    """Each (head, frame) standardized over the rows q, float32 sums in order, as CTranslate2's
    ``LayerNorm(axis=-2, epsilon=0)``: (x − mean) / √max(E[x²] − mean², 0)."""
    n = x_hqk.shape[1]
    total = np.zeros((x_hqk.shape[0], x_hqk.shape[2]), np.float32)
    squares = np.zeros_like(total)
    for q in range(n):
        total = total + x_hqk[:, q]
        squares = squares + x_hqk[:, q] * x_hqk[:, q]
    mean = total / np.float32(n)
    variance = np.maximum(squares / np.float32(n) - mean * mean, np.float32(0))
    with np.errstate(divide="ignore", invalid="ignore"):
        rstd = np.float32(1) / np.sqrt(variance)
        return np.asarray((x_hqk - mean[:, None]) * rstd[:, None], dtype=np.float32)


def median_filter(x: F32, width: int = MEDIAN_WIDTH) -> F32:
    """The median of each ``width`` frames around each frame along the last axis, the edges
    mirrored without repeating the edge frame; an axis of at most width // 2 frames is left
    as it is (CTranslate2's ``MedianFilter``)."""
    rank = width // 2
    if x.shape[-1] <= rank:
        return x.copy()
    pad = [(0, 0)] * (x.ndim - 1) + [(rank, rank)]
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(x, pad, mode="reflect"), width, -1)
    return np.asarray(np.partition(windows, rank, axis=-1)[..., rank], dtype=np.float32)


def mean_heads(x_hqk: F32) -> F32:
    """The heads' mean [q, k]: a float32 sum in head order, then ÷ heads (CTranslate2's Mean)."""
    total = np.zeros(x_hqk.shape[1:], np.float32)
    for x_qk in x_hqk:
        total = total + x_qk
    return np.asarray(total / np.float32(len(x_hqk)), dtype=np.float32)


def negative_dtw(x_qk: F32) -> I64:
    """The DTW path [P, 2] through ``-x_qk`` from (0, 0) to (q-1, k-1), as CTranslate2's
    ``negative_dtw``: float32 costs, a cell from the diagonal when that is strictly cheapest,
    else from above when that is strictly cheapest, else from the left. The cells are filled
    one anti-diagonal at a time (each needs only the two before it)."""
    n, m = x_qk.shape
    cost = np.full((n + 1, m + 1), np.inf, np.float32)
    cost[0, 0] = 0
    step = np.full((n + 1, m + 1), -1, np.int8)
    negative = -np.asarray(x_qk, dtype=np.float32)
    for s in range(2, n + m + 1):
        i = np.arange(max(1, s - m), min(n, s - 1) + 1)
        j = s - i
        c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
        diagonal = (c0 < c1) & (c0 < c2)
        up = ~diagonal & (c1 < c0) & (c1 < c2)
        step[i, j] = np.where(diagonal, 0, np.where(up, 1, 2))
        cost[i, j] = negative[i - 1, j - 1] + np.where(diagonal, c0, np.where(up, c1, c2))
    return backtrace(step)


def backtrace(step: NDArray[np.int8]) -> I64:
    """The path from the last cell back to the first (0 diagonal, 1 up, 2 left; the first row
    goes left, the first column up), as (row - 1, column - 1) pairs in forward order."""
    step = step.copy()
    step[0, :] = 2
    step[:, 0] = 1
    i, j = step.shape[0] - 1, step.shape[1] - 1
    path: list[tuple[int, int]] = []
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        move = int(step[i, j])
        i, j = (i - 1, j - 1) if move == 0 else (i - 1, j) if move == 1 else (i, j - 1)
    return np.array(path[::-1], dtype=np.int64).reshape(-1, 2)


def dtw_path(trace: WhisperTrace, n_samples: int, end_lhk: F32 | None = None) -> I64:
    """``align_path`` [P, 2] for the trace's text tokens and a clip of ``n_samples`` samples
    (steps 1-3 of the module docstring); empty when the clip is shorter than one frame."""
    n_frames = min(n_samples // HOP // 2, trace.cross_pattern_lhqk.shape[-1])
    if n_frames == 0:
        return np.zeros((0, 2), np.int64)
    end = end_row_lhk(trace) if end_lhk is None else end_lhk
    weights_hqk = alignment_rows_hqk(trace, end, n_frames)
    smooth_qk = mean_heads(median_filter(standardize_rows(weights_hqk)))
    first = trace.n_prompt - 1  # the row that wrote the first text token
    return negative_dtw(smooth_qk[first : first + len(trace.text_ids) + 1])


def split_subwords(tokenizer: Any, ids: list[int]) -> list[tuple[str, list[int]]]:
    """Tokens grouped until they decode to whole characters (faster-whisper's
    ``split_tokens_on_unicode``): (text, ids) per group."""
    full = str(tokenizer.decode(ids))
    groups: list[tuple[str, list[int]]] = []
    current: list[int] = []
    offset = 0
    for token in ids:
        current.append(token)
        decoded = str(tokenizer.decode(current))
        bad = decoded.find("\ufffd")
        if bad < 0 or (bad + offset < len(full) and full[bad + offset] == "\ufffd"):
            groups.append((decoded, current))
            current = []
            offset += len(decoded)
    return groups


def split_words(tokenizer: Any, ids: list[int], eot_id: int) -> list[tuple[str, list[int]]]:
    """Words of ``ids`` (faster-whisper's ``split_tokens_on_spaces``): a group that is special,
    starts with a space or is punctuation begins a word; any other joins the one before."""
    words: list[tuple[str, list[int]]] = []
    for text, group in split_subwords(tokenizer, ids):
        special = group[0] >= eot_id
        punctuation = text.strip() in string.punctuation  # a substring test, as faster-whisper's
        if special or text.startswith(" ") or punctuation or not words:
            words.append((text, list(group)))
        else:
            words[-1] = (words[-1][0] + text, words[-1][1] + group)
    return words


def first_frames(path: I64) -> I64:
    """The frame at which the path first reaches each token, in token order."""
    jumps = np.diff(path[:, 0], prepend=-1) != 0
    return np.asarray(path[jumps, 1], dtype=np.int64)


def merge_punctuations(words: list[list[Any]]) -> None:
    """faster-whisper's ``merge_punctuations`` on [text, (first, end) tokens, start, end] entries,
    in place: a word of PREPENDED punctuation joins the next word, APPENDED the one before; the
    word joined keeps its times, the emptied entry its text ""."""
    i, j = len(words) - 2, len(words) - 1
    while i >= 0:
        before, after = words[i], words[j]
        if before[0].startswith(" ") and before[0].strip() in PREPENDED:
            after[0], before[0] = before[0] + after[0], ""
        else:
            j = i
        i -= 1
    i, j = 0, 1
    while j < len(words):
        before, after = words[i], words[j]
        if not before[0].endswith(" ") and after[0] in APPENDED:
            before[0], after[0] = before[0] + after[0], ""
        else:
            i = j
        j += 1


def place_words(tokenizer: Any, text_ids: list[int], eot_id: int, path: I64) -> WordTiming:
    """The words of ``text_ids`` timed on ``path`` (step 4 of the module docstring)."""
    split = split_words(tokenizer, [*text_ids, eot_id], eot_id)
    if len(split) <= 1 or len(path) == 0:
        return WordTiming(path, (), np.zeros(0), np.zeros(0), np.zeros((0, 2), np.int64))
    frames = first_frames(path)
    bounds = np.concatenate([[0], np.cumsum([len(ids) for _, ids in split[:-1]])])
    entries = [
        [text, (int(a), int(b)), frames[a] / FRAMES_PER_SECOND, frames[b] / FRAMES_PER_SECOND]
        for (text, _), a, b in zip(split, bounds[:-1], bounds[1:], strict=False)
    ]
    merge_punctuations(entries)
    kept = [entry for entry in entries if entry[0]]
    return WordTiming(
        path,
        tuple(str(entry[0]) for entry in kept),
        np.array([entry[2] for entry in kept], dtype=np.float64),
        np.array([entry[3] for entry in kept], dtype=np.float64),
        np.array([entry[1] for entry in kept], dtype=np.int64).reshape(-1, 2),
    )


def word_timing(trace: WhisperTrace, n_samples: int) -> WordTiming:
    """The DTW path of ``trace``'s text over a clip of ``n_samples`` samples (16 kHz) and its
    words placed in time (module docstring: the rule)."""
    path = dtw_path(trace, n_samples)
    eot_id = trace.model.dims.eot_id
    return place_words(trace.model.tokenizer, list(trace.text_ids), eot_id, path)


def timing_arrays(timing: WordTiming) -> dict[str, NDArray[Any]]:
    """The ``listen`` .npz's keys for the words: align_path [P, 2] int64 (token, frame), words
    (str), word_starts and word_ends (seconds, float64)."""
    return {
        "align_path": timing.align_path,
        "words": np.asarray(timing.words, dtype=str),
        "word_starts": timing.word_starts,
        "word_ends": timing.word_ends,
    }
