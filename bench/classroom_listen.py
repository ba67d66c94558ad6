"""The class's listeners: students on the Listen page (Whisper tiny.en) beside the readers of
``bench.classroom``, so the class holds visitors on all three models.

Each listener has its own browser context (its own balancer cookie) and opens /listen, where
the default example clip is transcribed and its cross-attention drawn. In each new-sentence
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
    context: object = None
    page: object = None
    replica: str | None = None
    errors: list[str] = field(default_factory=list)
    first_draw_s: float | None = None
    new_clip: Rounds = field(default_factory=lambda: Rounds())  # seconds, per round

    def open(self, browser, front: str) -> None:
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        page = self.page = self.context.new_page()
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        watch_http(page, self.errors)
        page.add_init_script(f"window.__listen = {{}}; {GIVEN}")
        page.goto(f"{front}/listen?model=whisper", wait_until="commit", timeout=WAIT_MS)

    def ready(self) -> None:
        """Wait for the default clip drawn, then open the uploader."""
        self.first_draw_s = (
            float(self.page.wait_for_function(DRAWN, timeout=WAIT_MS, polling=200).json_value())
            / 1000
        )
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
    """``count`` listeners with ``rounds`` clips each, no two clips alike."""
    paths = clips(folder, count * rounds)
    return [Listener(i, paths[i * rounds : (i + 1) * rounds]) for i in range(count)]


def engine_heard(path: Path) -> str:
    """What the engine hears in ``path`` (every clip of a class is the same speech)."""
    from attention_core.models import load_model
    from attention_core.models.whisper.audio import load_audio
    from attention_core.models.whisper.generate import transcribe
    from attention_core.models.whisper.mel import log_mel

    return transcribe(load_model("whisper"), log_mel(load_audio(path).samples_n)).text
