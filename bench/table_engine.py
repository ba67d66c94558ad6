"""The engine's rows of ``python -m bench report`` (bench/table.py): the NumPy engine in this
process on one BLAS thread, each figure beside transformers / torch eager (or CTranslate2) on
one thread, measured by the other benchmarks' own functions (bench core, llama, beyond,
whisper). Each sub-part is guarded: one that fails gives an n/a row, the others still run."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from statistics import median
from typing import Any

from bench.rows import Row, attempt, guarded, row

FORWARD_RATIO = 1.15  # issues 24, 36: trace pass ÷ transformers eager, one thread, own processes
KNOCK_RATIO = 1.2  # issue 21: a knock-out rerun ÷ one plain forward
WHISPER_LOAD = """
import json, time
t0 = time.perf_counter()
import attention_core
attention_core.load_model("whisper")
print(json.dumps({"seconds": time.perf_counter() - t0}))
"""


def memory(models: dict[str, Any]) -> list[Row]:
    """Fresh processes first, while this one is small (bench core's measure_rss says why)."""
    from attention_core import trace_nbytes
    from bench.core import RSS_TARGET_MB, measure_rss
    from bench.llama import fresh_process
    from bench.whisper import RSS_SCRIPT

    _, peaks = measure_rss(models["MiniLM"], (512,))
    three = fresh_process(RSS_SCRIPT)
    minilm_trace = trace_nbytes(models["MiniLM"].config, 512) / 1e6
    return [
        row("memory", "MiniLM: a fresh process, model + 512-token trace, peak RSS",
            peaks[(512, "attention_core")], "MB", limit=RSS_TARGET_MB,
            anchor=peaks[(512, "transformers")], anchor_label="transformers"),
        row("memory", "one process: MiniLM, SmolLM2, Whisper and a trace each, peak RSS",
            three["VmHWM"], "MB", limit=1400, note=f"now {three['VmRSS']:.0f} MB"),
        row("memory", "MiniLM: a 512-token trace holds", minilm_trace, "MB",
            note="its arrays' size"),
    ]  # fmt: skip


def loads(quick: bool) -> list[Row]:
    from attention_core import load_model
    from bench.core import LOAD_TARGET_S, measure_load
    from bench.llama import fresh_process
    from bench.llama import measure_load as llama_load

    _, minilm = measure_load(load_model())
    cold, warm = llama_load(1 if quick else 3)
    whisper = fresh_process(WHISPER_LOAD)["seconds"]
    return [
        row("load", "MiniLM: import + load, fresh process", minilm["ours"], "s",
            limit=LOAD_TARGET_S, anchor=minilm["transformers"], anchor_label="transformers"),
        row("load", "SmolLM2: import + load, fresh process", cold, "s", limit=3.0,
            note=f"again in the process {warm:.2f} s"),
        row("load", "Whisper tiny.en: import + load, fresh process", whisper, "s"),
    ]  # fmt: skip


def forwards(quick: bool) -> list[Row]:
    """Each side in its own process as its users run it (bench/forward.py), passes alternated
    pair by pair; the ratio is the median of the pairs' ratios."""
    from bench.forward import CASES, Case, anchor_label, measure

    out: list[Row] = []
    for case in CASES:
        rounds = max(3, case.rounds // 3) if quick else case.rounds
        got = attempt("forward", out, partial(measure, Case(case.name, case.model, case.n, rounds)))
        if got is None:  # its n/a row says why; the other cases still run
            continue
        load = f"load {got.load[0][0]:.2f} → {got.load[1][0]:.2f}"
        faults = (
            f"page faults per pass {median(got.ours_faults):,.0f} / "
            f"{median(got.theirs_faults):,.0f}"
        )
        memory = "; every attention out would hold 4.5 GB" if case.hidden_only else ""
        out.append(
            row("forward", f"{case.name}: engine forward, {case.n} tokens, one thread, own process",
                got.ours * 1e3, "ms", anchor=got.theirs * 1e3, anchor_label=anchor_label(case),
                ratio_limit=FORWARD_RATIO,
                note=f"n={len(got.ours_s)} pairs, ratio pair by pair {got.ratio:.2f}×; {faults}; "
                f"{load}{memory}")
        )  # fmt: skip
        out[-1] = replace(out[-1], ratio=got.ratio, met=got.ratio <= FORWARD_RATIO)
    return out


def knock_outs(models: dict[str, Any], repeats: int) -> list[Row]:
    from bench.beyond import measure_knock

    return [
        row("knock-out", f"{name}: rerun with two heads off, {n} tokens", knocked, "ms",
            anchor=plain, anchor_label="plain forward", ratio_limit=KNOCK_RATIO)
        for name, model in models.items()
        for n, plain, knocked in measure_knock(model, repeats)
    ]  # fmt: skip


def step(models: dict[str, Any], repeats: int) -> list[Row]:
    from bench.llama import measure_step

    ms, low, ctx, _, cache_mb = measure_step(models["SmolLM2"], repeats * 4)
    return [
        row("generation", f"SmolLM2: engine step at {ctx} tokens of context (KV cache)", ms,
            "ms", limit=120, note=f"min {low:.0f} ms, cache {cache_mb:.1f} MB; in the page below"),
        row("memory", "SmolLM2: a 512-token trace holds (layer cache full)",
            _llama_trace(models["SmolLM2"]), "MB", limit=150),
    ]  # fmt: skip


def _llama_trace(model: Any) -> float:
    from bench.llama import measure_trace

    return measure_trace(model)[1]


def whisper(repeats: int) -> list[Row]:
    from attention_core import load_model
    from bench.whisper import _ct2, measure_clip, measure_encoder, measure_trace

    model, ct2 = load_model("whisper"), _ct2()
    ours, theirs, ct2_encoder = measure_encoder(model, ct2, repeats)
    clip, ct2_clip, text, same = measure_clip(model, ct2, repeats)
    trace, _ = measure_trace(model)
    return [
        row("forward", "Whisper: encoder, 1500 frames, one thread", ours, "ms",
            anchor=theirs, anchor_label="transformers eager", ratio_limit=1.2,
            note=f"CTranslate2 {ct2_encoder:.0f} ms"),
        row("whisper", "5 s clip → transcript and trace, engine (audio, log-mel, transcribe)",
            clip, "ms", limit=1500, anchor=ct2_clip, anchor_label="CTranslate2 generate",
            note=f"{text.strip()!r}, same tokens as CTranslate2: {'yes' if same else 'NO'}"),
        row("memory", "Whisper: a 30 s clip's trace holds", trace.nbytes / 1e6, "MB", limit=150),
    ]  # fmt: skip


def rows(quick: bool) -> list[Row]:
    from threadpoolctl import threadpool_limits

    from attention_core import load_model

    threadpool_limits(1)
    repeats = 3 if quick else 7
    out: list[Row] = []
    models: dict[str, Any] = {"MiniLM": load_model("minilm")}
    # Fresh processes first, before SmolLM2 here: Linux carries this process's peak RSS
    # (ru_maxrss) over fork and exec into the child's, as bench core's measure_rss says.
    guarded("memory", out, partial(memory, models))
    models["SmolLM2"] = load_model("smollm2")
    guarded("load", out, partial(loads, quick))
    guarded("forward", out, partial(forwards, quick))
    guarded("knock-out", out, partial(knock_outs, models, repeats))
    guarded("generation", out, partial(step, models, repeats))
    guarded("whisper", out, partial(whisper, repeats))
    return out
