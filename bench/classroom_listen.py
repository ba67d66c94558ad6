"""The class's listeners: students on the Listen page (Whisper tiny.en) beside the readers of
``bench.classroom``, so the class holds visitors on all three models.

Each listener has its own browser context (its own balancer cookie) and arrives on Listen with
an example clip, as a student following the teacher's link would: the first listener on the
default clip (/listen), the others on the next shipped clips by URL (/listen?lis_clip=river).
Its first chart is timed in the page, from the navigation's start to the first animation frame
with its clip's transcript on screen and cross-attention drawn (``first_chart_s``; a replica
that heard the example clips when it started answers it without transcribing), and the
transcript shown is checked against the engine's for that clip. In each new-sentence
round it uploads a new 5 s WAV (``bench.listen.clips``: the same speech at a gain of its own,
so a new log-mel and never a cached clip), spread among the readers' new sentences, and is
timed in the page from the file input's change event to this clip's transcript and
cross-attention on screen (``bench.listen``'s instrumentation). Checked: the transcript shown is
the engine's for that sound, no error box, no uncaught page error, no HTTP 5xx, and no
refused upload or block request (``http_failure``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.listen import DRAWN, FIND, GIVEN, HEARD, MARK, clips
from ui.presets import CLIPS, clip_names

WAIT_MS = 180_000
# Started at each upload: checks every animation frame whether this clip is heard and drawn,
# and keeps the first moment it is (the page is polled later, when the readers are done).
WATCH = f"""() => {{
  const drawn = {DRAWN};
  const look = () => {{
    const at = drawn();
    if (at) window.__listen.drawn = at; else requestAnimationFrame(look);
  }};
  requestAnimationFrame(look);
}}"""
# From the page's first script on: the first animation frame with the clip heard and drawn.
FIRST_CHART = f"""(() => {{
  const drawn = {DRAWN};
  const look = () => {{
    const at = drawn();
    if (at) window.__firstChart = at; else requestAnimationFrame(look);
  }};
  requestAnimationFrame(look);
}})();"""
ERROR = '[data-testid="stException"]'
# Requests whose refusal means the visitor's action was lost: its file upload (Streamlit's
# upload handler answers 400 when its replica has no such session) and the explorer's blocks.
OURS = ("/_stcore/upload_file/", "/api/")


def http_failure(response) -> str | None:
    """What went wrong with a response, if anything: any 5xx, or a 4xx to one of ``OURS``
    (Streamlit's own 404 probes of path-prefixed URLs are normal)."""
    failed = response.status >= 500 or (
        response.status >= 400 and any(part in response.url for part in OURS)
    )
    return f"HTTP {response.status} {response.request.method} {response.url}" if failed else None


def watch_http(page, errors: list[str]) -> None:
    """Append each failed response of ``page`` (``http_failure``) to ``errors``."""
    page.on("response", lambda r: (e := http_failure(r)) and errors.append(e))


@dataclass
class Rounds:
    """One visitor's figures for its new texts or clips (a reader's in ``bench.classroom``, a
    listener's here), in the rounds without the heavy visitor (``quiet``) and with it
    (``busy``), in order."""

    quiet: list = field(default_factory=list)
    busy: list = field(default_factory=list)

    def of(self, busy: bool) -> list:
        """The figures of the rounds with the heavy visitor (``busy``) or without it."""
        return self.busy if busy else self.quiet

    def add(self, busy: bool, value) -> None:
        self.of(busy).append(value)


@dataclass
class Listener:
    """One student on Listen: its page, its clips (one per round), its times, what went wrong."""

    number: int
    clips: list[Path]
    example: str = ""  # the example clip it arrives on ("": the page's default)
    example_heard: str = ""  # what the engine hears in it
    context: object = None
    page: object = None
    replica: str | None = None
    errors: list[str] = field(default_factory=list)
    first_chart_s: float | None = None  # arrival -> its example clip heard and drawn, in the page
    first_heard_s: float | None = None  # ... -> its transcript on screen (before the chart)
    new_clip: Rounds = field(default_factory=lambda: Rounds())  # seconds, per round

    @property
    def first_draw_s(self) -> float | None:
        """``first_chart_s`` by the name ``bench.classroom`` read before it."""
        return self.first_chart_s

    def open(self, browser, front: str) -> None:
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = self.page = self.context.new_page()
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        watch_http(page, self.errors)
        page.add_init_script(f"window.__listen = {{}}; {GIVEN} {FIRST_CHART}")
        link = f"?lis_clip={self.example}" if self.example else ""
        page.goto(f"{front}/listen{link}", wait_until="commit", timeout=WAIT_MS)

    def ready(self) -> None:
        """Wait for its example clip heard and drawn (checked), then open the uploader."""
        got = self.page.wait_for_function("() => window.__firstChart", timeout=WAIT_MS, polling=200)
        self.first_chart_s = float(got.json_value()) / 1000
        heard = self.page.evaluate("() => window.__listen.heard")
        self.first_heard_s = float(heard) / 1000 if heard is not None else None
        shown = self.page.locator("p", has_text=HEARD).first.inner_text()
        if shown != f"{HEARD} {self.example_heard}":
            self.errors.append(f"example: heard {shown!r}, the engine {self.example_heard!r}")
        self.page.get_by_text("Upload a file").click()
        self.page.get_by_text("Upload a recording of speech").wait_for(timeout=WAIT_MS)

    def give(self, index: int) -> None:
        """Upload clip ``index`` (the clock starts at the file input's change event)."""
        self.page.evaluate(MARK)
        self.page.evaluate("() => { window.__listen.clicked = performance.now(); }")
        main = '[data-testid="stMain"] input[type="file"]'  # the sidebar holds an uploader too
        self.page.locator(main).set_input_files(str(self.clips[index]))
        self.page.evaluate(WATCH)

    def drawn(self, heard: str, busy: bool = False) -> None:
        """Wait for the clip given last to be heard and drawn; record its time (``busy``: in
        a round with the heavy visitor) and check it."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function("() => window.__listen.drawn", timeout=WAIT_MS, polling=100)
        except PlaywrightTimeout:
            self.errors.append(f"clip not heard and drawn in {WAIT_MS} ms: {self.seen()}")
            return
        times = self.page.evaluate("() => window.__listen")
        self.new_clip.add(busy, (times["drawn"] - times.get("given", times["clicked"])) / 1000)
        shown = self.page.locator("p", has_text=HEARD).first.inner_text()
        if shown != f"{HEARD} {heard}":
            self.errors.append(f"heard {shown!r}, the engine {heard!r}")
        if self.page.locator(ERROR).count():
            self.errors.append("an error box on the page")

    def seen(self) -> dict:
        """What the page shows now (for an error message)."""
        return self.page.evaluate(
            f"""() => {{
          const {{ heard, cross }} = ({FIND})();
          return {{ heard: heard && heard.innerText, heardOld: !!(heard && heard.__listenOld),
                   cross: !!cross, crossOld: !!(cross && cross.__listenOld),
                   drawn: cross && cross.dataset.drawn, visible: document.visibilityState,
                   stale: document.querySelectorAll('[data-stale="true"]').length,
                   listen: window.__listen }};
        }}"""
        )


def listeners(count: int, folder: str, rounds: int = 2) -> list[Listener]:
    """``count`` listeners with ``rounds`` clips each, no two clips alike, each arriving on the
    next example clip in turn (the first on the page's default)."""
    paths = clips(folder, count * rounds)
    names = clip_names()[: max(1, count)]
    heard = heard_all([CLIPS / f"{name}.wav" for name in names])
    return [
        Listener(
            i,
            paths[i * rounds : (i + 1) * rounds],
            names[i % len(names)] if i % len(names) else "",
            heard[i % len(names)],
        )
        for i in range(count)
    ]


def heard_all(paths: list[Path]) -> list[str]:
    """What the engine hears in each of ``paths``, Whisper loaded once."""
    from attention_core.models import load_model
    from attention_core.models.whisper.audio import load_audio
    from attention_core.models.whisper.generate import transcribe
    from attention_core.models.whisper.mel import log_mel

    model = load_model("whisper")
    return [transcribe(model, log_mel(load_audio(path).samples_n)).text for path in paths]


def engine_heard(path: Path) -> str:
    """What the engine hears in ``path`` (every uploaded clip of a class is the same speech)."""
    return heard_all([path])[0]
