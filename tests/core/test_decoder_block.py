"""How Whisper writes one token (``attention_core.lessons.decoder_block``) against transformers'
WhisperForConditionalGeneration with model.bin's weights, on the same log-mel and decoder ids:
the masked self-attention and cross-attention rows (its attentions), what each sub-layer adds
(its modules' outputs, read with hooks), the sizes before and after the final LayerNorm, the
top five next-token probabilities (its logits), and "computed once" (its cross-attention cache
holds the same keys at every step; CTranslate2 writes as many tokens as the steps counted).
The words the tour says are checked against these numbers: weights after the row are 0, rows
sum to 1, the top token is the one Whisper wrote."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.lessons.decoder_block import SPECIAL_WORDS, writing
from attention_core.models.whisper.audio import speech_frames
from attention_core.models.whisper.forward import decode_tokens, memory_of
from attention_core.models.whisper.sublayers import layer_updates
from tests.core import whisper_refs as refs

pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

CLIPS = ("river.wav", "fluffy.wav")
TOL_ATTENTION = 1e-4  # weights in [0, 1] (references.whisper.TOL_ATTENTION)
TOL_RELATIVE = 1e-4  # vectors, relative to their largest number


@pytest.fixture(scope="module", params=CLIPS)
def clip(request):
    """(trace, span, transformers' outputs with every sub-layer's update) for one clip."""
    from attention_core.models.whisper.generate import transcribe

    samples = refs.read_clip(refs.CLIPS / request.param)
    mel = refs.log_mel(samples)
    trace = transcribe(refs.engine(), mel)
    return trace, speech_frames(samples), _hooked(mel, trace.token_ids)


def _hooked(mel, token_ids):
    """transformers' outputs, plus each decoder layer's three updates and the stream entering
    the final LayerNorm, read with forward hooks on its modules."""
    hf = refs.hf_model()
    seen: dict[str, np.ndarray] = {}

    def keep(name, pick):
        return lambda _m, args, out: seen.__setitem__(name, pick(args, out)[0].numpy())

    first = lambda _a, out: out[0]  # noqa: E731 (attention modules return (output, weights))
    handles = []
    for i, lay in enumerate(hf.model.decoder.layers):
        handles.append(lay.self_attn.register_forward_hook(keep(f"self{i}", first)))
        handles.append(lay.encoder_attn.register_forward_hook(keep(f"cross{i}", first)))
        handles.append(lay.fc2.register_forward_hook(keep(f"ffn{i}", lambda _a, out: out)))
    norm = hf.model.decoder.layer_norm
    handles.append(norm.register_forward_hook(keep("last", lambda args, _o: args[0])))
    try:
        out = refs.hf_attentions(mel, token_ids)
    finally:
        for handle in handles:
            handle.remove()
    return out, seen


def _rel(got, want) -> float:
    want = np.asarray(want, np.float64)
    return float(np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max())


def test_each_sublayers_update_equals_transformers_module(clip):
    trace, _, (out, seen) = clip
    model = refs.engine()
    memory = memory_of(model, trace.encoder_hidden_ltd[-1])
    passed = decode_tokens(model, list(trace.token_ids), memory)
    for layer in range(model.config.n_layers):
        entering = out.decoder_hidden_states[layer][0].numpy()
        assert _rel(passed.hidden_ltd[layer], entering) <= TOL_RELATIVE
        ups = layer_updates(model, passed.hidden_ltd[layer], layer, memory[layer])
        for name, got in (("self", ups.self_td), ("cross", ups.cross_td), ("ffn", ups.ffn_td)):
            assert _rel(got, seen[f"{name}{layer}"]) <= TOL_RELATIVE, (name, layer)
        if layer + 1 < model.config.n_layers:  # the next layer's input is this one's output
            want = out.decoder_hidden_states[layer + 1][0].numpy()
            assert _rel(ups.out_td, want) <= TOL_RELATIVE
    with pytest.raises(ValueError, match="layer"):
        layer_updates(model, passed.hidden_ltd[0], 4, memory[0])
    with pytest.raises(ValueError, match="stream_td"):
        layer_updates(model, passed.hidden_ltd[0][:, :10], 0, memory[0])


def _every_choice(trace):
    """Every written token at layer 0 head 5 and layer 3 head 0 (the tour opens on (3, 0))."""
    for written in range(trace.n_prompt, len(trace.token_ids)):
        for where in ((3, 0), (0, 5)):
            yield written, where


def test_every_number_of_the_step_equals_transformers(clip):
    trace, span, (out, seen) = clip
    model = refs.engine()
    probs_tv = torch.softmax(out.logits[0].double(), -1).numpy()
    for written, (layer, head) in _every_choice(trace):
        w = writing(
            model,
            trace.encoder_hidden_ltd[-1],
            trace.token_ids,
            trace.n_prompt,
            written,
            (layer, head),
            span,
        )
        row = written - 1
        assert w.row == row and w.written_id == trace.token_ids[written]
        want_self = out.decoder_attentions[layer][0, head, row].numpy()
        assert np.abs(w.self_row_k - want_self).max() <= TOL_ATTENTION
        # "nothing after it", "sum to 1": the engine's row and the reference's
        assert np.all(w.self_row_k[row + 1 :] == 0) and w.after_max == 0.0
        assert np.all(want_self[row + 1 :] == 0)
        assert abs(w.self_sum - 1) <= 1e-6 and abs(want_self.sum(dtype=np.float64) - 1) <= 1e-6
        want_cross = out.cross_attentions[layer][0, head, row].numpy()
        assert np.abs(w.cross_row_k - want_cross).max() <= TOL_ATTENTION
        assert w.cross_row_k.shape == (1500,) and abs(w.cross_sum - 1) <= 1e-6
        assert abs(w.in_sound - want_cross[span[0] : span[1]].sum(dtype=np.float64)) <= 1e-3
        assert want_cross[w.peak_frame] >= want_cross.max() - TOL_ATTENTION
        s = w.sizes
        assert np.isclose(
            s.stream_in, np.linalg.norm(out.decoder_hidden_states[layer][0, row]), rtol=TOL_RELATIVE
        )
        for size, name in (
            (s.self_attention, "self"),
            (s.cross_attention, "cross"),
            (s.feed_forward, "ffn"),
        ):
            want = np.linalg.norm(seen[f"{name}{layer}"][row])
            assert np.isclose(size, want, rtol=TOL_RELATIVE), (name, layer)
        assert np.isclose(w.last_size, np.linalg.norm(seen["last"][row]), rtol=TOL_RELATIVE)
        final = out.decoder_hidden_states[-1][0, row].numpy()  # after the final LayerNorm
        assert np.isclose(w.final_size, np.linalg.norm(final), rtol=TOL_RELATIVE)
        assert w.n_vocab == out.logits.shape[-1] == 51864
        want_top = np.argsort(-probs_tv[row], kind="stable")[:5]
        assert list(w.top_ids) == list(want_top)
        np.testing.assert_allclose(w.top_p, probs_tv[row, want_top], atol=1e-5)
        # "the top one is the token Whisper wrote", on the shipped clips, for every token
        assert w.top_ids[0] == w.written_id == w.allowed_id


def test_keys_and_values_are_computed_once_and_read_at_every_step(clip):
    """transformers computes the cross-attention's keys and values at the first step and keeps
    the same ones in its cache at the next; they equal the engine's ``memory_of``, made once
    per clip, and CTranslate2 writes the tokens of the steps counted (the last step chose the
    end token)."""
    trace, span, _ = clip
    model = refs.engine()
    w = writing(
        model,
        trace.encoder_hidden_ltd[-1],
        trace.token_ids,
        trace.n_prompt,
        trace.n_prompt,
        (3, 0),
        span,
    )
    assert w.kv_shape == (4, 1500, 384)
    assert w.n_steps == len(refs.ct2_tokens(trace.mel_ft)) + 1 == len(trace.text_ids) + 1
    hf = refs.hf_model()
    prompt = list(trace.token_ids[: trace.n_prompt])
    with torch.no_grad():
        mel = torch.from_numpy(np.array(trace.mel_ft[None]))
        first = hf(input_features=mel, decoder_input_ids=torch.tensor([prompt]), use_cache=True)
        cache = first.cache.cross_attention_cache
        keys = [cache.layers[i].keys for i in range(4)]
        values = [cache.layers[i].values.clone() for i in range(4)]
        hf(
            encoder_outputs=(first.encoder_last_hidden_state,),
            decoder_input_ids=torch.tensor([[trace.text_ids[0]]]),
            cache=first.cache,
            use_cache=True,
        )
    memory = memory_of(model, trace.encoder_hidden_ltd[-1])
    for i in range(4):
        assert keys[i].shape == (1, 6, 1500, 64)
        assert cache.layers[i].keys is keys[i]  # the same keys at the second step
        assert torch.equal(cache.layers[i].values, values[i])
        assert _rel(memory[i][0], keys[i][0].numpy()) <= 1e-3  # encoder's tolerance
        assert _rel(memory[i][1], values[i][0].numpy()) <= 1e-3


def test_the_special_tokens_are_named_and_bad_choices_refused(clip):
    trace, span, _ = clip
    model = refs.engine()
    names = model.token_strings(trace.prompt_ids)
    assert names == ["<|startoftranscript|>", "<|notimestamps|>"]
    assert all(name in SPECIAL_WORDS for name in names)
    assert model.token_strings([model.dims.eot_id]) == ["<|endoftext|>"]
    audio = trace.encoder_hidden_ltd[-1]
    for written in (trace.n_prompt - 1, len(trace.token_ids)):
        with pytest.raises(ValueError, match="written"):
            writing(model, audio, trace.token_ids, trace.n_prompt, written, (0, 0), span)
    with pytest.raises(ValueError, match="head"):
        writing(model, audio, trace.token_ids, trace.n_prompt, trace.n_prompt, (0, 6), span)
