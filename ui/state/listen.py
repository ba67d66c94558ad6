"""The Listen page's session entries (ui.state.entry says how an entry is read, written and
handed to its widget)."""

from __future__ import annotations

from typing import Any

from ui.presets import clip_names
from ui.state.entry import Entry, State, Url, choice


class Listen(State):
    """Where the audio comes from, and which token and encoder layer the views show."""

    PAGE = "listen"
    clip = Url("lis_clip", clip_names()[0], choice(*clip_names()))  # the example clip
    source: Entry[str | None] = Entry("lis_source", None)  # clip, microphone, file or text
    mic: Entry[Any] = Entry("lis_mic", None)  # the recorder
    file: Entry[Any] = Entry("lis_file", None)  # the uploader
    text = Entry("lis_text", "")  # the sentence espeak-ng speaks
    token = Entry("lis_token", 0)  # the text token followed over the sound
    encoder_layer = Entry("lis_enc_layer", 0)
    cross: Entry[Any] = Entry("lis_cross", None)  # the cross-attention explorer (its reports)


LISTEN = Listen()
