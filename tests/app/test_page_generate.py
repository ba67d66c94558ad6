"""The Generate page: every step's text, guesses and attention equal the engine's own generation
(greedy, sampled, a candidate picked, a token taken back), and bad prompts give a message."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from attention_core import choose, load_model, start_generation
from tests.app.conftest import open_page
from tests.figdata import array, spec
from ui.text import generation

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def smollm2():
    return load_model("smollm2")


def _charts(at) -> dict[str, dict]:
    return {c.proto.id.rsplit("-", 1)[-1]: spec(c) for c in at.get("plotly_chart")}


def _step_view(at) -> dict:
    """The new token's attention view (drawn in the browser): its data, rows decoded."""
    [view] = [c for c in at.get("bidi_component") if c.proto.id.endswith("gen_heads")]
    data = json.loads(view.proto.json)
    rows = np.frombuffer(base64.b64decode(data["rows"]), "<f4")
    return data | {"rows": rows.reshape(data["n_layers"], data["n_heads"], -1)}


def _check(at, run) -> None:
    """What the page shows against the engine's generation ``run``."""
    assert not at.exception
    text = run.model.tokenizer.decode(list(run.ids))
    assert at.code[0].value == text.rstrip("\n")  # st.code drops trailing newlines
    charts = _charts(at)
    bars = charts["gen_guesses"]["data"][0]
    np.testing.assert_array_equal(array(bars["x"]), run.last.top_probs_k)
    view = _step_view(at)  # every layer's rows, bit for bit the engine's
    np.testing.assert_array_equal(view["rows"], run.last.pattern_lhk)
    assert view["tokens"] == list(run.tokens) and (view["n_heads"], view["n_kv_heads"]) == (9, 3)
    assert at.metric[0].value == str(len(run.ids))


def test_step_pick_back_reset(smollm2):
    at = open_page("generate", model="minilm")
    run = start_generation(smollm2, PROMPT, max_new_tokens=generation.MAX_NEW)
    _check(at, run)
    for _ in range(3):
        at.button(key="gen_step").click().run()
        run = run.step(choose(run.last))
        _check(at, run)
    assert len(run.ids) == run.n_prompt + 3
    menu = next(s for s in at.selectbox if s.key.startswith("gen_pick"))
    assert menu.options[2].startswith(generation.piece(run.last.top_ids_k[2]))
    menu.select(int(run.last.top_ids_k[2])).run()
    at.button(key="gen_write").click().run()
    run = run.step(int(run.last.top_ids_k[2]))
    _check(at, run)
    at.button(key="gen_back").click().run()
    run = run.rewind(len(run.ids) - 1)
    _check(at, run)
    at.button(key="gen_reset").click().run()
    _check(at, start_generation(smollm2, PROMPT))
    assert at.button(key="gen_back").disabled


def test_seeded_sampling_repeats_the_engines_draws(smollm2):
    at = open_page("generate")
    at.text_input(key="gen_prompt").input("Once upon a time").run()
    assert "leaves every attention pattern as trained" in at.slider(key="gen_temp").help
    at.slider(key="gen_temp").set_value(1.0).run()
    at.number_input(key="gen_top_k").set_value(20).run()
    at.number_input(key="gen_seed").set_value(7).run()
    run = start_generation(smollm2, "Once upon a time")
    for i in range(2):
        at.button(key="gen_step").click().run()
        run = run.step(choose(run.last, temperature=1.0, top_k=20, seed=7, step_index=i))
    _check(at, run)


def test_the_limit_stops_generation(smollm2, monkeypatch):
    monkeypatch.setattr(generation, "MAX_NEW", 2)
    at = open_page("generate")
    for _ in range(2):
        at.button(key="gen_step").click().run()
    assert not at.exception
    assert at.button(key="gen_step").disabled and at.button(key="gen_write").disabled
    assert any("Finished" in c.value for c in at.caption)


@pytest.mark.parametrize("bad", ["", "   ", "\n\t"])
def test_a_bad_prompt_gives_a_message(bad):
    at = open_page("generate")
    at.text_input(key="gen_prompt").input(bad).run()
    assert not at.exception
    assert any("Type a prompt" in i.value for i in at.info)
    at.text_input(key="gen_prompt").input(PROMPT).run()  # and the page works again
    assert not at.exception and at.code[0].value == PROMPT


def test_the_generation_survives_a_visit_to_another_page(smollm2):
    at = open_page("generate")
    at.text_input(key="gen_prompt").input("Paris is").run()
    at.button(key="gen_step").click().run()
    run = start_generation(smollm2, "Paris is")
    run = run.step(choose(run.last))
    at.switch_page("pages/decoder.py").run()
    at.switch_page("pages/generate.py").run()
    assert not at.exception
    assert at.text_input(key="gen_prompt").value == "Paris is"
    _check(at, run)


def test_the_vocabulary_layer_is_told_as_transformers_builds_it(smollm2):
    """The guesses' caption: one linear layer of vocab rows × d_model, tied to the embeddings,
    after the final RMSNorm; checked on transformers' own LlamaForCausalLM, and the bars are the
    softmax of that layer on the newest vector (transformers' logits)."""
    torch = pytest.importorskip("torch")
    from tests.core.oracles import oracle

    ora = oracle("smollm2")
    head = ora.model.lm_head.weight.detach()
    cfg = smollm2.config
    assert tuple(head.shape) == (cfg.vocab_size, cfg.d_model)
    assert torch.equal(head, ora.model.model.embed_tokens.weight.detach())  # the same table
    assert type(ora.model.model.norm).__name__ == "LlamaRMSNorm"  # the final RMSNorm
    at = open_page("generate")  # the guesses after PROMPT, the page's own
    assert not at.exception
    said = " ".join(c.value for c in at.caption)
    assert generation.VOCAB_LAYER.format(vocab=cfg.vocab_size, d=cfg.d_model) in said
    ids = ora.ids(PROMPT)
    with torch.no_grad():
        logits = ora.model(input_ids=torch.as_tensor([ids])).logits[0, -1].double()
    theirs = torch.softmax(logits, -1).numpy()
    bars = _charts(at)["gen_guesses"]["data"][0]
    top = np.argsort(theirs)[::-1][:10]
    np.testing.assert_allclose(array(bars["x"]), theirs[top], atol=1e-4)
