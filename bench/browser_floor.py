"""``python -m bench.browser_floor [--visits 5] [--no-profile]``: a first visit's CPU in the browser
beside the server's (issue 37: the floor of the class bench, 30 Chromium sessions on the servers' 2
cores). The app (as ./run.sh) and a trivial page (``st.write("hi")``), one visit after another, each
in a fresh context (cold cache): /pattern on a new sentence, home, trivial. Per visit: Chromium's
CPU clocks (by --type) and the server's, to the first chart (the explorer's first draw) and to
settled; what was loaded; CDP Performance.getMetrics; V8's profile by script. Then the p95 floor.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_plus

from bench.explorer import FIRST_DRAW, INSTRUMENT, server_cpu_s
from bench.live import Wire
from bench.report import load, p50, p95, progress, table
from scripts.live_app import launch_chromium, streamlit_server, wait_idle

WAIT_MS = 120_000  # one first visit, bounded
QUIET_S = 1.5  # settled: no websocket frame and no response for this long, and no run
PROFILER = [("Profiler.enable", {}), ("Profiler.setSamplingInterval", {"interval": 200})]
PROFILER += [("Profiler.start", {})]  # V8's sampling profile, every 0.2 ms
CLASS, ARRIVAL_S, CORES = 30, 10.0, 2  # the class bench's arrivals
METRICS = ("TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration")
TRIVIAL = 'import streamlit as st\n\nst.write("hi")\n'
HI = "() => !!document.querySelector('[data-testid=\"stMarkdown\"]')"  # the trivial page drawn
RESOURCES = """() => performance.getEntriesByType("resource").map((e) =>
  [e.name, e.encodedBodySize, e.decodedBodySize])"""


def children(pid: int) -> list[int]:
    """Every process below ``pid`` (the kernel's /proc/<pid>/task/<tid>/children lists)."""
    kids = []
    with contextlib.suppress(OSError):
        for task in os.scandir(f"/proc/{pid}/task"):
            kids += [int(k) for k in Path(task.path, "children").read_text().split()]
    return kids + [d for k in kids for d in children(k)]


def chromium_cpu() -> dict[int, tuple[str, float]]:
    """{pid: (process type, CPU s)} for every Chromium process started from this one (Chromium
    rewrites its children's command lines into one string)."""
    out = {}
    for pid in children(os.getpid()):
        with contextlib.suppress(OSError):
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            if "chrom" in args.split(" ", 1)[0]:  # the type, or a utility's service
                kind = re.findall(r"--(?:utility-sub-type=\w+\.mojom\.|type=)([\w-]+)", args)
                out[pid] = ((kind or ["browser"])[-1], server_cpu_s(pid))
    return out


def spent(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds per process type between two ``chromium_cpu`` snapshots."""
    by: dict[str, float] = defaultdict(float)
    for pid, (kind, cpu) in after.items():
        by[kind] += cpu - before.get(pid, (kind, 0.0))[1]
    return dict(by)


@dataclass
class Visit:
    wall_s: float = 0.0  # navigation → first chart
    first: dict[str, float] = field(default_factory=dict)  # browser CPU by type until then
    total: dict[str, float] = field(default_factory=dict)  # ... until settled
    server_first: float = 0.0
    server_total: float = 0.0
    runs: int = 0  # scripts the server finished for this visit ("script finished" frames)
    loaded: Counter = field(default_factory=Counter)  # "script n", "script B" (decoded) ...
    scripts: dict[str, tuple[int, int]] = field(default_factory=dict)  # file → bytes: wire, all
    metrics: dict[str, float] = field(default_factory=dict)
    profile: dict[str, float] = field(default_factory=dict)  # V8 self time by script, s


def settle(page, wire: Wire, seen: list[float]) -> None:
    """Until no run shows, and nothing came or went for QUIET_S (at most 30 s)."""
    end = time.monotonic() + 30.0
    while time.monotonic() < end:
        wait_idle(page, WAIT_MS)
        last = max([t for t, _, _ in wire.received] + wire.sent + seen + [0.0])
        if time.monotonic() - last >= QUIET_S:
            return
        page.wait_for_timeout(250)


def visit(browser, url: str, ready: str, pid: int, profile: bool = False) -> Visit:
    """One first visit in a fresh context, measured (browser CPU before/after from /proc)."""
    v, cpu0, srv0 = Visit(), chromium_cpu(), server_cpu_s(pid)  # the new context included
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.add_init_script(INSTRUMENT)
    wire, responses, seen = Wire(page), [], []
    page.on("response", lambda r: (responses.append(r), seen.append(time.monotonic())))
    cdp = context.new_cdp_session(page)
    for method, params in [("Performance.enable", {}), *(PROFILER if profile else [])]:
        cdp.send(method, params)
    t0 = time.monotonic()
    page.goto(url, wait_until="commit", timeout=WAIT_MS)
    page.wait_for_function(ready, timeout=WAIT_MS, polling="raf")
    v.wall_s, srv1, cpu1 = time.monotonic() - t0, server_cpu_s(pid), chromium_cpu()
    settle(page, wire, seen)
    v.first, v.total = spent(cpu0, cpu1), spent(cpu0, chromium_cpu())
    v.server_first, v.server_total = srv1 - srv0, server_cpu_s(pid) - srv0
    v.runs = sum(fin for _, _, fin in wire.received)
    got = cdp.send("Performance.getMetrics")["metrics"]
    v.metrics = {m["name"]: m["value"] for m in got if m["name"] in METRICS}
    if profile:
        v.profile = by_script(cdp.send("Profiler.stop")["profile"])
    sizes = {name: (enc, dec) for name, enc, dec in page.evaluate(RESOURCES)}
    for kind, r in ((r.request.resource_type, r) for r in responses):
        if kind in ("script", "stylesheet"):  # what was loaded; bytes from Resource Timing
            enc, dec = v.scripts[r.url.rsplit("/", 1)[-1]] = sizes.get(r.url, (0, 0))
            v.loaded.update({f"{kind} n": 1, f"{kind} wire B": enc, f"{kind} B": dec})
    context.close()
    return v


def by_script(profile: dict) -> dict[str, float]:
    """V8 self time (s) per script file."""
    where = {}
    for node in profile["nodes"]:  # a file's name, or "(program)", "(garbage collector)" ...
        frame = node["callFrame"]
        where[node["id"]] = frame["url"].rsplit("/", 1)[-1] or frame["functionName"]
    out: dict[str, float] = defaultdict(float)
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        out[where[sample]] += delta / 1e6
    return {name: t for name, t in out.items() if name != "(idle)"}


def browser_s(v: Visit, first: bool = False) -> float:
    return sum((v.first if first else v.total).values())


def bound(first_s: float) -> float:
    """A floor of the p95 under any scheduling: 29 of 30 charts need 29 × ``first_s`` of CPU
    on CORES, and two of those arrived no later than the 29th arrival."""
    n = -(-CLASS * 95 // 100)  # nearest rank
    return max(0.0, n * first_s / CORES - (n - 1) * ARRIVAL_S / CLASS)


def fifo_p95(first_s: float, busy_s: float, wall_s: float) -> float:
    """First-chart p95 of CLASS arrivals over ARRIVAL_S on CORES, the best a scheduler can do:
    first come first served, each arrival on one core for ``busy_s`` (its whole visit's CPU,
    browser and server), its chart after ``first_s`` of it, never sooner than ``wall_s``."""
    free, waits = [0.0] * CORES, []
    for i in range(CLASS):
        arrival, core = i * ARRIVAL_S / CLASS, free.index(min(free))
        start = max(arrival, free[core])
        free[core] = start + busy_s
        waits.append(max(start + first_s - arrival, wall_s))
    return p95(waits)


def med(visits: list[Visit], fn) -> float:
    return p50([fn(v) for v in visits])


def ms(x: float) -> str:
    return f"{x * 1000:.0f}"


def print_visits(runs: dict[str, list[Visit]]) -> None:
    """Medians per page: wall, browser CPU (by process type), server CPU, loaded, counters."""
    kinds = sorted({k for vs in runs.values() for v in vs for k in v.total})
    rows = []
    for page, vs in runs.items():
        m = {k: med(vs, lambda v, k=k: v.loaded[k]) for k in ("script n", "stylesheet n")}
        m |= {k: med(vs, lambda v, k=k: v.loaded[k]) / 1e6 for k in ("script B", "script wire B")}
        rows.append(
            [page, str(len(vs)), f"{med(vs, lambda v: v.wall_s):.2f}"]
            + [ms(med(vs, lambda v: browser_s(v, True))), ms(med(vs, browser_s))]
            + [ms(med(vs, lambda v, k=k: v.total.get(k, 0.0))) for k in kinds]
            + [ms(med(vs, lambda v: v.server_first)), ms(med(vs, lambda v: v.server_total))]
            + [f"{med(vs, lambda v: v.runs):.0f}", f"{m['script n']:.0f}"]
            + [f"{m['script B']:.2f} ({m['script wire B']:.2f})", f"{m['stylesheet n']:.0f}"]
            + [ms(med(vs, lambda v, n=n: v.metrics.get(n, 0.0))) for n in METRICS]
        )
    header = ["page", "visits", "first chart s", "browser ms → chart", "browser ms → settled"]
    header += [f"of which {k} ms" for k in kinds] + ["server ms → chart", "→ settled", "runs"]
    header += ["scripts", "script MB (on wire)", "stylesheets", *(f"{n} ms" for n in METRICS)]
    table(
        f"A first visit, fresh context, one after another (medians; load {load()})",
        header,
        rows,
        "CPU: each Chromium process's clock (by --type) and the server's, navigation to settled"
        f" (no run, nothing on the wire for {QUIET_S} s). Runs: scripts run. CDP: the main thread.",
    )


def print_profile(runs: dict[str, list[Visit]], top: int = 14) -> None:
    """V8 self time by script file on each page's profiled visit; with them the files /pattern
    loads and the trivial page does not, largest first."""
    got = {page: vs[-1] for page, vs in runs.items() if vs and vs[-1].profile}
    if "pattern" not in got or "trivial" not in got:
        return
    time_s = Counter({n: s for v in got.values() for n, s in v.profile.items()})
    size = {n: b[1] for v in got.values() for n, b in v.scripts.items()}
    extra = Counter({n: size[n] for n in got["pattern"].scripts if n not in got["trivial"].scripts})
    names = dict.fromkeys(
        [n for n, _ in time_s.most_common(top)] + [n for n, _ in extra.most_common(10)]
    )
    rows = [
        [n, f"{size.get(n, 0) / 1e3:.0f}", ", ".join(p for p, v in got.items() if n in v.scripts)]
        + [ms(v.profile.get(n, 0.0)) for v in got.values()]
        for n in names
    ]
    rows.append(["(all)", "", "", *(ms(sum(v.profile.values())) for v in got.values())])
    table(
        "V8 self time by script, ms (one profiled visit per page, sampled every 0.2 ms)",
        ["script", "kB", "loaded on", *got],
        rows,
        f"/pattern loads {len(extra)} files ({sum(extra.values()) / 1e3:.0f} kB) trivial does not. "
        "(program): the renderer outside JavaScript (compile, style, layout); a UUID: inline JS.",
    )


def print_floor(runs: dict[str, list[Visit]], target: float = 0.25) -> None:
    """The class bench's first-chart p95 floor, from /pattern's (and the trivial page's) medians."""
    vs, hi, wall = runs["pattern"], runs["trivial"], med(runs["pattern"], lambda v: v.wall_s)
    b, t = ((med(xs, lambda v: browser_s(v, True)), med(xs, browser_s)) for xs in (vs, hi))
    s = (med(vs, lambda v: v.server_first), med(vs, lambda v: v.server_total))
    cases = {
        "as measured: browser + server": (b[0] + s[0], b[1] + s[1]),
        f"browser + server at {ms(target)} ms": (b[0] + target, b[1] + target),
        "browser only (server free)": b,
        "a trivial Streamlit page's browser only": t,
        "server only (browsers elsewhere)": s,
    }
    per = CLASS / (ARRIVAL_S * CORES)  # arrivals per core-second
    rows = [
        [n, ms(f), ms(a), f"{a * per:.2f}", f"{fifo_p95(f, a, wall):.1f}", f"{bound(f):.1f}"]
        for n, (f, a) in cases.items()
    ]
    table(
        f"Floor of the class bench's first-chart p95 ({CLASS} in {ARRIVAL_S:.0f} s, {CORES} cores)",
        ["CPU per arrival", "ms → chart", "ms", "cores' load", "p95, FIFO s", "p95 ≥ s"],
        rows,
        f"FIFO: first come first served, each visit's CPU on one core, never below {wall:.2f} s (a"
        " chart alone). p95 ≥: under any scheduling, the 29th chart waits for 29 arrivals' CPU to"
        " the chart on 2 cores, and came in by 9.67 s. Cores' load > 1: a queue that grows.",
    )


def measure_pages(browser, pages: dict[str, tuple], visits: int, profile: bool) -> dict:
    """Each page: one warm-up visit (not counted), ``visits`` measured, one profiled; /pattern
    each time on a new short sentence."""
    runs: dict[str, list[Visit]] = {}
    for name, (url, pid, ready) in pages.items():  # /pattern's {}: a new sentence each visit
        said = [url.format(quote_plus(f"Student {i} of {os.getpid()} reads.")) for i in range(99)]
        visit(browser, said[0], ready, pid)
        runs[name] = []
        for i in range(1, visits + 1 + profile):
            v = visit(browser, said[i], ready, pid, profile=i > visits)
            runs[name].append(v)
            what = f"{name} {i}/{visits}" + (" (profiled)" if i > visits else "")
            progress(f"{what}: chart {v.wall_s:.2f} s, browser {ms(browser_s(v))} ms")
    return runs


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(prog="python -m bench browser_floor")
    parser.add_argument("--visits", type=int, default=5, choices=range(1, 98))
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        (trivial := Path(tmp) / "hi.py").write_text(TRIVIAL)
        with (
            streamlit_server(timeout=240) as app,
            streamlit_server(timeout=120, script=trivial) as hi,
            sync_playwright() as pw,
        ):
            browser = launch_chromium(pw)
            pages = {  # first chart: the explorer's first draw (home draws one too), or "hi"
                "pattern": (f"{app}/pattern?layer=0&head=0&s={{}}", app.pid, FIRST_DRAW),
                "home": (f"{app}/", app.pid, FIRST_DRAW),
                "trivial": (f"{hi}/", hi.pid, HI),
            }
            runs = measure_pages(browser, pages, args.visits, not args.no_profile)
            browser.close()
    counted = {name: [v for v in vs if not v.profile] for name, vs in runs.items()}
    print_visits(counted)
    print_profile(runs)
    print_floor(counted)
    return 0


if __name__ == "__main__":  # python -m bench.browser_floor (bench/__main__.py does not list it)
    sys.exit(main(sys.argv[1:]))
