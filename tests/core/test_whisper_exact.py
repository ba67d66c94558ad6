"""Whisper tiny.en against its references on several clips (speakers, speeds, silence around):
the encoder's output against CTranslate2's ``encode`` (≤ 1e-3 relative), the greedy tokens equal
to CTranslate2's ``generate(beam_size=1)``, and every attention (encoder self, decoder masked
self, cross) against transformers with model.bin's weights mapped in (≤ 1e-4)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.core import whisper_refs as refs

pytest.importorskip("ctranslate2")
pytest.importorskip("transformers")

CLIP_IDS = [*refs.SHIPPED, "spoken"]


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """Each clip's log-mel input, from transformers' feature extractor."""
    paths = {name: refs.CLIPS / name for name in refs.SHIPPED}
    spoken = refs.spoken_clip(tmp_path_factory.mktemp("whisper"))
    if spoken is not None:
        paths["spoken"] = spoken
    return {name: refs.log_mel(refs.read_clip(path)) for name, path in paths.items()}


@pytest.fixture(scope="module")
def traces(clips):
    from attention_core.models.whisper.generate import transcribe

    return {name: transcribe(refs.engine(), mel) for name, mel in clips.items()}


def _get(mapping, name):
    if name not in mapping:
        pytest.skip("espeak-ng is not installed: no spoken clip")
    return mapping[name]


@pytest.mark.parametrize("name", CLIP_IDS)
def test_encoder_output_equals_ctranslate2(clips, traces, name):
    want = refs.ct2_encode(_get(clips, name))
    got = _get(traces, name).encoder_hidden_ltd[-1]
    assert got.shape == want.shape == (1500, 384)
    assert np.abs(got - want).max() / np.abs(want).max() <= 1e-3


@pytest.mark.parametrize("name", CLIP_IDS)
def test_greedy_tokens_equal_ctranslate2(clips, traces, name):
    trace = _get(traces, name)
    want = refs.ct2_tokens(clips[name])
    assert list(trace.text_ids) == want
    assert len(want) >= 5  # a sentence was heard, not an empty transcript
    assert trace.token_ids == (50257, 50362, *want)
    assert trace.text == refs.engine().decode(want).strip()


@pytest.mark.parametrize("max_length", [6, 13])
def test_a_short_max_length_cuts_as_ctranslate2_does(clips, max_length):
    """CTranslate2 generates at most max_length // 2 tokens (6 -> 3, 13 -> 6)."""
    from attention_core.models.whisper.generate import transcribe

    mel = clips["fluffy.wav"]
    want = refs.ct2_tokens(mel, max_length)
    assert len(want) == max_length // 2
    assert list(transcribe(refs.engine(), mel, max_length).text_ids) == want


@pytest.mark.parametrize("name", CLIP_IDS)
def test_every_attention_equals_transformers(clips, traces, name):
    trace = _get(traces, name)
    out = refs.hf_attentions(clips[name], trace.token_ids)
    n = len(trace.token_ids)
    assert trace.self_pattern_lhqk.shape == (4, 6, n, n)
    assert trace.cross_pattern_lhqk.shape == (4, 6, n, 1500)
    for layer in range(4):
        want_self = out.decoder_attentions[layer][0].numpy()
        want_cross = out.cross_attentions[layer][0].numpy()
        np.testing.assert_allclose(trace.self_pattern_lhqk[layer], want_self, rtol=0, atol=1e-4)
        np.testing.assert_allclose(trace.cross_pattern_lhqk[layer], want_cross, rtol=0, atol=1e-4)
        want_enc = out.encoder_attentions[layer][0].numpy()
        got_enc = trace.encoder_pattern_hqk(layer)
        assert got_enc.shape == (6, 1500, 1500)
        np.testing.assert_allclose(got_enc, want_enc, rtol=0, atol=1e-4)
    # the streams too: the decoder's final-normed output, each encoder layer's input
    last = out.decoder_hidden_states[-1][0].numpy()
    assert np.abs(trace.decoder_hidden_ltd[-1] - last).max() / np.abs(last).max() < 1e-4
    for layer in range(4):
        want = out.encoder_hidden_states[layer][0].numpy()
        got = trace.encoder_hidden_ltd[layer]
        assert np.abs(got - want).max() / np.abs(want).max() < 1e-4, layer


def test_masked_self_attention_hides_later_tokens_and_rows_sum_to_one(traces):
    trace = next(iter(traces.values()))
    n = len(trace.token_ids)
    later = np.triu(np.ones((n, n), bool), 1)
    assert (trace.self_pattern_lhqk[..., later] == 0).all()
    np.testing.assert_allclose(trace.self_pattern_lhqk.sum(-1), 1, atol=1e-5)
    np.testing.assert_allclose(trace.cross_pattern_lhqk.sum(-1), 1, atol=1e-5)


def test_trace_is_small_and_frozen(traces):
    trace = next(iter(traces.values()))
    assert trace.nbytes < 20_000_000  # the encoder's self-attention is not held
    assert trace.alignment_heads == ((1, 0), (2, 0), (2, 5), (3, 0), (3, 1), (3, 2), (3, 3), (3, 4))
    assert trace.prompt_ids == (50257, 50362)
    with pytest.raises(ValueError):
        trace.cross_pattern_lhqk[0, 0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="outside"):
        trace.encoder_pattern_hqk(4)


def test_wrong_input_shape_is_refused():
    from attention_core.models.whisper.generate import transcribe

    with pytest.raises(ValueError, match=r"\[80, 3000\]"):
        transcribe(refs.engine(), np.zeros((80, 100), np.float32))
