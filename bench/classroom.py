"""``python -m bench classroom [--sessions 30] [--listeners 4] [--replicas 2] [--rounds 3]
[--no-heavy] [--idle-heavy]``: a class behind ./serve.sh, as the load test drives it
(tests/serve/test_classroom.py asserts its correctness), with visitors on all three models:
readers on MiniLM and SmolLM2 (below) and listeners on Whisper (``bench.classroom_listen``), who
upload a new clip in each new-sentence round.

Thirty browser sessions (one Chromium, one context each, so each holds its own balancer cookie)
arrive within 10 s, each on /pattern with a sentence of its own; every third one on the decoder
(model=smollm2), so the replicas hold both models and the trace store both kinds of trace.
Then, in rounds, every session makes moves inside its sentence in the attention explorer (head
and layer keys); then ``--rounds`` pairs of new-sentence rounds: each session types a new
sentence of its own with no heavy visitor, then another while one heavy visitor (its own
Chromium, in a thread) pastes new 512-token texts in a loop (it pauses between the pairs). Every
time is taken inside the page, from the key press to the redraw (``bench.explorer``'s
instrumentation), with the steps in between; the replicas' CPU from their process clocks over
each phase. The browsers are kept below the servers (``measure``: a CPU group, or nice).

Checked for every session: no error box, no uncaught page error, no HTTP 5xx, the explorer's row
labels are its own sentence's tokens, and every block it fetched was for one of its own texts
(no cross-session leak). Printed: sessions per replica, server CPU per move and per new
sentence, new-sentence and redraw p50/p95, each round's p95, the heavy visitor's effect on the
others' new-sentence p95 (pooled over the rounds), where a new sentence's time went, memory per
replica. Bounded: every wait has a timeout, the heavy visitor at most HEAVY_MAX texts.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_plus

from attention_core import Model, load_model, tokenize
from bench.classroom_listen import Listener, Rounds, engine_heard, listeners, watch_http
from bench.cpu_groups import CpuGroup
from bench.explorer import (
    DONE,
    FIRST_DRAW,
    INSTRUMENT,
    MARK,
    PATH_SEGMENTS,
    RESULT,
    SETTLED,
    path_of,
    server_cpu_s,
)
from bench.live import pss_mb, rss_mb
from bench.report import load, p50, p95, progress, table
from bench.sentences import sentence
from scripts.live_app import free_port, launch_chromium
from scripts.serving import Serve, srv_cookie, start_serve, stop_serve, wait_ready

ARRIVAL_S = 10.0  # every session arrives within this
LISTENERS = 4  # students on Listen (Whisper), beside the readers (bench.classroom_listen)
WAIT_MS = 180_000  # one wait on a page (30 sessions on 2 shared cores)
MOVES = ("ArrowRight", "ArrowRight", "ArrowDown", "ArrowRight")  # head, head, layer, head
BROWSER_NICE = 10  # the browsers' priority below the servers' (python -m bench classroom only)
HEAVY_NICE = 19  # the heavy visitor's browser, below the others
HEAVY_N = 512  # tokens in each of the heavy visitor's texts
HEAVY_MAX = 40  # texts the heavy visitor pastes at the most
ROUNDS = 3  # pairs of new-sentence rounds, without and with the heavy visitor (bench only)
API = "/api/attention/block"
ERROR = '[data-testid="stException"]'
LABELS = """() => {
  const out = [];
  const walk = (node) => {
    for (const el of node.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.matches(".ax:not(.ax-heads) .ax-rows span")) out.push(el.title);
    }
  };
  walk(document);
  return out;
}"""


@dataclass
class Session:
    """One student: a browser context and page, the texts it typed, what went wrong."""

    number: int
    texts: list[str]  # its first sentence, then the new ones it types
    model: Model  # what it reads its tokens with: MiniLM, or SmolLM2 (a LlamaModel)
    current: int = 0  # the one on screen
    context: object = None
    page: object = None
    replica: str | None = None
    errors: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)  # the text of every block it fetched
    first_draw_s: float | None = None
    redraws_s: list[float] = field(default_factory=list)
    new_sentence: Rounds = field(default_factory=lambda: Rounds())  # seconds, per round
    paths: Rounds = field(default_factory=lambda: Rounds())  # PATH_SEGMENTS of each, or None

    def watch(self) -> None:
        page = self.page
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        watch_http(page, self.errors)
        page.on("request", self._request)

    def _request(self, request) -> None:
        if API in request.url and request.method == "POST":
            try:
                self.asked.append(json.loads(request.post_data or "{}").get("text", ""))
            except ValueError:
                self.errors.append("a block request that is not JSON")


def texts_for(model: Model, number: int, new: int = 2) -> list[str]:
    """The session's own sentence and the ``new`` ones it types: real words, 14 + ``number``
    tokens each, so that no two sessions (and no two of its texts) share a text."""
    n = 14 + number
    return [sentence(model, n, 101 + variant) for variant in range(1 + new)]


def check_view(session: Session) -> None:
    """The explorer shows this session's current text (its row labels are its tokens)."""
    tokens = tokenize(session.model, session.texts[session.current]).tokens
    labels = session.page.evaluate(LABELS)
    if not labels:
        session.errors.append("no row labels drawn")
    for label in labels:
        index, _, token = label.partition(": ")
        if not index.isdigit() or int(index) >= len(tokens) or tokens[int(index)] != token:
            session.errors.append(f"label {label!r} is not of its own sentence")
            return
    if session.page.locator(ERROR).count():
        session.errors.append("an error box on the page")


def settle(page) -> None:
    page.wait_for_function(SETTLED, timeout=WAIT_MS, polling=200)


def arrive(browser, front: str, sessions: list[Session]) -> None:
    """Open every session's page, spread over ARRIVAL_S, then wait for each first draw."""
    start = time.monotonic()
    for i, s in enumerate(sessions):
        time.sleep(max(0.0, start + i * ARRIVAL_S / len(sessions) - time.monotonic()))
        s.context = browser.new_context(viewport={"width": 1200, "height": 900})
        s.page = s.context.new_page()
        s.page.add_init_script(INSTRUMENT)
        s.watch()
        chosen = f"&model={s.model.config.key}" if s.model.config.key != "minilm" else ""
        s.page.goto(
            f"{front}/pattern?layer=0&head=0{chosen}&s={quote_plus(s.texts[0])}",
            wait_until="commit",
            timeout=WAIT_MS,
        )
        s.asked.clear()  # the texts it asks for are checked from here; goto is the test's
    for s in sessions:
        s.page.wait_for_function(FIRST_DRAW, timeout=WAIT_MS, polling=200)
        s.first_draw_s = s.page.evaluate("() => window.__bench.draws[0].frame / 1000")
        s.replica = srv_cookie(s.context)
    for s in sessions:
        settle(s.page)


def timed_round(sessions: list[Session], act, kind: str, busy: bool = False) -> list[float]:
    """``act(session)`` on every session, then each one's time from its key press to the
    redraw on screen (``frame``), in seconds (a new sentence's also kept in the session, with
    its path, as ``busy`` or not)."""
    marks = []
    for s in sessions:
        marks.append(s.page.evaluate(MARK))
        act(s)
    times = []
    for s, mark in zip(sessions, marks, strict=True):
        s.page.wait_for_function(DONE, arg=[mark, kind, 6], timeout=WAIT_MS, polling=100)
        got = s.page.evaluate(RESULT, [mark, kind, 6])
        times.append(got["frame"] / 1000)
        if kind == "sentence":
            s.new_sentence.add(busy, got["frame"] / 1000)
            s.paths.add(busy, path_of(got))
    for s in sessions:
        settle(s.page)
    return times


def press(key: str):
    def act(s: Session) -> None:
        s.page.locator(".ax:not(.ax-heads)").last.focus()
        s.page.keyboard.press(key)

    return act


def new_sentence(index: int, spread_s: float, count: int):
    """Type each session's ``index``-th text, the sessions spread over ``spread_s``."""
    start = time.monotonic()
    done = [0]

    def act(s: Session) -> None:
        time.sleep(max(0.0, start + done[0] * spread_s / count - time.monotonic()))
        done[0] += 1
        s.current = index
        box = s.page.get_by_role("textbox", name="Your sentence")
        box.fill(s.texts[index])
        box.press("Enter")

    return act


class Heavy(threading.Thread):
    """One visitor pasting new 512-token texts in a loop while ``active`` is set, in its own
    Chromium (Playwright's sync API is one loop per thread), until ``stop`` or HEAVY_MAX texts.
    ``idle`` is set while it waits (between texts, or once active is cleared and its last text
    is drawn); ``lower()``, when given, runs first on its thread (a lower priority for its
    browser)."""

    def __init__(self, front: str, texts: list[str], lower: Callable[[], object] | None = None):
        super().__init__(daemon=True)
        self.front, self.texts, self.lower = front, texts, lower
        self.stop, self.started = threading.Event(), threading.Event()
        self.active, self.idle = threading.Event(), threading.Event()
        self.done: list[float] = []
        self.errors: list[str] = []
        self.replica: str | None = None

    def run(self) -> None:
        from playwright.sync_api import sync_playwright

        try:
            if self.lower is not None:
                self.lower()
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                context = browser.new_context()
                page = context.new_page()
                page.add_init_script(INSTRUMENT)
                page.goto(f"{self.front}/pattern?s={quote_plus(self.texts[0])}", timeout=WAIT_MS)
                page.wait_for_function(FIRST_DRAW, timeout=WAIT_MS, polling=200)
                self.replica = srv_cookie(context)
                self.started.set()
                for text in self.texts[1:HEAVY_MAX]:
                    self.idle.set()
                    while not self.active.wait(0.2) and not self.stop.is_set():
                        pass
                    if self.stop.is_set():
                        break
                    self.idle.clear()
                    mark = page.evaluate(MARK)
                    box = page.get_by_role("textbox", name="Your sentence")
                    box.fill(text)
                    box.press("Enter")
                    page.wait_for_function(DONE, arg=[mark, "sentence", 6], timeout=WAIT_MS)
                    self.done.append(page.evaluate(RESULT, [mark, "sentence", 6])["frame"] / 1000)
                browser.close()
        except Exception as error:  # reported by the caller
            self.errors.append(repr(error))
        finally:
            self.started.set()
            self.idle.set()


@dataclass
class Figures:
    sessions: list[Session]
    cpu_per_arrival_s: float  # a first visit: the page's first runs and its blocks
    cpu_per_move_s: float
    cpu_per_sentence_s: float  # in the first quiet round
    heavy: Heavy | None
    rss_mb: dict[int, float]
    per_replica: dict[str, int]
    listeners: list[Listener] = field(default_factory=list)
    rounds_p95: list[tuple[bool, float]] = field(default_factory=list)  # (busy, p95), in order
    browsers: str = ""  # how the browsers were kept below the servers (``measure``)
    pss_mb: dict[int, float] = field(default_factory=dict)  # its share of what replicas share

    @property
    def quiet_s(self) -> list[float]:
        """Every reader's new sentences in the rounds without the heavy visitor (seconds)."""
        return [t for s in self.sessions for t in s.new_sentence.quiet]

    @property
    def busy_s(self) -> list[float]:
        """... and in the rounds with it."""
        return [t for s in self.sessions for t in s.new_sentence.busy]

    def clips_s(self, busy: bool) -> list[float]:
        """Every listener's new clips, without the heavy visitor or with it (seconds)."""
        return [t for x in self.listeners for t in x.new_clip.of(busy)]


def replica_cpu(serve: Serve) -> float:
    return sum(server_cpu_s(pid) for pid, _ in serve.replicas().values())


def run(
    browser,
    serve: Serve,
    model: Model,
    n_sessions: int,
    heavy: bool,
    heavy_lower: Callable[[], object] | None = None,
    heavy_texts: int = HEAVY_MAX,
    decoder: Model | None = None,
    listening: list[Listener] | None = None,
    rounds: int = 1,
) -> Figures:
    """The whole class (see the module's docstring); the caller owns the browser and serve.sh.
    ``decoder`` (SmolLM2): every third session reads it instead of ``model``; ``listening``:
    students on Listen (Whisper), who upload a new clip in each new-sentence round (give them
    2 × ``rounds`` clips). ``rounds`` pairs of new-sentence rounds: one without the heavy
    visitor, then (``heavy``) one with it pasting; ``heavy_lower`` runs on its thread first."""
    front = f"http://127.0.0.1:{serve.port}"
    models = [decoder if decoder is not None and i % 3 == 2 else model for i in range(n_sessions)]
    sessions = [Session(i, texts_for(m, i, 2 * rounds), m) for i, m in enumerate(models)]
    listening = listening or []
    heard = engine_heard(listening[0].clips[0]) if listening else ""
    cpu = replica_cpu(serve)
    for listener in listening:
        listener.open(browser, front)
    arrive(browser, front, sessions)
    for listener in listening:
        listener.ready()
        listener.replica = srv_cookie(listener.context)
    cpu_arrival = (replica_cpu(serve) - cpu) / n_sessions
    progress(
        f"{n_sessions} sessions drawn; first draw p50 "
        f"{p50([s.first_draw_s for s in sessions]):.2f} s"
    )
    for s in sessions:
        check_view(s)
    cpu = replica_cpu(serve)
    for key in MOVES:
        for s, t in zip(sessions, timed_round(sessions, press(key), "view"), strict=True):
            s.redraws_s.append(t)
    cpu_moves = (replica_cpu(serve) - cpu) / (n_sessions * len(MOVES))
    redraws = [t for s in sessions for t in s.redraws_s]
    progress(f"{len(MOVES)} moves each, redraw p50 {p50(redraws) * 1000:.0f} ms")
    worker = None
    order = [busy for _ in range(rounds) for busy in ((False, True) if heavy else (False,))]
    rounds_p95, cpu_sentence = [], 0.0
    for k, busy in enumerate(order):
        if busy and worker is None:  # it arrives after the first round without it
            # Each text new (a forward pass of about HEAVY_N tokens) and starting with other
            # words than the one before (the redraw is told by its first row labels).
            texts = [sentence(model, HEAVY_N - i // 6, 104 + i % 6) for i in range(heavy_texts)]
            worker = Heavy(front, texts, heavy_lower)
            worker.start()
            worker.started.wait(WAIT_MS / 1000)
        if worker is not None and busy:
            worker.active.set()
        elif worker is not None:  # it finishes the text it is drawing, then waits
            worker.active.clear()
            worker.idle.wait(WAIT_MS / 1000)
        cpu = replica_cpu(serve)
        act = with_clips(new_sentence(k + 1, ARRIVAL_S, n_sessions), listening, k, n_sessions)
        times = timed_round(sessions, act, "sentence", busy)
        for listener in listening:
            listener.drawn(heard, busy)
        if k == 0:
            cpu_sentence = (replica_cpu(serve) - cpu) / n_sessions
        for s in sessions:
            check_view(s)
        rounds_p95.append((busy, p95(times)))
        kind = "busy" if busy else "quiet"
        progress(f"round {k + 1} ({kind}): new sentence p95 {p95(times):.2f} s")
    if worker is not None:
        worker.stop.set()
        worker.join(WAIT_MS / 1000)
    for s in sessions:
        strangers = {t for t in s.asked if t not in s.texts}
        if strangers:
            s.errors.append(f"fetched blocks of other texts: {sorted(strangers)[:2]}")
    counts: dict[str, int] = {}
    for s in sessions:
        counts[s.replica or "?"] = counts.get(s.replica or "?", 0) + 1
    rss = {i: rss_mb(pid)[0] for i, (pid, _) in serve.replicas().items()}
    pss = {i: pss_mb(pid) for i, (pid, _) in serve.replicas().items()}
    for listener in listening:
        counts[listener.replica or "?"] = counts.get(listener.replica or "?", 0) + 1
    return Figures(
        sessions,
        cpu_arrival,
        cpu_moves,
        cpu_sentence,
        worker,
        rss,
        counts,
        listening,
        rounds_p95,
        pss_mb=pss,
    )


def with_clips(act, listening: list[Listener], index: int, n_sessions: int):
    """``act`` for every reader, and each listener's clip ``index`` given among them (one
    after every n_sessions / len(listening) readers), so the clips spread over the round."""
    every = max(1, n_sessions // max(1, len(listening)))

    def both(s: Session) -> None:
        act(s)
        if s.number % every == 0 and s.number // every < len(listening):
            listening[s.number // every].give(index)

    return both


def _pair(xs: list[float], unit: str = "s", scale: float = 1.0) -> str:
    digits = 0 if unit == "ms" else 2
    return f"{p50(xs) * scale:.{digits}f} / {p95(xs) * scale:.{digits}f} {unit}"


def _split(fig: Figures) -> list[tuple[str, list[float], list[float]]]:
    """The new-sentence times with and without the heavy visitor, for the sessions on its
    replica and on the others."""
    out = []
    for where, same in (("the heavy visitor's", True), ("another", False)):
        group = [s for s in fig.sessions if (s.replica == fig.heavy.replica) == same]
        if group and fig.busy_s:
            busy = [t for s in group for t in s.new_sentence.busy]
            out.append((where, busy, [t for s in group for t in s.new_sentence.quiet]))
    return out


def report(fig: Figures) -> None:
    redraws = [t for s in fig.sessions for t in s.redraws_s]
    spread = ", ".join(f"{k}: {v}" for k, v in sorted(fig.per_replica.items()))
    memory = ", ".join(
        f"r{i}: {mb:.0f} MB (PSS {fig.pss_mb.get(i, float('nan')):.0f} MB)"
        for i, mb in sorted(fig.rss_mb.items())
    )
    per_round = ", ".join(f"{'busy' if b else 'quiet'} {x:.2f}" for b, x in fig.rounds_p95)
    rows = [
        ["sessions per replica", spread],
        ["first draw p50 / p95", _pair([s.first_draw_s or 0.0 for s in fig.sessions])],
        ["server CPU per arrival (first visit)", f"{fig.cpu_per_arrival_s * 1000:.0f} ms"],
        ["redraw (move in the explorer) p50 / p95", _pair(redraws, "ms", 1000)],
        ["server CPU per move (with its tell rerun)", f"{fig.cpu_per_move_s * 1000:.1f} ms"],
        ["new sentence p50 / p95 (every quiet round)", _pair(fig.quiet_s)],
        ["server CPU per new sentence (first round)", f"{fig.cpu_per_sentence_s * 1000:.0f} ms"],
        ["new sentence p95 in each round, in order (s)", per_round],
        ["memory per replica after the class: VmRSS (PSS: its share of shared pages)", memory],
        ["errors / cross-session leaks", str(len(errors(fig)))],
    ]
    if fig.listeners:
        rows += [
            [
                f"{len(fig.listeners)} listeners (Whisper): first draw p50 / p95",
                _pair([x.first_draw_s or 0.0 for x in fig.listeners]),
            ],
            ["… a new 5 s clip → heard and drawn, p50 / p95", _pair(fig.clips_s(False))],
        ]
        if fig.clips_s(True):
            rows.append(["… with the heavy visitor pasting", _pair(fig.clips_s(True))])
    if fig.heavy is not None and fig.busy_s:
        ratio = p95(fig.busy_s) / p95(fig.quiet_s)
        heavy = fig.heavy.done
        rows += [
            [
                "with a heavy visitor: new sentence p50 / p95",
                f"{_pair(fig.busy_s)} ({ratio:.2f}× the p95 without)",
            ],
            *[
                [f"… sessions on {where} replica", _pair(xs) + f" (without: {_pair(before)})"]
                for where, xs, before in _split(fig)
            ],
            [
                "heavy visitor",
                f"on {fig.heavy.replica}: {len(heavy)} texts of ~{HEAVY_N} tokens, "
                f"each drawn in p50 {p50(heavy) if heavy else float('nan'):.2f} s",
            ],
        ]
    table(
        f"A class of {len(fig.sessions) + len(fig.listeners)} behind serve.sh "
        f"(load {load()}; {fig.browsers or 'browsers as the caller started them'})",
        ["", "measured"],
        rows,
    )
    heads = ["new sentence, step", "p50 / p95"] + (["with the heavy visitor"] if fig.busy_s else [])
    table("Where a reader's new sentence went", heads, path_rows(fig))


def path_rows(fig: Figures) -> list[list[str]]:
    """Where a new sentence's time went, p50 / p95 of each PATH_SEGMENTS step, in the rounds
    without the heavy visitor and (when it came) with it: the server's steps and the browsers'."""
    rows = []
    for k, name in enumerate(PATH_SEGMENTS):
        cells = [name]
        for busy in (False, True) if fig.busy_s else (False,):
            paths = [p for s in fig.sessions for p in s.paths.of(busy)]
            xs = [p[k] for p in paths if p]
            cells.append(_pair(xs, "ms", 1000) if xs else "—")
        rows.append(cells)
    return rows


def errors(fig: Figures) -> list[str]:
    """Every reader's and listener's errors (leaks included)."""
    return [e for s in [*fig.sessions, *fig.listeners] for e in s.errors]


def measure(
    sessions: int,
    replicas: int,
    heavy: bool,
    idle_heavy: bool = False,
    show=None,
    n_listeners: int = LISTENERS,
    rounds: int = ROUNDS,
) -> Figures | None:
    """The class behind a ./serve.sh of its own (stopped at the end); None when it did not
    start (its output printed). ``show(fig)`` runs while the replicas are still up.

    The browsers run on the server's two cores here; in a class they run on the students'
    machines. So they are kept below the servers: in a CPU group of weight 2 against the
    servers' 1024 (``bench.cpu_groups``; the heavy visitor's browser in a group below theirs),
    or, where cgroups cannot be written, at nice BROWSER_NICE (HEAVY_NICE), which the server's
    own back lane (nice 10) then competes with. The figures are the servers'."""
    from playwright.sync_api import sync_playwright

    model, decoder = load_model(), load_model("smollm2")
    group = CpuGroup.make(f"attention-bench-{os.getpid()}")
    # cgroup v2 moves whole processes: there the browsers take the low group itself
    readers = group and (CpuGroup.make("readers", group, low=False) or group)
    below = group and CpuGroup.make("heavy", group)

    def lower() -> None:  # the heavy visitor's thread, before its browser starts
        if not (below and below.enter()):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HEAVY_NICE)

    with tempfile.TemporaryDirectory() as tmp:
        serve = start_serve(free_port(), Path(tmp) / "serve.out", replicas)
        try:
            if not wait_ready(serve, 240) or serve.proc.poll() is not None:
                print(serve.text())
                return None
            # Only now, so that the servers started above stay in the machine's root group.
            if readers and readers.enter():
                browsers = f"browsers in a CPU group of weight {readers.weight()}"
            else:  # nice is per thread on Linux, and inherited
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BROWSER_NICE)
                browsers = f"browsers at nice {BROWSER_NICE} (no writable cgroup)"
            with sync_playwright() as pw:
                browser = launch_chromium(pw)
                fig = run(
                    browser,
                    serve,
                    model,
                    sessions,
                    heavy,
                    lower,
                    1 if idle_heavy else HEAVY_MAX,
                    decoder,
                    listeners(n_listeners, tmp, 2 * rounds),
                    rounds,
                )
                fig.browsers = browsers
                if show is not None:
                    show(fig)
                browser.close()
        finally:
            stop_serve(serve)
            if group:
                group.leave()
                group.remove()
    return fig


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench classroom")
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--no-heavy", action="store_true")
    parser.add_argument("--listeners", type=int, default=LISTENERS, help="students on Listen")
    parser.add_argument(
        "--idle-heavy",
        action="store_true",
        help="a control: the heavy visitor arrives with one 512-token text "
        "and then does nothing during the busy rounds",
    )
    parser.add_argument(
        "--rounds", type=int, default=ROUNDS, help="pairs of rounds, without and with the heavy one"
    )
    args = parser.parse_args(argv)
    fig = measure(
        args.sessions,
        args.replicas,
        not args.no_heavy,
        args.idle_heavy,
        report,
        args.listeners,
        args.rounds,
    )
    if fig is None:
        return 1
    bad = errors(fig)
    for error in bad[:10]:
        print("  error:", error)
    return int(bool(bad))
