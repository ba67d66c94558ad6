"""The explorer's stages beyond the pattern, redrawn in the browser on /beyond (``python -m bench
app --only explorer`` prints them after the switches): the norm-weighted view ("weighted",
section 1: the pattern beside it) on a head step, and the rollout ("rollout", section 2) on a
layer step, at 128 tokens. Target: a redraw ≤ 50 ms (issue 21).

Each move is timed inside the page: the key is dispatched on the stage's own explorer root
(``performance.now()`` before it), the view redraws synchronously when its blocks are there,
and ``frame`` is the next animation frame after it (when the new canvas reaches the screen).
The page settles (past the view's tell, no rerun) between moves, so a move's time is its own;
a move whose blocks were not there yet (it would fetch) is not counted but reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import quote_plus

from bench.live import open_page
from bench.report import load, p50, progress, table, verdict
from scripts.live_app import wait_idle

N_TOKENS = 128
TARGET_S = 0.050
WAIT_MS = 120_000
TELL_MS = 500  # the weighted view tells the server its view 350 ms after a redraw: a rerun

# Dispatch `key` on the explorer root that shows `stage`; {drawn, frame} in ms from just before
# the key, or {missed} when the view did not redraw at once (its blocks were not there).
STAGE_MOVE = """async ([stage, key]) => {
  const roots = [];
  const walk = (node) => {
    for (const el of node.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      if (el.matches(`figure.ax-panel[data-stage="${stage}"]`)) roots.push(el.closest(".ax"));
    }
  };
  walk(document);
  const root = roots[roots.length - 1];
  if (!root) return { missing: true };
  root.focus({ preventScroll: true });
  const before = Number(root.dataset.drawn || 0);
  const t0 = performance.now();
  const init = { key, bubbles: true, composed: true, cancelable: true };
  root.dispatchEvent(new KeyboardEvent("keydown", init));
  const drawn = performance.now() - t0;
  if (Number(root.dataset.drawn || 0) === before) return { missed: true };
  await new Promise((done) => requestAnimationFrame(() => done()));
  return { drawn, frame: performance.now() - t0 };
}"""

# Has the stage's view drawn at least once (it is on the page and its blocks arrived)?
STAGE_DRAWN = """(stage) => {
  let hit = false;
  const walk = (node) => {
    for (const el of node.querySelectorAll("*")) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const root = el.matches(`figure.ax-panel[data-stage="${stage}"]`) && el.closest(".ax");
      if (root && Number(root.dataset.drawn) > 0) hit = true;
    }
  };
  walk(document);
  return hit;
}"""

# What to press on each stage's view: ← → step the head (the rollout has none: heads are
# averaged), ↑ ↓ the layer on the focused view.
KEYS = {"weighted": ("ArrowRight", "ArrowLeft"), "rollout": ("ArrowDown", "ArrowUp")}


@dataclass
class StageRun:
    """The redraws of one stage: seconds to the redraw and to the next frame, and misses."""

    stage: str
    drawn_s: list[float]
    frame_s: list[float]
    missed: int
    load: str
    n: int = N_TOKENS


def settle(page) -> None:
    """Wait past the view's tell to the server, then until its rerun (if any) has finished."""
    page.wait_for_timeout(TELL_MS)
    wait_idle(page, WAIT_MS)


def stage_moves(page, stage: str, count: int) -> StageRun:
    """``count`` key presses on ``stage``'s view (back and forth), the page settled between."""
    forward, back = KEYS[stage]
    drawn: list[float] = []
    frame: list[float] = []
    missed = 0
    for i in range(count):
        got = page.evaluate(STAGE_MOVE, [stage, forward if (i // 3) % 2 == 0 else back])
        if got.get("missing"):
            raise RuntimeError(f"no {stage} view on the page")
        if got.get("missed"):
            missed += 1
        else:
            drawn.append(got["drawn"] / 1000)
            frame.append(got["frame"] / 1000)
        settle(page)
    return StageRun(stage, drawn, frame, missed, load())


def run_stages(browser, url, text: str, count: int, n: int = N_TOKENS) -> list[StageRun]:
    """/beyond on ``text`` in a fresh session; each new stage's moves once it has drawn."""
    page, _ = open_page(browser, url)
    page.goto(f"{url}/beyond?layer=0&head=0&s={quote_plus(text)}", timeout=WAIT_MS)
    runs = []
    for stage in KEYS:
        page.wait_for_function(STAGE_DRAWN, arg=stage, timeout=WAIT_MS, polling=100)
        page.wait_for_timeout(2_000)  # the other layers' blocks, prefetched after the first draw
        settle(page)
        runs.append(replace(stage_moves(page, stage, count), n=n))
        progress(f"{stage} at {n} tokens: {len(runs[-1].drawn_s)} redraws")
    page.context.close()
    return runs


def print_stages(runs: Sequence[StageRun]) -> None:
    """One row per stage: median and largest redraw and frame time, the load beside them."""
    rows = []
    for run in runs:
        if not run.frame_s:
            rows.append([run.stage, "n/a", "n/a", "n/a", str(run.missed), run.load, "no data"])
            continue
        frame = p50(run.frame_s)
        rows.append(
            [
                f"{run.stage} ({'head' if run.stage == 'weighted' else 'layer'} step), {run.n}",
                f"{p50(run.drawn_s) * 1000:.1f} ms",
                f"{frame * 1000:.1f} ms",
                f"{max(run.frame_s) * 1000:.1f} ms (n={len(run.frame_s)})",
                str(run.missed),
                run.load,
                verdict(frame, TARGET_S),
            ]
        )
    table(
        "Explorer: the new stages' redraw (/beyond; the stage, its step, tokens)",
        [
            "stage",
            "redraw p50",
            "frame p50",
            "frame max",
            "fetched (not counted)",
            "load",
            "≤ 50 ms",
        ],
        rows,
        "Timed in the page from the key (dispatched on the stage's own view) to its redraw and "
        "to the next animation frame; judged on the frame's median. Load: 1/5/15-minute "
        "averages when the stage's moves ended.",
    )


def bench_stages(
    browser, url, model, repeats: int, sizes: Sequence[int] = (N_TOKENS,)
) -> list[StageRun]:
    """The section bench/explorer.py runs: both stages at each of ``sizes`` tokens (128 unless
    asked), then their table."""
    from bench.sentences import sentence

    count = max(6, min(4 * repeats, 24))
    runs = [r for n in sizes for r in run_stages(browser, url, sentence(model, n), count, n)]
    print_stages(runs)
    return runs
