"""Ways of reading a trace, each a stated method on the numbers a family's pass returns:
norm-weighted attention, rollout, head knock-out, the logit lens, hiding a word, Whisper's
time-following heads, values behind ΔE, geometry of the hidden states, the decoder's head
measures, and a trace written out (``export`` for NumPy, ``pack`` for a browser view)."""
