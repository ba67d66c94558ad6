"""Listen: cross-attention. Whisper tiny.en transcribes a clip (example, microphone, upload or
espeak-ng); each token shows where it listened, each word when it was heard."""

import streamlit as st

from attention_core.models.whisper.audio import is_silent, speech_frames
from ui import glossary, router
from ui.cache import whisper_error
from ui.listen import source, verify, views, words
from ui.listen.cache import digest, heard

shared = router.shared()  # the sidebar shows Whisper tiny.en here (ui.registry: its models)
glossary.heading("Listen: cross-attention", level="title")
glossary.say(
    "Whisper tiny.en writes down speech. Its decoder's **queries come from the words** it has "
    "written so far; the **keys and values come from the audio**, encoded into 20 ms frames. "
    "So every written word attends to moments of the sound. This is the descendant of the "
    "attention first used for translation (Bahdanau, Cho and Bengio, 2014)."
)
if error := whisper_error():
    st.error(f"Whisper could not be loaded. {error}")
    st.stop()
audio = source.choose()
if audio is None:
    st.stop()
source.notices(audio)
if is_silent(audio.samples_n):
    glossary.box(source.NO_SPEECH, kind="warning")
    st.stop()
key = digest(audio.samples_n)
clip = heard(key, audio.samples_n, speech_frames(audio.samples_n))
if len(clip.token_ids) == clip.n_prompt:
    glossary.box("Whisper heard no words in this recording. Try speaking more clearly or closer.")
    st.stop()
views.transcript(clip, source.said())
verify.button(clip, key, views.shown(clip))
glossary.heading("Where each word listened", level="subheader")
layer, head = shared.layer, shared.head
views.cross(clip, layer, head)
words.strip(clip, audio)
views.scores(clip)
glossary.heading("One token, over the sound", level="subheader")
views.token_view(clip, audio, layer, head)
glossary.heading("Self-attention, in the decoder and the encoder", level="subheader")
glossary.say(
    "The decoder's tokens also attend to each other, each only to itself and the ones before "
    "it (masked). The encoder's frames attend to each other: open their section below to see "
    "them over the speech alone (it is worked out when you open it)."
)
views.decoder_self(clip, layer, head)
views.encoder_self(clip, key, head)
views.engineers()
