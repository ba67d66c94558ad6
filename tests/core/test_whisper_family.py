"""Whisper on the common path: ``load_model("whisper")`` and ``load_config("whisper")`` through
the registry, its config the common ``ModelConfig`` with the decoder's sizes read from the files
(model.bin's table), the family object's tokenize / run / trace_sentence / trace_nbytes, and the
family picked by the registry alone (``family_of``, a folder claimed by its model.bin)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from attention_core import ModelConfig, WhatIf, WhisperDims, WhisperModel, log_mel, transcribe
from attention_core.models import (
    FAMILIES,
    family_of,
    load_config,
    load_model,
    run_model,
    tokenize,
    trace_nbytes,
    trace_sentence,
)
from attention_core.models.whisper import WHISPER
from attention_core.models.whisper import config as whisper_config
from attention_core.models.whisper.audio import load_audio, speak
from attention_core.models.whisper.ct2_file import read_ct2
from attention_core.models.whisper.model import whisper_folder

CLIPS = Path(__file__).resolve().parents[2] / "examples" / "clips"


@pytest.fixture(scope="module")
def whisper() -> WhisperModel:
    return load_model("whisper")


@pytest.fixture(scope="module")
def river(whisper):
    return transcribe(whisper, log_mel(load_audio(CLIPS / "river.wav").samples_n))


def test_load_model_gives_whisper_with_the_common_config_read_from_the_files(whisper):
    assert isinstance(whisper, WhisperModel)
    cfg, table = whisper.config, read_ct2(whisper_folder() / "model.bin")
    assert isinstance(cfg, ModelConfig) and isinstance(whisper.dims, WhisperDims)
    n_dec = sum(1 for k in table.variables if k.endswith("ffn/linear_0/weight") and "decoder/" in k)
    vocab, d = table.get("decoder/embeddings/weight").shape
    assert cfg.n_layers == n_dec == len(whisper.params.decoder_layers)
    assert cfg.n_heads == int(table.get("decoder/num_heads"))
    assert (cfg.d_model, cfg.vocab_size, cfg.d_head) == (d, vocab, d // cfg.n_heads)
    assert cfg.n_positions == table.get("decoder/position_encodings/encodings").shape[0]
    assert cfg.d_ff == table.get("decoder/layer_0/ffn/linear_0/weight").shape[0]
    assert (cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.n_positions) == (4, 6, 384, 448)  # tiny.en
    assert (cfg.family, cfg.key, cfg.name, cfg.positions) == (
        "whisper",
        "whisper",
        "Whisper tiny.en",
        "learned",
    )
    assert cfg.causal and cfg.has_lm_head and cfg.audio
    assert not (cfg.has_sentence_embedding or cfg.special_tokens or cfg.post_norm)
    assert (whisper.dims.n_mels, whisper.dims.n_frames, whisper.dims.n_encoder_layers) == (
        80,
        1500,
        4,
    )


def test_load_config_reads_no_weight(whisper, monkeypatch):
    whisper_config._cached_table.cache_clear()
    real = Path.read_bytes

    def refuse_the_weights(path: Path) -> bytes:
        assert path.name != "model.bin", "load_config read the weights"
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", refuse_the_weights)
    assert load_config("whisper") == whisper.config
    mapped = read_ct2(whisper_folder() / "model.bin", mapped=True)  # the table, no weight read
    assert mapped.spec == "WhisperSpec"
    monkeypatch.undo()
    whole = read_ct2(whisper_folder() / "model.bin")
    assert whole.variables.keys() == mapped.variables.keys()
    for name in ("encoder/conv1/weight", "decoder/num_heads", "decoder/projection/weight"):
        np.testing.assert_array_equal(whole.get(name), mapped.get(name))


def test_the_registry_alone_picks_the_whisper_family(whisper, river, tmp_path):
    assert FAMILIES["whisper"] is WHISPER
    assert family_of(whisper) is family_of(whisper.config) is family_of(river) is WHISPER
    assert WHISPER.offers.audio and WHISPER.offers.causal and WHISPER.offers.next_token
    assert not WHISPER.offers.sentence_vector
    folder = whisper_folder()
    assert WHISPER.claims(str(folder)) and not WHISPER.claims(str(tmp_path))
    (tmp_path / "model.bin").write_bytes(b"\x06\x00\x00\x00\x0a\x00OtherSpec\x00")
    assert not WHISPER.claims(str(tmp_path))
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("model.bin", "config.json", "tokenizer.json"):
        (copy / name).symlink_to(folder / name)
    by_path = load_model(str(copy))  # a folder: Whisper claims it before BERT's "any folder"
    assert isinstance(by_path, WhisperModel)
    assert (by_path.config.key, by_path.config.name) == (str(copy), "copy")
    assert load_config(str(copy)) == by_path.config
    shutil.rmtree(copy)


def test_tokenize_is_whispers_own_bpe(whisper, river):
    tokens = tokenize(whisper, " The river bank, muddy!")
    enc = whisper.tokenizer.encode(" The river bank, muddy!", add_special_tokens=False)
    assert tokens.input_ids_t.tolist() == enc.ids
    assert tokens.tokens == ("ĠThe", "Ġriver", "Ġbank", ",", "Ġmuddy", "!")  # as the vocabulary
    assert tokens.offsets_t2.tolist() == [list(o) for o in enc.offsets]
    assert not tokens.special_t.any() and tokens.n_cut == 0
    cut = tokenize(whisper, " The river bank, muddy!", max_tokens=2)
    assert (cut.tokens, cut.n_cut) == (("ĠThe", "Ġriver"), 4)
    # the transcript tokenized again gives the ids Whisper wrote for it
    written = tokenize(whisper, whisper.decode(river.text_ids))
    assert tuple(written.input_ids_t.tolist()) == river.text_ids
    with pytest.raises(ValueError, match="max_tokens"):
        tokenize(whisper, "hello", max_tokens=449)


def test_run_refuses_tokens_and_names_transcribe(whisper):
    with pytest.raises(ValueError, match=r"reads audio.*transcribe"):
        run_model(whisper, tokenize(whisper, "hello"))


def test_trace_nbytes_matches_a_real_transcriptions_arrays(whisper, river):
    assert trace_nbytes(whisper.config, len(river.text_ids)) == river.nbytes
    arrays = (
        river.mel_ft,
        river.encoder_hidden_ltd,
        river.self_pattern_lhqk,
        river.cross_pattern_lhqk,
        river.decoder_hidden_ltd,
    )
    assert river.nbytes == sum(a.nbytes for a in arrays)
    grown = trace_nbytes(whisper.config, len(river.text_ids) + 1) - river.nbytes
    t = len(river.token_ids)
    assert grown == 4 * 4 * 6 * (2 * t + 1 + 1500) + 4 * 5 * 384  # a row, a column, a stream row


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_trace_sentence_speaks_the_text_and_transcribes_it(whisper):
    text = "The cat sat on the mat."
    trace = trace_sentence(whisper, text)
    again = transcribe(whisper, log_mel(speak(text).samples_n))
    assert trace.token_ids == again.token_ids and trace.text == again.text
    np.testing.assert_array_equal(trace.cross_pattern_lhqk, again.cross_pattern_lhqk)
    assert "cat" in trace.text.lower()
    assert trace_sentence(whisper, text, WhatIf(causal=True)).token_ids == trace.token_ids
    short = trace_sentence(whisper, text, max_tokens=2)
    assert short.text_ids == trace.text_ids[:2]
    with pytest.raises(ValueError, match="what-if"):
        trace_sentence(whisper, text, WhatIf(scale=False))
