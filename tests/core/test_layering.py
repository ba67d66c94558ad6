"""The engine stands alone: importing it and running a trace of either model (and a decoder's
generation) pulls in no UI library, no torch, and not llama.cpp's gguf reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
import attention_core
from attention_core.core.words import word_spans
model = attention_core.load_model()
trace = attention_core.trace_sentence(model, "The river bank was muddy.")
smol = attention_core.load_model("smollm2")
decoded = attention_core.trace_sentence(smol, "The river bank was muddy.")
decoded.pattern_lhqk[3]
gen = attention_core.start_generation(smol, "Hi", max_new_tokens=2)
gen.step(attention_core.choose(gen.last))
word_spans(decoded.tokens)
print(json.dumps({
    "n_tokens": trace.n_tokens,
    "loaded": sorted(m for m in ("streamlit", "plotly", "torch", "transformers",
                                 "sentence_transformers", "scipy", "gguf") if m in sys.modules),
}))
"""


def test_engine_imports_no_streamlit_plotly_or_torch():
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["n_tokens"] == 8  # [CLS] the river bank was muddy . [SEP]
    assert result["loaded"] == []
