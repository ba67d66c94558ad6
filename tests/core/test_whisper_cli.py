"""``python -m attention_core listen AUDIO --out F.npz``: the keys and shapes of the contract,
equal to the engine's trace of the same audio and to the references (CTranslate2's tokens,
transformers' attentions); bad audio and a stereo 48 kHz file handled with plain messages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from attention_core.__main__ import main
from tests.core import whisper_refs as refs

KEYS = {
    "text",
    "token_ids",
    "prompt_ids",
    "encoder_hidden",
    "cross_pattern",
    "self_pattern",
    "log_mel",
    "notices",
    "align_path",
    "words",
    "word_starts",
    "word_ends",
}


@pytest.fixture(scope="module")
def listened(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("listen") / "animal.npz"
    assert main(["listen", str(refs.CLIPS / "animal.wav"), "--out", str(out)]) == 0
    with np.load(out) as npz:
        return {k: npz[k] for k in npz.files}


def test_keys_and_shapes(listened):
    assert set(listened) == KEYS
    n = len(listened["prompt_ids"]) + len(listened["token_ids"])
    assert listened["prompt_ids"].tolist() == [50257, 50362]
    assert listened["encoder_hidden"].shape == (1500, 384)
    assert listened["cross_pattern"].shape == (4, 6, n, 1500)
    assert listened["self_pattern"].shape == (4, 6, n, n)
    assert listened["log_mel"].shape == (80, 3000)
    assert listened["notices"].tolist() == []
    assert listened["align_path"].dtype == np.int64 and listened["align_path"].shape[1] == 2
    n_words = len(listened["words"])
    assert listened["word_starts"].shape == listened["word_ends"].shape == (n_words,) != (0,)
    assert "".join(listened["words"].tolist()).strip() == str(listened["text"])
    assert str(listened["text"]) == "The animal didn't cross the street because it was too tired."


def test_equal_to_the_engine(listened):
    from attention_core.models.whisper.audio import load_audio
    from attention_core.models.whisper.generate import transcribe
    from attention_core.models.whisper.mel import log_mel

    mel = log_mel(load_audio(refs.CLIPS / "animal.wav").samples_n)
    trace = transcribe(refs.engine(), mel)
    np.testing.assert_array_equal(listened["log_mel"], mel)
    assert listened["token_ids"].tolist() == list(trace.text_ids)
    np.testing.assert_array_equal(listened["encoder_hidden"], trace.encoder_hidden_ltd[-1])
    np.testing.assert_array_equal(listened["cross_pattern"], trace.cross_pattern_lhqk)
    np.testing.assert_array_equal(listened["self_pattern"], trace.self_pattern_lhqk)


def test_equal_to_the_references(listened):
    """CTranslate2 on transformers' own log-mel gives the same tokens and encoder output;
    transformers' attentions on the written log-mel and tokens equal the written ones."""
    mel_hf = refs.log_mel(refs.read_clip(refs.CLIPS / "animal.wav"))
    np.testing.assert_allclose(listened["log_mel"], mel_hf, rtol=0, atol=1e-4)
    assert listened["token_ids"].tolist() == refs.ct2_tokens(mel_hf)
    want = refs.ct2_encode(listened["log_mel"])
    assert np.abs(listened["encoder_hidden"] - want).max() / np.abs(want).max() <= 1e-3
    ids = (*listened["prompt_ids"].tolist(), *listened["token_ids"].tolist())
    out = refs.hf_attentions(listened["log_mel"], ids)
    for layer in range(4):
        want_cross = out.cross_attentions[layer][0].numpy()
        want_self = out.decoder_attentions[layer][0].numpy()
        np.testing.assert_allclose(listened["cross_pattern"][layer], want_cross, atol=1e-4)
        np.testing.assert_allclose(listened["self_pattern"][layer], want_self, atol=1e-4)


def test_stereo_48k_is_heard_with_notices(tmp_path: Path, capsys):
    mono = refs.read_clip(refs.CLIPS / "plumbing.wav")
    import soxr

    up = soxr.resample(mono, 16_000, 48_000).astype(np.float32)
    sf.write(tmp_path / "stereo.wav", np.stack([up, up], axis=1), 48_000)
    out = tmp_path / "s.npz"
    assert main(["listen", str(tmp_path / "stereo.wav"), "--out", str(out)]) == 0
    with np.load(out) as npz:
        notices = npz["notices"].tolist()
        assert "Stereo mixed to mono." in notices and "Resampled from 48000 Hz." in notices
        assert "plumbing" in str(npz["text"]).lower()
    assert "note: Stereo mixed to mono." in capsys.readouterr().err


@pytest.mark.parametrize("content", [b"", b"not audio at all" * 10])
def test_bad_audio_is_a_plain_error(tmp_path: Path, capsys, content: bytes):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(content)
    out = tmp_path / "x.npz"
    assert main(["listen", str(bad), "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert not out.exists()


def test_silence_is_said_so_and_decoded_as_ctranslate2_does(tmp_path: Path, capsys):
    """tiny.en hears " you" in digital silence (CTranslate2 too): the CLI writes what the model
    gives and says the recording is silent."""
    sf.write(tmp_path / "quiet.wav", np.zeros(32_000, np.float32), 16_000)
    out = tmp_path / "q.npz"
    assert main(["listen", str(tmp_path / "quiet.wav"), "--out", str(out)]) == 0
    with np.load(out) as npz:
        assert npz["token_ids"].tolist() == refs.ct2_tokens(npz["log_mel"])
    assert "the recording is silent" in capsys.readouterr().err
