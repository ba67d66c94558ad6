"""The Whisper family (tiny.en, an encoder-decoder over the visitor's voice, from a CTranslate2
folder): the file reader (``ct2_file``), audio in (``audio``), the log-mel spectrogram (``mel``),
config, weights, tokenizer and loading (``model``), the passes (``forward``) and transcription
(``generate``)."""
