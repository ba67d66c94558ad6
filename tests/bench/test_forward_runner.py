"""bench.forward and bench.machine, the parts that are not timing: pairing the two sides'
passes, picking cases, the workers' protocol (each side in its own process, on the real
models), and the CPU said in the report from /proc/cpuinfo. No timing is asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attention_core import load_model, tokenize
from bench.forward import CASES, Case, Worker, _args, pair_ratio, parse_cases
from bench.forward_worker import text_of
from bench.machine import VECTOR_FLAGS, Machine, parse_cpuinfo, this_machine
from bench.rows import Quiet, as_json, markdown, row

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14
flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 avx512f avx512bw avx512_bf16 sha_ni

processor\t: 1
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14
flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 avx512f avx512bw avx512_bf16 sha_ni
"""


def test_the_ratio_is_the_median_of_the_pairs_not_of_the_medians():
    ours, theirs = [1.0, 2.0, 9.0], [1.0, 1.0, 10.0]  # pairs 1.0, 2.0, 0.9
    assert pair_ratio(ours, theirs) == 1.0
    assert pair_ratio(ours, theirs) != 2.0 / 1.0  # the medians' ratio would say 2×
    with pytest.raises(ValueError, match="3 and 2"):
        pair_ratio(ours, theirs[:2])
    with pytest.raises(ValueError):
        pair_ratio([], [])


def test_cases_are_picked_by_model_and_length_and_2048_asks_hidden_states_only():
    picked = parse_cases("minilm:512, smollm2:2048", rounds=4)
    assert [(c.name, c.n, c.rounds) for c in picked] == [("MiniLM", 512, 4), ("SmolLM2", 2048, 4)]
    assert [c.hidden_only for c in picked] == [False, True]
    assert _args("transformers", picked[1])[-1] == "--hidden-only"
    assert "--hidden-only" not in _args("engine", picked[1])
    assert {(c.model, c.n) for c in CASES} >= {
        ("minilm", 128),
        ("minilm", 512),
        ("smollm2", 128),
        ("smollm2", 2048),
    }
    with pytest.raises(ValueError, match="minilm:2048"):
        parse_cases("minilm:2048", None)


def test_both_sides_read_the_same_number_of_tokens_from_the_readme():
    model = load_model("minilm")
    for n in (16, 128, 512):
        assert len(tokenize(model, text_of(model, n), max_tokens=n)) == n


@pytest.mark.parametrize("side", ["engine", "transformers"])
def test_a_worker_loads_warms_up_and_answers_each_go_with_one_pass(side):
    worker = Worker(_args(side, Case("MiniLM", "minilm", 16, 1)))
    try:
        ready = worker.read(120)
        assert ready["ready"] is True and ready["peak_mb"] > 50
        for _ in range(2):
            worker.send("go")
            one = worker.read(60)
            assert set(one) == {"s", "cpu", "faults"} and one["s"] > 0
    finally:
        peak = worker.close()
    assert peak >= ready["peak_mb"]
    assert worker.proc.returncode == 0


def test_the_cpu_its_vector_extensions_and_threads_come_from_cpuinfo():
    name, vector, count = parse_cpuinfo(CPUINFO)
    assert (name, count) == ("AMD EPYC 9R14", 2)
    assert vector == ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_bf16")
    assert "sha_ni" not in vector and set(vector) <= set(VECTOR_FLAGS)
    assert parse_cpuinfo("") == ("unknown", (), 0)


def test_this_machine_says_what_lscpu_says(tmp_path: Path):
    here = this_machine()
    real = Path("/proc/cpuinfo").read_text()
    assert here.cpu in real and all(f" {flag}" in real for flag in here.vector)
    fake = tmp_path / "cpuinfo"
    fake.write_text(CPUINFO)
    assert this_machine(fake).line().startswith("CPU AMD EPYC 9R14, 2 threads, sse4_2 avx avx2")


def test_the_report_names_the_machine_in_its_header_and_its_json():
    machine = Machine("AMD EPYC 9R14", ("avx2", "avx512f"), 2, "openblas SkylakeX")
    quiet = Quiet((0.2, 0.3, 0.4), (0.1, 0.3, 0.4), 2)
    rows = [row("load", "MiniLM load", 0.31, "s", limit=0.5)]
    lines = markdown(rows, quiet, "T", "now", machine.line()).splitlines()
    assert lines[1] == (
        "Machine: CPU AMD EPYC 9R14, 2 threads, avx2 avx512f; NumPy's BLAS: openblas SkylakeX."
    )
    data = json.loads(as_json(rows, quiet, "T", "now", machine.as_dict()))
    assert data["machine"] == {
        "cpu": "AMD EPYC 9R14", "vector": ["avx2", "avx512f"], "threads": 2,
        "blas": "openblas SkylakeX",
    }  # fmt: skip
    assert (data["load_before"], data["load_after"]) == ([0.2, 0.3, 0.4], [0.1, 0.3, 0.4])
