"""attention_core.methods.word_timing against CTranslate2's ``Whisper.align`` (the DTW path, integer
pairs equal) on every shipped clip and on espeak-ng's clips in another voice, for cut windows of
every size; the end token's row against transformers; the median filter against SciPy; the words
against the path and the transcript; the listen command's new keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attention_core.methods.word_timing import (
    dtw_path,
    end_row_lhk,
    first_frames,
    median_filter,
    negative_dtw,
    standardize_rows,
    word_timing,
)
from tests.core import whisper_refs as refs

ctranslate2 = pytest.importorskip("ctranslate2")

SHIPPED = sorted(p.stem for p in refs.CLIPS.glob("*.wav"))
LONG_TEXT = (
    "Whisper writes down what it hears. Each word it writes listens to the sound, and eight of "
    "its heads listen near the moment the word was said, so the words can be placed in time."
)


def heard(path: Path):
    """The engine's samples, log-mel and trace of a clip."""
    from attention_core.models.whisper.audio import load_audio
    from attention_core.models.whisper.generate import transcribe
    from attention_core.models.whisper.mel import log_mel

    samples = load_audio(path).samples_n
    mel = log_mel(samples)
    return samples, mel, transcribe(refs.engine(), mel)


def ct2_path(mel: np.ndarray, text_ids: tuple[int, ...], num_frames: int) -> np.ndarray:
    """CTranslate2's ``Whisper.align`` path [P, 2] from [<|startoftranscript|>] and the text."""
    features = ctranslate2.StorageView.from_array(np.array(mel[None], np.float32))
    result = refs.ct2_model().align(
        features, [50257], [list(text_ids)], [num_frames], median_filter_width=7
    )
    return np.array(result[0].alignments, dtype=np.int64).reshape(-1, 2)


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory):
    """Each clip's (samples, log-mel, trace): the shipped ones, espeak-ng's in another voice
    and a long one (about 12 s) when espeak-ng is installed."""
    paths = {name: refs.CLIPS / f"{name}.wav" for name in SHIPPED}
    folder = tmp_path_factory.mktemp("words")
    spoken = refs.spoken_clip(folder)
    if spoken is not None:
        from attention_core.models.whisper.audio import speak

        paths["spoken"] = spoken
        long_wav = folder / "long.wav"
        import soundfile as sf

        sf.write(long_wav, speak(LONG_TEXT).samples_n, 16_000)
        paths["long"] = long_wav
    return {name: heard(path) for name, path in paths.items()}


def _get(clips, name):
    if name not in clips:
        pytest.skip("espeak-ng is not installed: no spoken clip")
    return clips[name]


@pytest.mark.parametrize("name", [*SHIPPED, "spoken", "long"])
def test_path_equals_ctranslate2_align(clips, name):
    samples, mel, trace = _get(clips, name)
    want = ct2_path(mel, trace.text_ids, len(samples) // 160)
    got = word_timing(trace, len(samples)).align_path
    assert got.dtype == np.int64 and got.shape == want.shape
    assert len(got) > len(trace.text_ids) + 1  # a path over the text and the end token
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("num_frames", [0, 1, 2, 4, 6, 8, 11, 40, 301, 2999, 3000, 4000])
def test_path_equals_ctranslate2_for_every_window(clips, num_frames):
    """Cut windows from none to longer than the clip: no frame (an empty path), up to 3 frames
    (the median filter leaves them), odd and even sizes, past the 30 s window."""
    _, mel, trace = clips["animal"]
    want = ct2_path(mel, trace.text_ids, num_frames)
    np.testing.assert_array_equal(dtw_path(trace, num_frames * 160), want)


def test_the_end_tokens_row_equals_transformers(clips):
    _, mel, trace = clips["river"]
    ids = (*trace.token_ids, refs.engine().dims.eot_id)
    out = refs.hf_attentions(mel, ids)
    got = end_row_lhk(trace)
    assert got.shape == (4, 6, 1500)
    for layer in range(4):
        want = out.cross_attentions[layer][0, :, -1].numpy()
        np.testing.assert_allclose(got[layer], want, rtol=0, atol=1e-4)


@pytest.mark.parametrize("name", [*SHIPPED, "spoken", "long"])
def test_words_are_timed_by_the_path(clips, name):
    """Each word starts where the path first reaches its first token and ends where it first
    reaches the token after the word (punctuation joined in takes no time); the words, joined,
    are the transcript."""
    samples, _, trace = _get(clips, name)
    timing = word_timing(trace, len(samples))
    frames = first_frames(timing.align_path)
    path = timing.align_path
    n_text = len(trace.text_ids)
    assert len(frames) == n_text + 1  # every text token, then the end token
    for token in range(n_text + 1):
        assert frames[token] == path[path[:, 0] == token, 1].min()
    assert "".join(timing.words).strip() == trace.text
    assert all(word.startswith(" ") for word in timing.words)
    assert len(timing.words) == len(timing.word_starts) == len(timing.word_ends)
    assert timing.word_starts.dtype == timing.word_ends.dtype == np.float64
    for w, (first, after) in enumerate(timing.word_tokens):
        assert timing.word_starts[w] == pytest.approx(frames[first] * 0.02, abs=1e-12)
        assert timing.word_ends[w] == pytest.approx(frames[after] * 0.02, abs=1e-12)
    assert timing.word_starts[0] == 0.0  # the path starts at the first frame
    assert np.all(np.diff(timing.word_starts) >= 0) and np.all(timing.word_ends >= 0)
    assert timing.word_ends[-1] <= len(samples) / 16_000


def test_punctuation_joins_its_word_and_a_split_word_stays_whole(clips):
    _, _, trace = clips["animal"]
    timing = word_timing(trace, 64_378)
    assert timing.words[2] == " didn't" and timing.words[-1] == " tired."
    assert timing.word_tokens[2].tolist() == [2, 4]  # " didn" + "'t"
    assert timing.word_tokens[-1].tolist() == [11, 12]  # " tired": the "." takes no time


def test_median_filter_equals_scipy():
    from scipy.ndimage import median_filter as scipy_median

    rng = np.random.default_rng(0)
    for frames in (4, 5, 7, 9, 30):
        x = rng.normal(size=(3, 5, frames)).astype(np.float32)
        want = scipy_median(x, size=(1, 1, 7), mode="mirror")
        np.testing.assert_array_equal(median_filter(x), want)
    short = rng.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_array_equal(median_filter(short), short)  # 3 frames: left as they are


def test_standardize_rows_against_float64():
    rng = np.random.default_rng(1)
    x = rng.random((4, 9, 50)).astype(np.float32)
    want = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)
    np.testing.assert_allclose(standardize_rows(x), want, rtol=0, atol=2e-5)


def test_dtw_on_made_up_matrices():
    """Paths worked out by hand with CTranslate2's rule (minus the weight summed in float32; the
    diagonal when strictly cheapest, else up when strictly cheapest, else left)."""
    eye = 2 * np.eye(4, dtype=np.float32) - 1  # off the diagonal a step costs +1
    np.testing.assert_array_equal(negative_dtw(eye), [[0, 0], [1, 1], [2, 2], [3, 3]])
    # token 0 holds frames 0-2: costs row 1: -1 -2 -3 -3, row 2: -1 -2 -3 -3; at (2, 2) and
    # (2, 3) "up" is strictly cheapest, at the last cell all three tie and "left" wins
    wide = np.zeros((2, 4), np.float32)
    wide[0, :3] = 1.0
    np.testing.assert_array_equal(negative_dtw(wide), [[0, 0], [0, 1], [0, 2], [1, 2], [1, 3]])
    # all zeros: every inner cell ties, so the path goes left along the last row from the end
    # and climbs the first column (the only way into it)
    flat = np.zeros((3, 3), np.float32)
    np.testing.assert_array_equal(negative_dtw(flat), [[0, 0], [1, 0], [2, 0], [2, 1], [2, 2]])


def test_listen_writes_the_words(tmp_path: Path, clips):
    from attention_core.__main__ import main

    out = tmp_path / "river.npz"
    assert main(["listen", str(refs.CLIPS / "river.wav"), "--out", str(out)]) == 0
    samples, _, trace = clips["river"]
    timing = word_timing(trace, len(samples))
    with np.load(out) as npz:
        assert npz["align_path"].dtype == np.int64 and npz["align_path"].shape[1] == 2
        np.testing.assert_array_equal(npz["align_path"], timing.align_path)
        assert npz["words"].tolist() == list(timing.words)
        n_words = len(npz["words"])
        assert npz["word_starts"].shape == npz["word_ends"].shape == (n_words,)
        np.testing.assert_array_equal(npz["word_starts"], timing.word_starts)
        np.testing.assert_array_equal(npz["word_ends"], timing.word_ends)
