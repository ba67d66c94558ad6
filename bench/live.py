"""Measure one interaction with the running app in Chromium: from the key press to the chart
redrawn and the rerun finished, with the websocket bytes in between (bench/app.py says how)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.report import fmt_bytes, fmt_s, p50, p95

CHART_TIMEOUT_S = 120.0  # one interaction, 512 tokens included
PLACEHOLDER_S = 60.0  # a page that draws no chart within this is a placeholder

# A cheap signature of one chart's data (a sample of every trace's arrays), null while undrawn.
FINGERPRINT = """(i) => {
    const plot = Array.from(document.querySelectorAll('.js-plotly-plot')).at(i);
    if (!plot || !plot.data || !plot.querySelector('.main-svg')) return null;
    const part = (v) => {
        if (v == null) return '';
        if (typeof v.bdata === 'string') {
            const b = v.bdata;
            let s = b.length + ':';
            for (let j = 0; j < 16; j++) s += b.substr(Math.floor(j * b.length / 16), 8);
            return s;
        }
        if (Array.isArray(v) || ArrayBuffer.isView(v))
            return v.length + ':' + JSON.stringify(Array.prototype.slice.call(v, 0, 8));
        return String(v);
    };
    const keys = ['x', 'y', 'z', 'text', 'customdata'];
    return plot.data.map(t => keys.map(k => part(t[k])).join('|')).join('#');
}"""
CHANGED = f"([i, before]) => {{ const now = ({FINGERPRINT})(i); return now && now !== before; }}"


def script_finished(payload: bytes | str) -> bool:
    """Is this websocket frame the server's "script finished" (a complete run)?"""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    if not isinstance(payload, bytes) or len(payload) >= 512:  # "script finished" is tiny
        return False
    msg = ForwardMsg()
    msg.ParseFromString(payload)
    return (
        msg.WhichOneof("type") == "script_finished"
        and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
    )


class Wire:
    """Every websocket frame a page sends and receives: time, size, and "script finished"."""

    def __init__(self, page) -> None:
        self.received: list[tuple[float, int, bool]] = []
        self.sent: list[float] = []
        page.on("websocket", self._attach)

    def _attach(self, ws) -> None:
        ws.on("framereceived", self._received)
        ws.on("framesent", lambda _: self.sent.append(time.monotonic()))

    def _received(self, payload: bytes | str) -> None:
        self.received.append((time.monotonic(), len(payload), script_finished(payload)))

    def mark(self) -> tuple[int, int]:
        return len(self.received), len(self.sent)

    def wait_finished(self, page, mark: tuple[int, int], deadline: float) -> float | None:
        """Time the first complete run after ``mark`` finished; None if none before deadline."""
        while True:
            done = [t for t, _, fin in self.received[mark[0] :] if fin]
            if done or time.monotonic() > deadline:
                return done[0] if done else None
            page.wait_for_timeout(20)  # lets Playwright deliver the frame events

    def bytes_between(self, mark: tuple[int, int], until: float) -> int:
        return sum(n for t, n, _ in self.received[mark[0] :] if t <= until)

    def first_sent(self, mark: tuple[int, int]) -> float | None:
        return self.sent[mark[1]] if len(self.sent) > mark[1] else None


@dataclass(frozen=True)
class Sample:
    """One timed interaction, seconds from the key press; None when it never happened."""

    request_s: float | None
    chart_s: float | None
    done_s: float | None
    bytes: int


def measure(page, wire: Wire, act: Callable[[], None], chart: int) -> Sample:
    """Time ``act`` until chart number ``chart`` shows new data and the rerun has finished."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    before = page.evaluate(FINGERPRINT, chart)
    mark = wire.mark()
    t0 = time.monotonic()
    act()
    try:
        page.wait_for_function(CHANGED, arg=[chart, before], timeout=CHART_TIMEOUT_S * 1000)
        chart_s = time.monotonic() - t0
    except PlaywrightTimeout:
        chart_s = None
    done = wire.wait_finished(page, mark, t0 + CHART_TIMEOUT_S)
    page.wait_for_timeout(50)
    sent = wire.first_sent(mark)
    return Sample(
        request_s=None if sent is None else sent - t0,
        chart_s=chart_s,
        done_s=None if done is None else done - t0,
        bytes=wire.bytes_between(mark, done or time.monotonic()),
    )


# Slider / head switch → redrawn chart, per token count: (p50, p95) limits in seconds, None = none.
SWITCH_TARGETS = {12: (0.150, 0.300), 128: (None, 0.500), 512: (None, 1.5)}


def switch_target(n_tokens: int) -> str:
    """The switch target at ``n_tokens`` as table text, e.g. "p50 ≤ 150 ms / p95 ≤ 300 ms"."""
    limits = zip(("p50", "p95"), SWITCH_TARGETS[n_tokens], strict=True)
    return " / ".join(f"{name} ≤ {lim * 1000:.0f} ms" for name, lim in limits if lim)


def head_walk(count: int, n_heads: int = 12) -> list[tuple[str, str]]:
    """(slider, key) presses that each show a (layer, head) not shown before: along the heads
    of layer 0, one layer down at either end, back along the heads (a snake)."""
    moves, head, step = [], 0, 1
    while len(moves) < count:
        if 0 <= head + step < n_heads:
            moves.append(("Head", "ArrowRight" if step > 0 else "ArrowLeft"))
            head += step
        else:
            moves.append(("Layer", "ArrowRight"))
            step = -step
    return moves


def open_page(browser, url: str):
    """A fresh browser session (context) with a Wire on its page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    return page, Wire(page)


def has_chart(page, wire: Wire, timeout_s: float = PLACEHOLDER_S) -> bool:
    """After opening a page: did it draw a chart within ``timeout_s``? (False: a placeholder.)"""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout_s
    if wire.wait_finished(page, (0, 0), deadline) is None:
        return False
    try:  # the browser may still be drawing what the run sent (slow on a busy machine)
        left_ms = max(1_000, (deadline - time.monotonic()) * 1000)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=left_ms)
    except PlaywrightTimeout:
        return False
    return True


def type_sentence(page, text: str, label: str = "Your sentence") -> Callable[[], None]:
    """Fill the sentence box now; return the action that submits it (pressing Enter)."""
    box = page.get_by_role("textbox", name=label)
    box.fill(text)
    return lambda: box.press("Enter")


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a process in MB, from /proc."""
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))  # noqa: SIM115
    return tuple(int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))


def pss_mb(pid: int) -> float:
    """A process's proportional set size in MB (/proc/<pid>/smaps_rollup): its private memory
    plus its 1/n share of pages n processes map (the replicas' shared weight cache, libraries),
    the figure that adds up across replicas; VmRSS counts each shared page whole in each."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def stats_cols(samples: Sequence[Sample]) -> list[str]:
    """request p50, chart p50, chart p95, done p50, bytes p50."""
    return [
        fmt_s([s.request_s for s in samples]),
        fmt_s([s.chart_s for s in samples]),
        fmt_s([s.chart_s for s in samples], p95),
        fmt_s([s.done_s for s in samples]),
        fmt_bytes(p50([s.bytes for s in samples])) if samples else "n/a",
    ]


STAT_HEADER = ["n", "request p50", "chart p50", "chart p95", "done p50", "bytes p50"]
