"""``python -m bench app --only explorer``: the attention explorer (explorer/) on /pattern.

The explorer redraws every switch in the browser from numbers it fetched over HTTP
(``POST /api/attention/block``) and tells the server ~350 ms later (one rerun). Everything is
timed inside the page (``performance.now()``), so Playwright's own latency is left out: an init
script (``INSTRUMENT``) logs every keydown (capture phase, before the explorer's listeners),
every websocket frame sent and received, every block fetch, and every ``data-drawn`` change of
an explorer root (a MutationObserver on each shadow root, with the next animation frame after
it). A move is timed from its keydown (or, for the temperature range, from just before its
``input`` event) to the redraw (``drawn``) and to the next animation frame (``frame``, when the
new canvas reaches the screen); the targets are judged on ``frame``.

Bytes over HTTP come from Resource Timing (transferSize of the block responses); the server's
CPU from its process CPU clock (all threads, dead ones included, in nanoseconds: the figure
/proc/<pid>/stat gives in 10 ms ticks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from urllib.parse import quote_plus

from bench.core import THREAD_VARS
from bench.explorer_stages import bench_stages
from bench.live import Sample, open_page, script_finished
from bench.report import fmt_bytes, p50, p95, progress, table
from scripts.live_app import ROOT, wait_idle

WAIT_MS = 120_000  # one interaction, a 512-token first visit on a busy machine included
SETTLE_S = 30.0  # the tell (~350 ms after the redraw) and its rerun
TARGETS_S = {12: 0.035, 128: 0.050, 512: 0.100}  # redraw p50 per token count
FIRST_VISIT_512_S = 0.5  # a layer switch at 512 tokens that fetches the layer
FIRST_CHART_BYTES = 1e6  # at 128 tokens, fetched before the first chart
SENTENCE_BYTES = 6e6  # at 128 tokens, the whole sentence once prefetch settles
TELL_CPU_S = 0.005
N_LAYERS = 6  # all-MiniLM-L6-v2
TEMPS = (0.5, 2.0, 0.75, 3.0, 1.5, 0.25)

INSTRUMENT = """(() => {
  if (window.__bench || window.top !== window) return;
  const API = "api/attention/block";
  const B = (window.__bench = { ws: [], keys: [], draws: [], fetches: [] });
  const now = () => performance.now();
  performance.setResourceTimingBufferSize(100000);
  const size = (d) => (typeof d === "string" ? d.length : d.byteLength ?? d.size ?? 0);
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => {
        const n = size(e.data), small = n < 512 && e.data instanceof ArrayBuffer;
        const bytes = small ? Array.from(new Uint8Array(e.data)) : null;  // "script finished"?
        B.ws.push({ dir: "r", t: now(), n, bytes });
      });
    }
    send(data) {
      const raw = data.byteLength < 65536 ? new Uint8Array(data.buffer || data) : null;
      B.ws.push({ dir: "s", t: now(), n: size(data), bytes: raw && Array.from(raw) });
      return super.send(data);
    }
  };
  const nativeFetch = window.fetch;
  window.fetch = function (input, init) {
    if (String((input && input.url) || input).includes(API)) {
      let req = {};
      try { req = JSON.parse(init.body); } catch (e) {}
      B.fetches.push({ t: now(), layer: req.layer, part: req.part });
    }
    return nativeFetch.apply(this, arguments);
  };
  window.addEventListener("keydown", (e) => B.keys.push({ key: e.key, t: now() }), true);
  let ids = 0;
  const record = (records) => {
    const t = now();
    for (const r of records) {
      const el = r.target;
      el.__benchId ||= ++ids;
      const title = el.querySelector(".ax-title");
      const entry = { t, frame: null, id: el.__benchId, drawn: Number(el.dataset.drawn),
        grid: el.classList.contains("ax-heads"), title: title ? title.textContent : "",
        sig: Array.from(el.querySelectorAll(".ax-rows span"), (s) => s.title).join("|") };
      B.draws.push(entry);
      requestAnimationFrame(() => { entry.frame = now(); });
    }
  };
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    new MutationObserver(record).observe(root,
      { subtree: true, attributes: true, attributeFilter: ["data-drawn"] });
    return root;
  };
})()"""

# Shared by the page-side helpers below: the block responses that have arrived.
_API = """const api = () => performance.getEntriesByType("resource")
    .filter((e) => e.name.includes("api/attention/block"));"""

MARK = f"""() => {{
  {_API}
  const B = window.__bench, views = B.draws.filter((d) => !d.grid);
  return {{ keys: B.keys.length, draws: B.draws.length, ws: B.ws.length,
    fetches: B.fetches.length, sig: views.length ? views[views.length - 1].sig : "",
    t: performance.now() }};
}}"""

# The first draw after the mark's key press that ends the interaction, or null.
_FIND = """const find = (mark, kind, layers) => {
  const B = window.__bench, key = B.keys[mark.keys];
  if (!key) return null;
  const after = B.draws.slice(mark.draws).filter((d) => d.t >= key.t);
  const hit = after.find((d) => kind === "view" ? !d.grid
    : kind === "sentence" ? !d.grid && d.sig && d.sig !== mark.sig
    : d.grid && d.drawn >= layers && B.fetches.length - mark.fetches >= layers);
  return hit ? { key, hit } : null;
};"""

DONE = f"""([mark, kind, layers]) => {{
  {_FIND}
  const got = find(mark, kind, layers);
  return !!got && got.hit.frame !== null;
}}"""

RESULT = f"""([mark, kind, layers]) => {{
  {_FIND}
  {_API}
  const B = window.__bench, got = find(mark, kind, layers);
  if (!got) return null;
  const t0 = got.key.t;
  const blocks = api().filter((e) => e.startTime >= t0).map((e) => ({{
    start: e.startTime - t0, request: e.requestStart - t0, first_byte: e.responseStart - t0,
    end: e.responseEnd - t0, bytes: e.transferSize, raw: e.decodedBodySize }}));
  return {{
    drawn: got.hit.t - t0, frame: got.hit.frame - t0, title: got.hit.title,
    frames: B.ws.slice(mark.ws).filter((f) => f.t >= t0).map((f) => [f.dir, f.t - t0, f.n,
      f.bytes]),
    blocks, fetches: B.fetches.slice(mark.fetches).map((f) => [f.layer, f.part, f.t - t0]),
  }};
}}"""

# No block in flight, and none arrived and nothing was drawn for 400 ms: the prefetch chain has
# ended and no tell is pending (the explorer tells 350 ms after a draw, so a move pressed sooner
# would find its view reported by the timer of the draw before, ahead of its own redraw).
SETTLED = f"""() => {{
  {_API}
  const got = api(), B = window.__bench;
  if (got.length < B.fetches.length) return false;
  const last = Math.max(0, ...got.map((e) => e.responseEnd), ...B.draws.map((d) => d.t));
  return performance.now() - last > 400;
}}"""

BUSY = f"""() => {{ {_API} return api().length < window.__bench.fetches.length; }}"""

FIRST_DRAW = """() => !!window.__bench
  && window.__bench.draws.some((d) => !d.grid && d.frame !== null)"""
GRID_DRAWN = f"""() => !!window.__bench && window.__bench.draws.some((d) => d.grid
  && d.drawn >= {N_LAYERS} && d.frame !== null)"""

# What the first view cost: blocks arrived before the first draw, websocket bytes until then.
FIRST = f"""() => {{
  {_API}
  const B = window.__bench, first = B.draws.find((d) => !d.grid && d.frame !== null);
  const got = api().sort((a, b) => a.startTime - b.startTime).map((e, i) => ({{ e,
    what: B.fetches[i] ? `${{B.fetches[i].part}} ${{B.fetches[i].layer}}` : "?" }}));
  const before = got.filter((x) => x.e.responseEnd <= first.t);
  const sum = (xs, k) => xs.reduce((a, x) => a + x.e[k], 0);
  return {{ drawn_s: first.t / 1000, frame_s: first.frame / 1000,
    before: sum(before, "transferSize"), before_raw: sum(before, "decodedBodySize"),
    all: sum(got, "transferSize"), all_raw: sum(got, "decodedBodySize"),
    parts: before.map((x) => x.what), fetched: got.length,
    ws: B.ws.filter((f) => f.dir === "r" && f.t <= first.t).reduce((a, f) => a + f.n, 0) }};
}}"""

SET_TEMP = """(v) => {
  const all = [];
  const walk = (node) => {
    for (const el of node.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.matches('.ax input[data-name="temp"]')) all.push(el);
    }
  };
  walk(document);
  const el = all[all.length - 1];
  window.__bench.keys.push({ key: "temp", t: performance.now() });
  el.value = String(v);
  el.dispatchEvent(new Event("input", { bubbles: true }));
}"""


def server_cpu_s(pid: int) -> float:
    """CPU seconds the process has used, all threads (exited ones too): its CPU-time clock,
    readable for any process on Linux; /proc/<pid>/stat (10 ms ticks) as a fallback."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)  # CPUCLOCK_SCHED of the whole process
    except OSError:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, USER_HZ


def open_instrumented(browser, url: str):
    """A fresh session (live.open_page) whose page logs what INSTRUMENT says."""
    page, wire = open_page(browser, url)
    page.add_init_script(INSTRUMENT)
    return page, wire


def settle(page, timeout_s: float = 60.0) -> None:
    """Wait (bounded) until no block is in flight and the app runs no script."""
    page.wait_for_function(SETTLED, timeout=timeout_s * 1000, polling=100)
    wait_idle(page, int(timeout_s * 1000))


@dataclass
class Move:
    """One interaction, timed in the page: seconds from the key press (or input event)."""

    kind: str
    drawn_s: float
    frame_s: float
    title: str
    http_bytes: int
    ws_before: tuple[int, int]  # frames (sent, received) between the press and the redraw
    tell: dict = field(default_factory=dict)  # the later report: frames, bytes, seconds, CPU
    cpu_s: float | None = None  # server CPU from the press until the tell's rerun finished
    raw: dict = field(default_factory=dict, repr=False)  # RESULT as the page returned it

    def sample(self) -> Sample:
        """As live.Sample (for the tables shared with the old path): request = the first frame
        sent (the tell, or the new sentence), chart = on screen, done = its rerun finished, bytes
        = HTTP blocks and websocket frames received until then."""
        frames = self.raw.get("frames", [])
        sent = [t for d, t, _, _ in frames if d == "s"]
        done = finished_at(frames)
        until = (done or float("inf")) * 1000
        received = sum(n for d, t, n, _ in frames if d == "r" and t <= until)
        return Sample(
            sent[0] / 1000 if sent else None, self.frame_s, done, self.http_bytes + received
        )


def finished_at(after: Sequence) -> float | None:
    """Seconds from the press to the first "script finished" among the frames received."""
    for direction, t_ms, _, data in after:
        if direction == "r" and data is not None and script_finished(bytes(data)):
            return t_ms / 1000
    return None


def tell_of(after: Sequence) -> dict:
    """The frames after the redraw: the tell (sent) and the rerun it started (received)."""
    sent = [t for d, t, _, _ in after if d == "s"]
    fin = finished_at(after)
    return {
        "sent": len(sent),
        "received_frames": sum(1 for d, *_ in after if d == "r"),
        "received": sum(n for d, _, n, _ in after if d == "r"),
        "at_s": sent[0] / 1000 if sent else None,
        "finished_s": fin,
        "rerun_s": None if fin is None or not sent else fin - sent[0] / 1000,
    }


def what_sent(frames: Sequence) -> str:
    """The explorer state and widgets a page's sent frames carried (for a surprise report)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    said = []
    for direction, _, _, data in frames:
        if direction == "s" and data is not None:
            msg = BackMsg()
            msg.ParseFromString(bytes(data))
            widgets = msg.rerun_script.widget_states.widgets
            said.append(
                f"{msg.WhichOneof('type')} "
                + "; ".join(f"{str(w).replace(chr(10), ' ')[:200]}" for w in widgets)
            )
    return " | ".join(said)


def timed(page, wire, act: Callable[[], None], kind: str, pid: int) -> Move:
    """Mark, act, wait for the redraw (in the page), then for the rerun (the tell's, or the new
    sentence's) to finish and the view to settle. The server's CPU is read before the act, at
    the redraw and after the rerun."""
    mark, wmark = page.evaluate(MARK), wire.mark()
    cpu0 = server_cpu_s(pid)
    act()
    page.wait_for_function(DONE, arg=[mark, kind, N_LAYERS], timeout=WAIT_MS, polling="raf")
    cpu1, busy = server_cpu_s(pid), page.evaluate(BUSY)
    apart = not busy and len(wire.sent) == wmark[1]  # nothing of the tell's CPU is in cpu1
    wire.wait_finished(page, wmark, time.monotonic() + SETTLE_S)
    settle(page)
    got = page.evaluate(RESULT, [mark, kind, N_LAYERS])
    cpu2 = server_cpu_s(pid)
    drawn_ms = got["drawn"]
    before = [f for f in got["frames"] if f[1] <= drawn_ms]
    sent = sum(1 for f in before if f[0] == "s")
    told = tell_of([f for f in got["frames"] if f[1] > drawn_ms])
    told["cpu_s"] = cpu2 - cpu1 if apart else None
    if sent and kind == "view":
        progress(f"a frame sent before the redraw ({got['title']}): {what_sent(before)}")
    return Move(
        kind,
        drawn_ms / 1000,
        got["frame"] / 1000,
        got["title"],
        sum(b["bytes"] for b in got["blocks"]),
        (sent, len(before) - sent),
        told,
        cpu2 - cpu0,
        got,
    )


def focus_view(page, timeout_ms: float = 30_000) -> None:
    """Focus the explorer's root (a key there steps the layer; no cell is picked)."""
    page.locator(".ax:not(.ax-heads)").last.focus(timeout=timeout_ms)


def press(page, key: str) -> Callable[[], None]:
    return lambda: page.keyboard.press(key)


def open_view(browser, url: str, text: str):
    """/pattern on ``text`` at layer 0, head 0, in a fresh session; returns (page, wire, what the
    first view cost: FIRST), once the first draw is on screen and the prefetch has settled."""
    page, wire = open_instrumented(browser, url)
    page.goto(f"{url}/pattern?layer=0&head=0&s={quote_plus(text)}", timeout=WAIT_MS)
    page.wait_for_function(FIRST_DRAW, timeout=WAIT_MS, polling="raf")
    settle(page, WAIT_MS / 1000)
    return page, wire, page.evaluate(FIRST)


def try_timed(page, wire, act: Callable[[], None], kind: str, pid: int, label: str):
    """``timed``, or None (reported) when the page never redrew within WAIT_MS."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return timed(page, wire, act, kind, pid)
    except PlaywrightTimeout:
        progress(f"{label}: no redraw within {WAIT_MS / 1000:.0f} s")
        return None


def switch_moves(page, wire, pid: int, count: int, layers: int) -> dict[str, list[Move]]:
    """Head steps (→ along the heads, ← back at the end), layer steps down to first-visit
    layers then back up (revisits), temperature moves; each one timed apart."""
    plan: list[tuple[str, Callable[[], None]]] = []
    for i in range(count):
        plan.append(("head", press(page, "ArrowRight" if (i // 11) % 2 == 0 else "ArrowLeft")))
    plan += [("layer, first visit", press(page, "ArrowDown"))] * layers
    plan += [("layer, revisit", press(page, "ArrowUp"))] * layers
    for temp in (TEMPS * count)[:count]:
        plan.append(("temperature", lambda v=temp: page.evaluate(SET_TEMP, v)))
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    moves: dict[str, list[Move]] = {}
    for kind, act in plan:
        try:
            focus_view(page, WAIT_MS)  # the tell's rerun drew a new root: focus it again
        except PlaywrightTimeout:  # a busy machine: this move is lost, reported, not counted
            progress(f"{kind}: no explorer view to focus within {WAIT_MS / 1000:.0f} s")
            continue
        move = try_timed(page, wire, act, "view", pid, kind)
        moves.setdefault(kind, []).extend([move] if move else [])
    return moves


def idle_cpu_ms_per_s(page, pid: int, seconds: float = 2.0) -> float:
    """The server's CPU while nobody does anything (Streamlit's own housekeeping)."""
    cpu = server_cpu_s(pid)
    page.wait_for_timeout(seconds * 1000)
    return (server_cpu_s(pid) - cpu) * 1000 / seconds


@dataclass
class SizeRun:
    """Everything measured on one sentence of ``n`` tokens."""

    n: int
    first: dict
    moves: dict[str, list[Move]]
    idle_ms_per_s: float


def run_size(browser, url, text: str, n: int, count: int, layers: int) -> SizeRun:
    page, wire, first = open_view(browser, url, text)
    idle = idle_cpu_ms_per_s(page, url.pid)
    moves = switch_moves(page, wire, url.pid, count, layers)
    page.context.close()
    progress(f"explorer at {n} tokens: {sum(map(len, moves.values()))} moves")
    return SizeRun(n, first, moves, idle)


def ms(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x * 1000:.1f} ms" if x < 0.01 else f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def stat(xs: Sequence[float | None], fn: Callable = p50) -> float | None:
    ok = [x for x in xs if x is not None]
    return fn(ok) if ok else None


def judge(value: float | None, limit: float, show: Callable[[float], str]) -> str:
    """ "met", "MISSED by <how much>", or "n/a" when there is no value."""
    if value is None:
        return "n/a"
    return "met" if value <= limit else f"MISSED by {show(value - limit)}"


def target_s(n: int, kind: str) -> float:
    return FIRST_VISIT_512_S if (n, kind) == (512, "layer, first visit") else TARGETS_S[n]


def switch_rows(run: SizeRun) -> list[list[str]]:
    rows = []
    for kind, moves in run.moves.items():
        frame = stat([m.frame_s for m in moves])
        before = [sum(m.ws_before[i] for m in moves) for i in (0, 1)]
        limit = target_s(run.n, kind)
        rows.append(
            [
                str(run.n),
                kind,
                str(len(moves)),
                ms(stat([m.drawn_s for m in moves])),
                ms(frame),
                ms(stat([m.frame_s for m in moves], p95)),
                f"p50 ≤ {limit * 1000:.0f} ms",
                judge(frame, limit, ms),
                fmt_bytes(p50([m.http_bytes for m in moves])) if moves else "n/a",
                f"{before[0]} / {before[1]}",
            ]
        )
    return rows


def tell_rows(run: SizeRun) -> list[list[str]]:
    rows = []
    for kind, moves in run.moves.items():
        tells = [m.tell for m in moves]
        cpu = stat([t["cpu_s"] for t in tells])
        sent, recv = (stat([t[k] for t in tells]) or 0 for k in ("sent", "received_frames"))
        rows.append(
            [
                str(run.n),
                kind,
                str(len(moves)),
                f"{sent:g} / {recv:g}",
                fmt_bytes(stat([t["received"] for t in tells]) or 0),
                ms(stat([t["at_s"] for t in tells])),
                ms(stat([t["rerun_s"] for t in tells])),
                ms(stat([m.cpu_s for m in moves])),
                ms(cpu),
                judge(cpu, TELL_CPU_S, ms),
            ]
        )
    return rows


def bytes_rows(runs: Sequence[SizeRun]) -> list[list[str]]:
    rows = []
    for run in runs:
        f, first = run.first, run.moves.get("layer, first visit", [])
        at_128 = run.n == 128
        rows.append(
            [
                str(run.n),
                ", ".join(f["parts"]),
                f"{fmt_bytes(f['before'])} ({fmt_bytes(f['before_raw'])} raw)",
                judge(f["before"], FIRST_CHART_BYTES, fmt_bytes) if at_128 else "",
                f"{fmt_bytes(f['all'])} in {f['fetched']} blocks ({fmt_bytes(f['all_raw'])} raw)",
                judge(f["all"], SENTENCE_BYTES, fmt_bytes) if at_128 else "",
                fmt_bytes(p50([m.http_bytes for m in first])) if first else "n/a",
                fmt_bytes(f["ws"]),
                ms(f["frame_s"]),
            ]
        )
    return rows


def print_switches(runs: Sequence[SizeRun]) -> None:
    table(
        "Explorer on /pattern: key press (or temperature input) → redrawn, timed in the page",
        [
            "tokens",
            "move",
            "n",
            "drawn p50",
            "on screen p50",
            "on screen p95",
            "target",
            "verdict",
            "HTTP bytes / move p50",
            "ws frames press→redraw (sent / recv, all)",
        ],
        [row for run in runs for row in switch_rows(run)],
        "drawn = the explorer's data-drawn changed (canvas painted by script); on screen = the "
        "next animation frame after it. From the keydown (capture phase, before the explorer's "
        "own listener); the temperature from just before its input event. A first visit at 12 "
        "and 128 tokens finds the layer's scores prefetched (its q/k come after the redraw); at "
        "512 it fetches them. HTTP bytes are transferSize (gzip on the wire), 'raw' the float32.",
    )
    table(
        "Explorer: the later tell (the browser reports the view, one rerun) and the server's CPU",
        [
            "tokens",
            "move",
            "n",
            "tell frames sent / recv p50",
            "tell bytes recv p50",
            "tell sent after p50",
            "tell → script finished p50",
            "server CPU / move p50",
            "tell rerun CPU p50",
            "target < 5 ms",
        ],
        [row for run in runs for row in tell_rows(run)],
        "Server CPU from its process CPU clock (every thread): per move from the press until the "
        "tell's rerun finished; tell rerun CPU from the redraw on (n/a when a block was still in "
        "flight or the tell already sent at the redraw). Idle server CPU, ms per s: "
        + ", ".join(f"{run.idle_ms_per_s:.1f} at {run.n} tokens" for run in runs)
        + ".",
    )
    table(
        "Explorer: bytes over HTTP (POST /api/attention/block, Resource Timing)",
        [
            "tokens",
            "blocks before the first chart",
            "bytes before the first chart",
            "≤ 1 MB at 128",
            "whole sentence after prefetch settles",
            "≤ 6 MB at 128",
            "per layer (first visit p50)",
            "websocket bytes before the first chart",
            "first chart on screen (from navigation)",
        ],
        bytes_rows(runs),
        "Blocks are a layer's raw scores [h,q,k] (scores) or its queries and keys (qk), float32, "
        "gzip-compressed by Streamlit's server. The whole sentence's scores are prefetched after "
        "the first draw when they are ≤ 8 MB (12 and 128 tokens); at 512 each layer is fetched "
        "on its first visit.",
    )


def new_sentences(browser, url, model, count: int) -> list[Move]:
    """/pattern open on a short sentence; type ``count`` new 128-token ones (not cached)."""
    from bench.live import type_sentence
    from bench.sentences import sentence

    page, wire, _ = open_view(browser, url, sentence(model, 12, 91))
    moves = []
    for r in range(count):
        act = type_sentence(page, sentence(model, 128, 92 + r))
        move = try_timed(page, wire, act, "sentence", url.pid, "new sentence")
        moves.extend([move] if move else [])
    page.context.close()
    progress(f"explorer new sentence: {len(moves)}/{count} drawn")
    return moves


# The path from Enter to the chart on screen, in order; each segment ends where the next starts.
PATH_SEGMENTS = (
    "browser: Enter → rerun request sent",
    "server rerun: request → script finished (tokenize, forward, page)",
    "browser: script finished → first block fetch started (component mounted)",
    "server: block request → first byte (get trace, pack, gzip)",
    "HTTP: block transfer (first byte → last)",
    "browser: block arrived → redrawn (decode, softmax, paint)",
    "browser: redrawn → on screen (next frame)",
)


def path_of(raw: dict) -> list[float] | None:
    """The segments of PATH_SEGMENTS for one new sentence, in seconds, from the page's RESULT
    (None: one is missing). When the fetch starts before "script finished", the rerun segment
    ends at the fetch."""
    sent = next((t / 1000 for d, t, _, _ in raw["frames"] if d == "s"), None)
    done = finished_at(raw["frames"])
    if sent is None or done is None or not raw["blocks"]:
        return None
    block = {k: v / 1000 for k, v in raw["blocks"][0].items() if k not in ("bytes", "raw")}
    end_run = min(done, block["start"])
    marks = [0.0, sent, end_run, block["start"], block["first_byte"], block["end"]]
    marks += [raw["drawn"] / 1000, raw["frame"] / 1000]
    return [b - a for a, b in pairwise(marks)]


def median_s(fn: Callable[[], object], runs: int = 5, budget_s: float = 10.0) -> list[float]:
    """Median [wall, CPU] seconds of ``fn`` over at most ``runs`` runs within ``budget_s``,
    after one (on a busy machine the CPU time is the steadier of the two)."""
    fn()
    walls: list[float] = []
    cpus: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(walls) < runs and (not walls or time.perf_counter() < deadline):
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return [p50(walls), p50(cpus)]


def in_process(model, text: str) -> dict[str, list[float]]:
    """The server's steps for a new sentence, timed directly in this process (one thread)."""
    import gzip

    from attention_core import run_model, tokenize
    from attention_core.methods.pack import layer_block

    tokens = tokenize(model, text)
    trace = run_model(model, tokens)
    data = layer_block(trace, 0, "scores").data
    return {
        "tokenize": median_s(lambda: tokenize(model, text)),
        "forward (NumPy run_model)": median_s(lambda: run_model(model, tokens)),
        "pack one layer's scores (layer_block)": median_s(lambda: layer_block(trace, 0, "scores")),
        "gzip it, level 5 (Streamlit's middleware)": median_s(lambda: gzip.compress(data, 5)),
    }


STEPS = """import json, sys
from attention_core import load_model
from bench.explorer import in_process
model = load_model()
print(json.dumps([in_process(model, text) for text in sys.argv[1:]]))"""


def in_process_one_thread(texts: Sequence[str]) -> list[dict[str, list[float]]]:
    """``in_process`` of each text in a fresh interpreter on one BLAS thread, as the server runs
    (run.sh): here, multi-threaded BLAS spin-waits for the busy cores and its times explode."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **dict.fromkeys(THREAD_VARS, "1")}
    done = subprocess.run(
        [sys.executable, "-c", STEPS, *texts],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        progress(f"in-process steps failed: {done.stderr[-500:]}")
        return [{} for _ in texts]
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_server_steps(steps: dict[str, list[float]]) -> None:
    """What the server does for one 512-token layer, timed directly (the first-visit figure)."""
    table(
        "Explorer at 512 tokens: the server's steps, timed in a fresh process on one thread",
        ["step", "wall p50", "CPU p50"],
        [[name, ms(w), ms(c)] for name, (w, c) in steps.items()],
        "Every first visit of a layer at 512 tokens packs and gzips its 12.6 MB of scores "
        "(Streamlit's middleware compresses the block route's responses, level 5).",
    )


def bertviz_seconds(model, count: int) -> list[float] | str:
    """BertViz's pipeline (forward + head_view + model_view) on the same new sentences."""
    from bench.sentences import sentence

    try:
        from bench.peer import bertviz_render, load_peer
    except ImportError as err:
        return f"skipped: {err}"
    peer = load_peer()
    return [bertviz_render(peer, sentence(model, 128, 92 + r))[0] for r in range(count)]


def print_new_sentence(moves: Sequence[Move], bertviz: list[float] | str) -> None:
    ours = stat([m.frame_s for m in moves])
    samples = [m.sample() for m in moves]
    row = [
        str(len(moves)),
        ms(ours),
        ms(stat([m.frame_s for m in moves], p95)),
        fmt_bytes(p50([s.bytes for s in samples])) if samples else "n/a",
        ms(stat([m.cpu_s for m in moves])),
    ]
    if isinstance(bertviz, str) or ours is None:
        row += [str(bertviz) if isinstance(bertviz, str) else ms(p50(bertviz)), "", "n/a"]
    else:
        theirs = p50(bertviz)
        ok = ours <= 0.1 * theirs
        row += [
            f"{ms(theirs)} (n={len(bertviz)})",
            f"{ours / theirs:.2f}×",
            "met" if ok else f"MISSED by {ms(ours - 0.1 * theirs)}",
        ]
    table(
        "New sentence (128 tokens, not cached) → first explorer chart on /pattern, vs BertViz",
        [
            "n",
            "ours p50 (Enter → on screen)",
            "p95",
            "bytes p50 (HTTP + ws)",
            "server CPU p50 (Enter → settled)",
            "BertViz p50",
            "ours ÷ BertViz",
            "target ≤ 0.1× BertViz",
        ],
        [row],
        "Ours: Enter in the sidebar box → the explorer redrawn with the new tokens, in the page. "
        "BertViz: forward + head_view + model_view HTML of the same sentences in this process "
        "(its HTML not even drawn).",
    )


def print_profile(moves: Sequence[Move], steps: dict[str, list[float]]) -> None:
    paths = [p for m in moves if (p := path_of(m.raw))]
    if not paths:
        table("New sentence → first chart: where the time goes", ["status"], [["no data"]])
        return
    seg = [p50(col) for col in zip(*paths, strict=True)]
    total = sum(seg)
    rows = [
        [name, ms(s), f"{s / total:.0%}", ""] for name, s in zip(PATH_SEGMENTS, seg, strict=True)
    ]
    rows += [[f"  in-process: {name}", ms(w), "", ms(c)] for name, (w, c) in steps.items()]
    if steps:
        rest = seg[1] - steps["tokenize"][0] - steps["forward (NumPy run_model)"][0]
        rows.append(
            [
                "  rerun less an in-process tokenize and forward: the page, Streamlit, and the"
                " same pass's extra cost in the server (a new trace's fresh memory, the browser's"
                " share of the cores); approx.",
                ms(rest),
                f"{rest / total:.0%}",
                "",
            ]
        )
    early = sum(
        1 for m in moves if (finished_at(m.raw["frames"]) or 0) > m.raw["blocks"][0]["start"] / 1000
    )
    big = max(range(len(seg)), key=seg.__getitem__)
    table(
        "New sentence (128 tokens) → first chart: where the time goes (p50 per segment)",
        ["segment", "p50", "share of the sum", "CPU (in-process)"],
        rows,
        f"Timed in the page along one path (n={len(paths)}; sum of p50s {ms(total)}); "
        f"in-process rows time the server's steps directly (a fresh process, one BLAS thread, "
        f"as the server runs; not in the sum). "
        f'The first block\'s fetch started before "script finished" in {early} of {len(paths)}. '
        f"**Largest share: {PATH_SEGMENTS[big]} ({seg[big] / total:.0%}).**",
    )


@dataclass
class ExplorerFigures:
    """What the explorer section measured: the switches per sentence length, the new stages'
    redraws, the new sentences typed and BertViz's seconds on the same sentences (or why not)."""

    runs: list[SizeRun]
    stages: list
    fresh: list[Move]
    bertviz: list[float] | str

    @property
    def heads(self) -> dict[int, list[Sample]]:
        """The head switches as Samples, per token count (the BertViz table)."""
        return {run.n: [m.sample() for m in run.moves.get("head", [])] for run in self.runs}


def bench_explorer(
    browser,
    url,
    model,
    repeats: int,
    stage_sizes: Sequence[int] = (128,),
    new_count: int | None = None,
) -> ExplorerFigures:
    """The explorer section: switches, bytes and CPU at 12/128/512 tokens, the new stages'
    redraws at ``stage_sizes`` tokens (bench/explorer_stages.py), a new sentence vs BertViz
    (``new_count`` of each, 3 to 9; by default as many as ``repeats``), and that path's
    profile; printed, and returned."""
    from bench.sentences import SIZES, sentence

    count, layers = min(4 * repeats, 22), min(2 + repeats, N_LAYERS - 1)
    runs = [run_size(browser, url, sentence(model, n), n, count, layers) for n in SIZES]
    new_count = max(3, min(new_count or repeats, 9))
    fresh = new_sentences(browser, url, model, new_count)
    print_switches(runs)
    stages = bench_stages(browser, url, model, repeats, stage_sizes)
    steps, steps_512 = in_process_one_thread([sentence(model, 128, 92), sentence(model, 512)])
    print_server_steps(steps_512)
    bertviz = bertviz_seconds(model, new_count) if fresh else "skipped"
    print_new_sentence(fresh, bertviz)
    print_profile(fresh, steps)
    return ExplorerFigures(runs, stages, fresh, bertviz)


def has_drawn(page, kind: str, timeout_s: float) -> bool:
    """After opening a page: did its explorer view ("sentence") or grid ("grid") draw?"""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            GRID_DRAWN if kind == "grid" else FIRST_DRAW, timeout=timeout_s * 1000, polling=100
        )
        settle(page, timeout_s)
    except PlaywrightTimeout:
        return False
    return True


def measure_new_sentence(page, wire, act: Callable[[], None], kind: str, pid: int) -> Sample:
    """A new sentence typed on an explorer page ("sentence": /pattern, "grid": /all_heads) as
    live.Sample; chart None when it was never drawn."""
    move = try_timed(page, wire, act, kind, pid, f"new sentence ({kind})")
    return move.sample() if move else Sample(None, None, None, 0)
