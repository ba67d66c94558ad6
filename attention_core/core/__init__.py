"""The shared attention core, the floor every family stands on: scores → scale → mask → softmax →
values → ΔE (``attention``, ``functional``), positions (rotary and learned), the what-if switches,
tokens and words, buffers and the display policy. Nothing here knows which family runs."""
