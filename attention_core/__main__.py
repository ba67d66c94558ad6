"""Command line: ``python -m attention_core trace "SENTENCE" --out FILE.npz [--model KEY|PATH]``
(or ``--file TEXT.txt`` for a page of text: SmolLM2 reads up to 2,048 tokens, MiniLM 512; the
rest is cut, and said). ``--layers 0,29`` writes only those layers' attention maps (pattern,
scores, norm_weighted) with a ``layers`` key: all of them at 2,048 tokens are 4.5 GB each.

``--model`` takes "minilm" (the default), "smollm2" (the decoder), a BERT folder or a .gguf file.
``--causal`` is a what-if for the encoder; a decoder's own mask is always causal (a no-op).
``--knock 3.7,0.1`` knocks out heads (layer.head from 0, as the app numbers them).

``python -m attention_core listen AUDIO --out FILE.npz``: Whisper tiny.en transcribes a WAV,
FLAC, OGG or MP3 file (its first 30 s) and writes text, token_ids, prompt_ids, encoder_hidden,
cross_pattern, self_pattern, log_mel, notices and the words in time: align_path (the alignment
heads' DTW path, [P, 2] token and 20 ms frame), words, word_starts and word_ends (seconds).

``python -m attention_core roles "SENTENCE" --out FILE.npz [--model KEY|PATH] [--probe-len 50]
[--probe-seed 0]``: every head's role scores on the sentence (previous_token, duplicate_token,
induction, first_token, self, broad, and last_token for a model that closes with [SEP]; each
[layer, head]), names ([layer, head] strings by the rule) and rule (its text); then the induction
probe (probe_len seeded random tokens read twice): probe_ids, probe_induction [layer, head] and,
for a model that predicts the next token, probe_loss (−log p per token, NaN at the first; an
encoder has no such loss, so the key is left out rather than filled with NaN)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attention_core.core.config import ModelLoadError
from attention_core.core.tokens import MAX_CHARS, check_text
from attention_core.core.whatif import WhatIf
from attention_core.methods.export import save_npz
from attention_core.methods.induction import Probe, run_probe
from attention_core.methods.knockout import parse_heads
from attention_core.methods.roles import LABELS, RULE, RoleScores, name_heads, role_scores
from attention_core.models import load_model, trace_sentence


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m attention_core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    trace = sub.add_parser("trace", help="run a sentence and save every intermediate to .npz")
    trace.add_argument("sentence", nargs="?", help="the text to run through the model")
    trace.add_argument("--file", help="read the text from this UTF-8 file instead")
    trace.add_argument(
        "--layers",
        default="",
        metavar="L[,L...]",
        help="write only these layers' attention maps (numbered from 0), e.g. 0,29",
    )
    trace.add_argument("--out", required=True, help="where to write the .npz")
    trace.add_argument(
        "--model",
        default=None,
        help='"minilm" (default), "smollm2", a local BERT folder or a .gguf file',
    )
    trace.add_argument(
        "--causal",
        action="store_true",
        help="hide later tokens (what-if; a decoder is always causal, so a no-op there)",
    )
    trace.add_argument("--no-scale", action="store_true", help="skip ÷√d_k (what-if)")
    trace.add_argument("--temperature", type=float, default=1.0, help="softmax temperature")
    trace.add_argument(
        "--knock",
        default="",
        metavar="L.H[,L.H...]",
        help="knock out these heads (layer.head, numbered from 0 as the app shows them): "
        "their outputs are zeroed before W_O, and the whole knocked run is written",
    )
    _roles_parser(sub)
    listen = sub.add_parser("listen", help="transcribe a clip with Whisper tiny.en, save attention")
    listen.add_argument("audio", help="a WAV, FLAC, OGG or MP3 file (its first 30 s are heard)")
    listen.add_argument("--out", required=True, help="where to write the .npz")
    return parser


def _roles_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The ``roles`` subcommand's arguments."""
    roles = sub.add_parser("roles", help="score and name every head; run the induction probe")
    roles.add_argument("sentence", help="the text whose pass the heads are scored on")
    roles.add_argument("--out", required=True, help="where to write the .npz")
    roles.add_argument("--model", default=None, help='"minilm" (default), "smollm2" or a path')
    roles.add_argument(
        "--probe-len", type=int, default=50, help="random tokens per copy (2..1000; 50)"
    )
    roles.add_argument("--probe-seed", type=int, default=0, help="the probe's seed (>= 0; 0)")


def _roles_arrays(scores: RoleScores, probe: Probe) -> dict[str, NDArray[Any]]:
    """The roles command's npz keys (module docstring)."""
    arrays: dict[str, NDArray[Any]] = dict(scores.arrays())
    names = name_heads(scores)
    arrays["names"] = np.array([[head.role for head in row] for row in names])
    arrays["rule"] = np.array(RULE.text())
    arrays["probe_ids"] = probe.ids
    arrays["probe_induction"] = probe.induction_lh
    if probe.loss is not None:
        arrays["probe_loss"] = probe.loss
    return arrays


def _roles_summary(scores: RoleScores, probe: Probe) -> str:
    """One line: how many heads are named and by what, the probe's best head and its loss."""
    roles = [head.role for row in name_heads(scores) for head in row]
    named = Counter(role for role in roles if role != "mixed")
    jobs = ", ".join(f"{count} {LABELS[role]}" for role, count in named.most_common())
    layer, head = probe.top_heads(1)[0]
    best = f"induction up to {probe.induction_lh[layer, head]:.2f} (head {layer}.{head})"
    loss = ""
    if probe.loss is not None:
        first, second = probe.mean_loss()
        loss = f", loss {first:.1f} -> {second:.1f} nats on the second copy"
    return (
        f"{scores.n_tokens} tokens, {len(roles)} heads: {sum(named.values())} named "
        f"({jobs or 'none'}); probe {probe.n}x2: {best}{loss}"
    )


def _roles(args: argparse.Namespace) -> int:
    """Score and name every head of ``args.sentence``'s pass, run the probe, write the keys."""
    try:
        check_text(args.sentence, max_chars=None)  # before the model loads
        if not 2 <= args.probe_len <= 1000:
            raise ValueError(f"--probe-len must be 2..1000 tokens per copy, got {args.probe_len}")
        if args.probe_seed < 0:
            raise ValueError(f"--probe-seed must be >= 0, got {args.probe_seed}")
        model = load_model(args.model)
        scores = role_scores(trace_sentence(model, args.sentence))
        probe = run_probe(model, args.probe_len, args.probe_seed)
    except (ModelLoadError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    path = Path(args.out)
    np.savez(path, **_roles_arrays(scores, probe))  # type: ignore[arg-type]  # numpy stub
    print(f"{_roles_summary(scores, probe)} -> {path}")
    return 0


def _listen(audio: str, out: str) -> int:
    """Transcribe ``audio`` and write the listen keys to ``out``."""
    from attention_core.methods.word_timing import timing_arrays, word_timing
    from attention_core.models import load_model
    from attention_core.models.whisper.audio import is_silent, load_audio
    from attention_core.models.whisper.generate import listen_arrays, transcribe
    from attention_core.models.whisper.mel import log_mel

    try:
        clip = load_audio(audio)
        trace = transcribe(load_model("whisper"), log_mel(clip.samples_n))
    except (ModelLoadError, ValueError) as err:  # AudioError is a ValueError
        print(f"error: {err}", file=sys.stderr)
        return 2
    path = Path(out)
    arrays = listen_arrays(trace, clip.notices)
    arrays.update(timing_arrays(word_timing(trace, len(clip.samples_n))))
    np.savez(path, **arrays)  # type: ignore[arg-type]  # numpy stub
    for notice in clip.notices:
        print(f"note: {notice}", file=sys.stderr)
    if is_silent(clip.samples_n):
        print("note: the recording is silent; any text below is Whisper's guess", file=sys.stderr)
    heard = trace.text or "(nothing: no speech heard)"
    print(f"{len(trace.text_ids)} tokens: {heard} -> {path}")
    return 0


MAX_FILE_BYTES = 4 * MAX_CHARS  # a text file is read only up to this (UTF-8: ≤ 4 bytes a char)


def _text(args: argparse.Namespace) -> str:
    """The sentence given, or the file's text (its size checked before it is read)."""
    if args.file is None:
        return str(args.sentence or "")  # empty: check_text says so
    if args.sentence:
        raise ValueError("give the text or --file, not both")
    path = Path(args.file)
    if not path.is_file():
        raise ValueError(f"{path} is not a file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path} is over {MAX_FILE_BYTES:,} bytes: cut it to a page or two")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start})") from err


def _layers(text: str) -> list[int] | None:
    """``--layers 0,29`` as [0, 29]; empty: every layer."""
    if not text:
        return None
    try:
        return [int(part) for part in text.split(",")]
    except ValueError as err:
        raise ValueError(f"--layers takes layer numbers like 0,29, got {text!r}") from err


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "listen":
        return _listen(args.audio, args.out)
    if args.command == "roles":
        return _roles(args)
    try:
        text = check_text(_text(args), max_chars=None)  # before the model loads
        layers = _layers(args.layers)
        model = load_model(args.model)
        knocked = parse_heads(args.knock) if args.knock else ()
        whatif = WhatIf(args.causal, not args.no_scale, args.temperature, knocked=knocked)
        trace = trace_sentence(model, text, whatif)
    except (ModelLoadError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.causal and model.config.causal:
        print(
            f"note: {model.config.name} is a decoder, always causal: --causal changes nothing",
            file=sys.stderr,
        )
    try:
        path = save_npz(trace, args.out, layers)
    except ValueError as err:  # a layer past the model's last
        print(f"error: {err}", file=sys.stderr)
        return 2
    cut = f" ({trace.tokens.n_cut} tokens cut at the model's limit)" if trace.tokens.n_cut else ""
    print(f"{trace.n_tokens} tokens{cut} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
