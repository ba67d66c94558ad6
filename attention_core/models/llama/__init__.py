"""The Llama family (SmolLM2-135M-Instruct, a decoder, from a GGUF file): the file reader
(``gguf_file``), config, weights and loading (``model``), the byte-level BPE tokenizer, one decoder
layer (``layers``), the pass and its trace (``forward``, ``cache``) and generation
(``generate``)."""
