"""``python -m bench report [--quick] [--out-json F] [--no-write]``: the whole performance table
from one run, each figure beside its target and its anchor measured in the same run.

It calls the other benchmarks' measuring functions (their own ``main`` prints as before; their
tables are printed here too, as they run) and collects one ``bench.rows.Row`` per figure:

  engine   (this process, one BLAS thread) memory of a fresh process per model and of one with
           all three, load per model, the forward: MiniLM at 128 / 512 tokens and SmolLM2 at
           128 / 512 / 2,048 against transformers eager, each side in its own process, one
           thread, passes alternated, ratio pair by pair (bench forward; Whisper: its encoder
           at 1500 frames, in this process, against transformers and CTranslate2), a knock-out
           rerun against a plain forward, a generation step, a 5 s clip against CTranslate2,
           the bytes a trace holds (bench core, llama, beyond, whisper)
  pages    (``streamlit run`` in Debian's Chromium, bench/table_pages.py) the floor page, cold
           start, head / layer / stage switches at 12 / 128 / 512 tokens against the floor
           page, a new sentence against BertViz, SmolLM2's new prompt and generation step, the
           server's memory, the Listen page's 5 s clip (bench app, explorer, decoder, listen)
  long     SmolLM2 at 2,048 tokens: submit → first chart on the Pattern page against the
           engine's forward alone, and the bytes the store counts for that trace (bench
           first_chart); n/a until the app reads 2,048 tokens
  arrivals 24 students one after another behind ./serve.sh, every third on SmolLM2: the
           server CPU per arrival from the replicas' clocks (bench arrivals)
  class    30 readers and 4 listeners behind ./serve.sh: their first charts (readers
           arriving within 10 s, listeners on an example clip), memory per replica,
           new-sentence / new-clip p95 and fairness with a heavy visitor (bench classroom);
  protocol the same class as protocol clients (bench class_protocol): each first chart from
           the server's side, with the browsers' CPU off this machine (last: it lowers the
           priority of this process);
           the slowest part: ``--quick`` skips it and the table says so

The header names the CPU, its vector extensions and threads (bench/machine.py). The 1-minute
load average is read at the start and the end: above cores × 0.5 at either end, or
higher at the end, the table is marked suspect with the reason. Written (unless ``--no-write``)
between the marker comments at the top of docs/PERFORMANCE.md, and as JSON
(docs/performance.json unless ``--out-json``). A benchmark: a missed target is reported, never
raised; a part that fails gives its rows as "n/a" with the error, and the run goes on.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

# One BLAS thread, as run.sh serves (the servers started here inherit it).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bench.rows import Quiet, Row, as_json, guarded, markdown, replace_block, reused, row

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "PERFORMANCE.md"
JSON = ROOT / "docs" / "performance.json"
TITLE = "The performance table (`python -m bench report`)"


def classroom_rows(quick: bool, sessions: int) -> list[Row]:
    if quick:
        return [
            Row("class", "new sentence p95, 30 browsers", None, "s", note="skipped by --quick"),
            Row("class", "fairness: p95 with a heavy visitor ÷ without", None, "×",
                target="≤ 2×", note="skipped by --quick"),
        ]  # fmt: skip
    from bench.classroom import errors, measure, report
    from bench.report import p50, p95

    fig = measure(sessions, 2, True, show=report)
    if fig is None:
        raise RuntimeError("./serve.sh did not start")
    quiet, busy = p95(fig.quiet_s), p95(fig.busy_s)
    leaks = len(errors(fig))
    firsts = [s.first_draw_s for s in fig.sessions if s.first_draw_s is not None]
    heard = [x.first_chart_s for x in fig.listeners if getattr(x, "first_chart_s", None)]
    out = [
        row(
            "class",
            f"first chart p95, {sessions} readers arriving within 10 s",
            p95(firsts),
            "s",
            limit=5.0,
            note=f"p50 {p50(firsts):.2f} s; server CPU per arrival "
            f"{fig.cpu_per_arrival_s * 1000:.0f} ms; the browsers share the servers' 2 cores",
        ),
        row(
            "class",
            f"first chart p95, {len(fig.listeners)} listeners on an example clip",
            p95(heard) if heard else None,
            "s",
            limit=10.0,
            note=f"p50 {p50(heard):.2f} s" if heard else "no listener's first chart measured",
        ),
        row(
            "class",
            "memory per replica after the class (PSS: shared weights counted once, the larger)",
            max(fig.pss_mb.values()) if fig.pss_mb else None,
            "MB",
            limit=1200.0,
            note=f"VmRSS {max(fig.rss_mb.values()):.0f} MB (counts the shared weights whole)",
        ),
        row(
            "class",
            f"new sentence p95, {sessions} readers (MiniLM, every third SmolLM2)",
            quiet,
            "s",
            note=f"errors and leaks: {leaks}",
        ),
        row(
            "class",
            "fairness: others' new-sentence p95 with a heavy 512-token visitor",
            busy,
            "s",
            anchor=quiet,
            anchor_label="without",
            ratio_limit=2.0,
        ),
    ]
    clips = [fig.clips_s(False), fig.clips_s(True)]
    if all(clips):
        out += [
            row(
                "class",
                f"{len(fig.listeners)} listeners (Whisper): a new 5 s clip → drawn, p95",
                p95(clips[0]),
                "s",
            ),
            row(
                "class",
                "fairness: the listeners' p95 with the heavy visitor",
                p95(clips[1]),
                "s",
                anchor=p95(clips[0]),
                anchor_label="without",
                ratio_limit=2.0,
            ),
        ]
    return out  # fmt: skip


def arrival_rows(quick: bool) -> list[Row]:
    """Server CPU per arrival, students one after another through serve.sh (bench arrivals)."""
    from statistics import fmean

    from bench.arrivals import TARGET_MS, measure, report
    from bench.report import p95

    students = 12 if quick else 24
    fig = measure(students, 2)
    report(fig, students)
    cpus = [cpu for _, cpu, _ in fig["per"]]
    firsts = [first for _, _, first in fig["per"]]
    return [
        row("arrivals", f"server CPU per arrival (mean), {students} students one after another, "
            "every third on SmolLM2", fmean(cpus), "ms", limit=TARGET_MS,
            note=f"p95 {p95(cpus):.0f} ms, from the replicas' clocks"),
        row("arrivals", "first chart p95, one student at a time", p95(firsts), "s"),
    ]  # fmt: skip


def protocol_rows(quick: bool, sessions: int) -> list[Row]:
    """The class as protocol clients (bench class_protocol): the server's side of each first
    chart, with the browsers' CPU off this machine. Last: it lowers this process's priority."""
    from bench.class_protocol import measure, report
    from bench.report import p50, p95

    listeners = 4
    fig = measure(sessions, listeners, 2, 10.0, False)
    report(fig, 10.0)
    readers = [s.first_s for s in fig["everyone"] if not s.heard and s.first_s is not None]
    heard = [s.first_s for s in fig["everyone"] if s.heard and s.first_s is not None]
    errors = sum(len(s.errors) for s in fig["everyone"])
    cpu = fig["cpu_s"][0] / len(fig["everyone"]) * 1000
    return [
        row("class", f"first chart p95, {sessions} readers within 10 s, the server's side "
            "(protocol clients, no browser)", p95(readers) if readers else None, "s",
            limit=5.0, note=f"p50 {p50(readers):.2f} s; server CPU per arrival {cpu:.0f} ms; "
            f"errors {errors}" if readers else "no reader drawn"),
        row("class", f"first chart p95, {listeners} listeners on an example clip, the server's "
            "side", p95(heard) if heard else None, "s", limit=10.0,
            note=f"p50 {p50(heard):.2f} s" if heard else "no listener drawn"),
    ]  # fmt: skip


def write(rows: list[Row], quiet: Quiet, when: str, args: argparse.Namespace) -> str:
    from bench.machine import this_machine

    title = TITLE + (" --quick" if args.quick else "")
    if args.reuse:  # the rows of these parts say which earlier run measured them
        title += f" --reuse {args.reuse}"
    machine = this_machine()
    block = markdown(rows, quiet, title, when, machine.line())
    if not args.no_write:
        DOC.write_text(replace_block(DOC.read_text(), block))
        Path(args.out_json).write_text(as_json(rows, quiet, title, when, machine.as_dict()))
    return block


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(
        prog="python -m bench report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    out.add_argument("--quick", action="store_true", help="fewer repeats; no classroom")
    out.add_argument("--out-json", default=str(JSON), help="where the JSON goes")
    out.add_argument("--no-write", action="store_true", help="print only; write no file")
    out.add_argument("--sessions", type=int, default=30, help="the classroom's browsers")
    out.add_argument(
        "--skip",
        default="",
        help="parts to leave out: engine,pages,listen,long,arrivals,class,protocol",
    )
    out.add_argument(
        "--reuse",
        default="",
        help="parts not run: their rows are taken from docs/performance.json's last run, each "
        "saying when (keeps every run under ~15 minutes: e.g. --reuse pages,listen,class, then "
        "--reuse engine,long,class)",
    )
    return out


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    reuse = set(filter(None, args.reuse.split(",")))
    before, started = os.getloadavg(), time.monotonic()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    from bench.machine import describe_machine

    print(f"# bench report{' --quick' if args.quick else ''}: {describe_machine()}", flush=True)
    from bench import first_chart, table_engine, table_pages

    rows: list[Row] = []
    parts: dict[str, Callable[[], list[Row]]] = {
        "engine": lambda: table_engine.rows(args.quick),
        "pages": lambda: table_pages.rows(args.quick),
        "listen": lambda: table_pages.listen_rows(args.quick),
        "long": lambda: first_chart.long_rows(args.quick),
        "arrivals": lambda: arrival_rows(args.quick),
        "class": lambda: classroom_rows(args.quick, args.sessions),
        "protocol": lambda: protocol_rows(args.quick, args.sessions),
    }
    signal.signal(signal.SIGTERM, _stop)  # e.g. timeout(1): the table so far is still written
    previous = json.loads(JSON.read_text()) if reuse and JSON.exists() else {}
    try:
        for name, part in parts.items():
            if name in reuse:
                rows += reused(previous, {name})
            elif name in skip:
                rows.append(Row(name, "(left out by --skip)", None, "", part=name))
            else:
                start = len(rows)
                guarded(name, rows, part)
                rows[start:] = [replace(r, part=name) for r in rows[start:]]
    except KeyboardInterrupt:
        rows.append(Row("report", "(interrupted: the later parts did not run)", None, ""))
    quiet = Quiet(before, os.getloadavg(), os.cpu_count() or 1)
    block = write(rows, quiet, when, args)
    print("\n" + block + f"\n{time.monotonic() - started:.0f} s in all.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
