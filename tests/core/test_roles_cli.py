"""``python -m attention_core roles``, run in-process through ``main``: its npz keys equal the
engine's ``role_scores`` and ``run_probe`` of the same pass, and TransformerLens's head detector on
transformers' attentions of the same ids (the oracle); bad input exits 2 before the model loads.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
hd = pytest.importorskip("transformer_lens.head_detector")

from attention_core.__main__ import main  # noqa: E402
from attention_core.methods.induction import probe_ids, run_probe  # noqa: E402
from attention_core.methods.roles import RULE, name_heads, role_scores  # noqa: E402
from attention_core.models import trace_sentence  # noqa: E402
from tests.core.oracles import oracle, reference  # noqa: E402

TEXT = "the dog saw the dog and the other dog saw the dog too"
ROLES = {"previous_token", "duplicate_token", "induction", "first_token", "self", "broad"}
PROBE = {"probe_ids", "probe_induction"}


def tl_scores_lh(pattern_lhqk: np.ndarray, ids: list[int], detector) -> np.ndarray:
    """TransformerLens's score of every head [L, H] for ``detector``'s pattern."""
    detection = detector(torch.as_tensor([ids]))
    pattern = torch.from_numpy(np.array(pattern_lhqk, dtype=np.float32))
    return np.array(
        [
            [
                hd.compute_head_attention_similarity_score(
                    p_qk,
                    detection_pattern=detection,
                    exclude_bos=False,
                    exclude_current_token=False,
                    error_measure="mul",
                )
                for p_qk in layer
            ]
            for layer in pattern
        ]
    )


def run_cli(tmp_path, *args: str) -> tuple[int, dict[str, np.ndarray]]:
    out = tmp_path / "roles.npz"
    code = main(["roles", *args, "--out", str(out)])
    if code != 0:
        return code, {}
    with np.load(out) as npz:
        return code, {name: npz[name] for name in npz.files}


@pytest.mark.parametrize(("key", "n", "seed"), [("minilm", 50, 0), ("smollm2", 20, 3)])
def test_the_npz_holds_the_engines_roles_and_probe(tmp_path, capsys, engines, key, n, seed):
    code, npz = run_cli(
        tmp_path, TEXT, "--model", key, "--probe-len", str(n), "--probe-seed", str(seed)
    )
    assert code == 0
    line = capsys.readouterr().out.strip()
    assert line.endswith("roles.npz") and "heads" in line and f"probe {n}x2" in line
    engine = engines[key]
    scores = role_scores(trace_sentence(engine, TEXT))
    closing = {"last_token"} if key == "minilm" else set()
    loss = {"probe_loss"} if key == "smollm2" else set()  # an encoder has no next-token loss
    assert set(npz) == ROLES | closing | PROBE | loss | {"names", "rule"}
    for role, ours_lh in scores.scores_lh.items():
        np.testing.assert_array_equal(npz[role], ours_lh, err_msg=role)
    expected = [[h.role for h in row] for row in name_heads(scores)]
    assert npz["names"].tolist() == expected
    assert str(npz["rule"]) == RULE.text()
    probe = run_probe(engine, n, seed)
    np.testing.assert_array_equal(npz["probe_ids"], probe_ids(engine.config.vocab_size, n, seed))
    np.testing.assert_array_equal(npz["probe_induction"], probe.induction_lh)
    if key == "smollm2":
        np.testing.assert_array_equal(npz["probe_loss"], probe.loss)
        assert f"{probe.mean_loss()[1]:.1f} nats" in line


@pytest.mark.parametrize("key", ["minilm", "smollm2"])
def test_the_npz_equals_transformer_lens_on_transformers(tmp_path, key):
    """The oracle, not our own output: previous_token and duplicate_token on the sentence, and
    the probe's induction scores, from transformers' attentions of the same ids."""
    code, npz = run_cli(tmp_path, TEXT, "--model", key, "--probe-len", "30")
    assert code == 0
    ids = oracle(key).ids(TEXT)
    pattern = reference(key, TEXT).pattern_lhqk
    for role, detector in (
        ("previous_token", hd.get_previous_token_head_detection_pattern),
        ("duplicate_token", hd.get_duplicate_token_head_detection_pattern),
    ):
        np.testing.assert_allclose(npz[role], tl_scores_lh(pattern, ids, detector), atol=1e-5)
    tok = oracle(key).tokenizer
    wrap = ([tok.cls_token_id], [tok.sep_token_id]) if key == "minilm" else ([], [])
    probe = [*wrap[0], *npz["probe_ids"].tolist(), *wrap[1]]
    with torch.no_grad():
        out = oracle(key).model(input_ids=torch.as_tensor([probe]), output_attentions=True)
    theirs = np.stack([a[0].numpy() for a in out.attentions])
    expected = tl_scores_lh(theirs, probe, hd.get_induction_head_detection_pattern)
    np.testing.assert_allclose(npz["probe_induction"], expected, atol=1e-5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["   "], "text is empty"),
        (["ok\ud800"], "Unicode"),
        (["ok", "--probe-len", "1"], "--probe-len must be 2..1000"),
        (["ok", "--probe-len", "5000"], "--probe-len must be 2..1000"),
        (["ok", "--probe-seed", "-1"], "--probe-seed must be >= 0"),
    ],
)
def test_bad_input_exits_2_before_the_model_loads(tmp_path, capsys, args, message):
    """A model that cannot load is named too: the input's error comes first, so it was checked
    before any loading."""
    code, _ = run_cli(tmp_path, *args, "--model", str(tmp_path / "no-such-model"))
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert not (tmp_path / "roles.npz").exists()


def test_a_probe_too_long_for_the_model_or_an_unknown_model_exits_2(tmp_path, capsys):
    assert run_cli(tmp_path, "ok", "--probe-len", "300")[0] == 2
    assert "limit of 512: choose at most 255 tokens per copy" in capsys.readouterr().err
    assert run_cli(tmp_path, "ok", "--model", "nope")[0] == 2
    assert "Unknown model 'nope'" in capsys.readouterr().err
