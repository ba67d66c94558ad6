"""Command line: ``python -m attention_core trace "SENTENCE" --out FILE.npz [--model KEY|PATH]``.

``--model`` takes "minilm" (the default), "smollm2" (the decoder), a BERT folder or a .gguf file.
``--causal`` is a what-if for the encoder; a decoder's own mask is always causal (a no-op).
``--knock 3.7,0.1`` knocks out heads (layer.head from 0, as the app numbers them).

``python -m attention_core listen AUDIO --out FILE.npz``: Whisper tiny.en transcribes a WAV,
FLAC, OGG or MP3 file (its first 30 s) and writes text, token_ids, prompt_ids, encoder_hidden,
cross_pattern, self_pattern, log_mel, notices and the words in time: align_path (the alignment
heads' DTW path, [P, 2] token and 20 ms frame), words, word_starts and word_ends (seconds)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from attention_core.core.config import ModelLoadError
from attention_core.core.tokens import check_text
from attention_core.core.whatif import WhatIf
from attention_core.methods.export import save_npz
from attention_core.methods.knockout import parse_heads
from attention_core.models import load_model, trace_sentence


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m attention_core", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    trace = sub.add_parser("trace", help="run a sentence and save every intermediate to .npz")
    trace.add_argument("sentence", help="the text to run through the model")
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
    listen = sub.add_parser("listen", help="transcribe a clip with Whisper tiny.en, save attention")
    listen.add_argument("audio", help="a WAV, FLAC, OGG or MP3 file (its first 30 s are heard)")
    listen.add_argument("--out", required=True, help="where to write the .npz")
    return parser


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


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "listen":
        return _listen(args.audio, args.out)
    try:
        check_text(args.sentence, max_chars=None)  # before the model loads
        model = load_model(args.model)
        knocked = parse_heads(args.knock) if args.knock else ()
        whatif = WhatIf(args.causal, not args.no_scale, args.temperature, knocked=knocked)
        trace = trace_sentence(model, args.sentence, whatif)
    except (ModelLoadError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.causal and model.config.causal:
        print(
            f"note: {model.config.name} is a decoder, always causal: --causal changes nothing",
            file=sys.stderr,
        )
    path = save_npz(trace, args.out)
    cut = f" ({trace.tokens.n_cut} tokens cut at the model's limit)" if trace.tokens.n_cut else ""
    print(f"{trace.n_tokens} tokens{cut} -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
