"""``python -m bench.class_protocol [--students 30] [--listeners 4] [--replicas 2] [--spread 10]
[--compare]``: a class arriving at once on ``./serve.sh``, measured from the server's side (issue
37). Each student is a client speaking the browser's protocol without rendering anything, so the
class costs this machine what it would with the browsers on the students' own laptops.

A student does what Streamlit's frontend and the explorer do on a first visit (as recorded from
Chromium; ``--compare`` checks it again): with a cookie jar of its own (HAProxy's SRV cookie,
Streamlit's XSRF cookie), GET the page (/pattern?layer=0&head=0&s=..., every third reader on
model=smollm2 with ``bench.classroom.texts_for``'s sentences; a listener /listen on an example
clip), GET what index.html names (script, preload and style tags: HAProxy's cache answers), the
frontend's health and host-config probes; open /_stcore/stream with the subprotocols
``streamlit, <XSRF cookie>``, send the BackMsg ``rerun_script`` (query string, page name, context
info) and read ForwardMsgs until the run finished; then POST the blocks the explorer's element
(a bidi component: page token, model, text, header, view) needs for its first draw (the view
layer's scores; none when the data carries them), with the page token. First chart: first GET
to the last byte of those. Then what the page asks after drawing (the cell's "qk", the other
layers' prefetch, a listener's audio), so the server does a first visit's whole work; every
websocket stays open until the whole class has arrived. Arrivals spread evenly over --spread s,
all concurrent, each bounded. Checked: every reader's element holds its own sentence (text,
model, the engine's tokens), every listener's transcript is the engine's, no exception element,
no refused request. The replicas' CPU is read from their clocks over the class.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus, urlsplit

import httpx
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import ClientConnection, connect

from bench.classroom import replica_cpu, texts_for
from bench.explorer import server_cpu_s
from bench.listen import HEARD
from bench.live import rss_mb
from bench.report import load, p50, p95, progress, table

STUDENT_S = 180.0  # one student's first visit, bounded
API = "api/attention/block"
PREFETCH_BYTES = 8 * 2**20  # source.js: the other layers are prefetched up to this
ASSETS = re.compile(r'<(?:script|link)[^>]*?(?:src|href)="\./([^"]+)"')
STREAMS = 6  # Chromium's connections per host: files come this many at a time
CLIENT_NICE = 10  # the clients below the servers: on a class's own laptops they cost it nothing


@dataclass
class Student:
    """One visitor: what it asks for, and what it got."""

    number: int
    path: str  # the page URL (path and query)
    text: str = ""  # a reader's own sentence
    model: str = "whisper"
    tokens: list[str] = field(default_factory=list)  # the engine's tokens of ``text``
    heard: str = ""  # a listener: what the engine hears in its clip
    first_s: float | None = None  # first GET -> the first draw's blocks arrived
    settled_s: float | None = None  # ... -> everything the page asks after drawing
    replica: str | None = None
    errors: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # the BackMsgs it sent (text format)
    posts: list[dict[str, Any]] = field(default_factory=list)  # block request bodies
    elements: list[str] = field(default_factory=list)  # element types received, in order


def rerun_msg(front: str, path: str) -> bytes:
    """The BackMsg the frontend sends once its websocket is open on a first visit."""
    split, msg = urlsplit(path), BackMsg()
    state = msg.rerun_script
    state.query_string, state.page_name = split.query, split.path.strip("/")
    state.widget_states.SetInParent()
    info = state.context_info
    info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
    info.url, info.is_embedded, info.color_scheme = f"{front}{split.path}", False, "light"
    return msg.SerializeToString()


async def fetch_all(http: httpx.AsyncClient, urls: list[str], errors: list[str]) -> None:
    """GET ``urls``, STREAMS at a time, as the browser loads a page's files (read as they
    come, not unzipped: this machine's CPU is the server's); a 5xx goes into ``errors``."""
    gate = asyncio.Semaphore(STREAMS)

    async def one(url: str) -> None:
        async with gate, http.stream("GET", url) as reply:
            async for _ in reply.aiter_raw():
                pass
            if reply.status_code >= 500:
                errors.append(f"HTTP {reply.status_code} GET {url}")

    await asyncio.gather(*(one(u) for u in urls))


def new_element(fwd: ForwardMsg) -> Any:
    """The element a ForwardMsg adds, or None."""
    is_delta = fwd.WhichOneof("type") == "delta"
    return fwd.delta.new_element if is_delta and fwd.delta.HasField("new_element") else None


async def run_script(ws: ClientConnection, front: str, s: Student) -> list[Any]:
    """Send the first rerun, read until its run finished; the elements it sent."""
    msg = rerun_msg(front, s.path)
    s.sent.append(str(BackMsg.FromString(msg)))
    await ws.send(msg)
    found = []
    while True:
        fwd = ForwardMsg.FromString(await ws.recv(decode=False))
        if (element := new_element(fwd)) is not None:
            found.append(element)
            s.elements.append(str(element.WhichOneof("type")))
        done = fwd.WhichOneof("type") == "script_finished"
        if done and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return found


async def post(http: httpx.AsyncClient, s: Student, token: str, body: dict[str, Any]) -> None:
    """One block request as source.js's fetchFloats makes it."""
    s.posts.append(body)
    headers = {"Content-Type": "application/json", "X-Attention-Token": token}
    reply = await http.post(API, content=json.dumps(body, separators=(",", ":")), headers=headers)
    if reply.status_code != 200:
        s.errors.append(f"block {body.get('layer')} {body.get('part')}: HTTP {reply.status_code}")


async def blocks(http: httpx.AsyncClient, s: Student, data: dict[str, Any], t0: float) -> None:
    """The explorer's requests: the view layer's block for its first draw (unless the data
    carries it), then the cell's "qk" (cell.js) and the other layers (prefetchLayers)."""
    token, first, h = data["token"], data["view"]["layer"], data["header"]
    cross = data.get("mode") == "cross"
    part, inline = ("cross", data.get("opening")) if cross else ("scores", data.get("inline"))
    what = {"clip": data.get("clip"), "frames": data.get("frames")} if cross else {}
    what = what or {"text": data["text"]}

    def body(layer: int, part: str) -> dict[str, Any]:
        return {"model": data["model"], **what, "layer": layer, "part": part}

    if not inline:
        await post(http, s, token, body(first, part))
    s.first_s = time.monotonic() - t0
    if inline and not cross:
        return  # a view carrying its scores asks for nothing (view.js)
    floats = h["n_heads"] * h["n_tokens"] * (h.get("n_frames") if cross else h["n_tokens"])

    async def prefetch() -> None:  # one layer after another, when all are small
        if 4 * h["n_layers"] * floats <= PREFETCH_BYTES:
            for layer in (n for n in range(h["n_layers"]) if n != first):
                await post(http, s, token, body(layer, part))

    await asyncio.gather(prefetch(), *([] if cross else [post(http, s, token, body(first, "qk"))]))


def check(s: Student, elements: list[Any]) -> dict[str, Any] | None:
    """The explorer's data (or None), with what is wrong with the page in ``s.errors``."""
    from ui.safe import md  # the page escapes the transcript with it

    if any(e.WhichOneof("type") == "exception" for e in elements):
        s.errors.append("an exception element")
    mounts = [json.loads(e.bidi_component.json) for e in elements if e.HasField("bidi_component")]
    mounts = [d for d in mounts if d.get("mode", "view") in ("view", "cross") and d.get("token")]
    data = mounts[-1] if mounts else None
    bodies = [e.markdown.body for e in elements if e.HasField("markdown")]
    if data is None:
        s.errors.append("no explorer element")
    elif s.heard and f"**{HEARD}** {md(s.heard)}" not in bodies:
        s.errors.append(f"the transcript shown is not the engine's {s.heard!r}")
    elif not s.heard and (data["model"], data["text"]) != (s.model, s.text):
        s.errors.append(f"the element is {data['model']}: {data['text'][:40]!r}, not its own")
    elif not s.heard and data["header"]["tokens"] != s.tokens:
        s.errors.append(f"the element's tokens {data['header']['tokens'][:5]} are not its own")
    return data


async def visit(front: str, s: Student, left: asyncio.Event) -> None:
    """One student's first visit (the module's docstring), timed from its first GET; its
    websocket stays open until ``left`` is set."""
    # Plain HTTP on 127.0.0.1: no TLS (loading the CA bundle cost each client ~30 ms of CPU)
    async with httpx.AsyncClient(base_url=front + "/", timeout=STUDENT_S, verify=False) as http:
        t0 = time.monotonic()
        page = await http.get(s.path.lstrip("/"))
        page.raise_for_status()
        await fetch_all(http, ASSETS.findall(page.text), s.errors)
        under = urlsplit(s.path).path.strip("/")  # the frontend probes the page's path first
        probes = [f"{p}_stcore/{k}" for p in (f"{under}/", "") for k in ("health", "host-config")]
        await fetch_all(http, probes, s.errors)
        s.replica = http.cookies.get("SRV")
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        offered: list[Any] = ["streamlit", http.cookies.get("_streamlit_xsrf", "")]
        async with connect(
            front.replace("http", "ws", 1) + "/_stcore/stream",
            subprotocols=offered,  # the second carries the XSRF token, as the frontend's does
            additional_headers={"Origin": front, "Cookie": cookie},
            max_size=2**28,
            open_timeout=STUDENT_S,
        ) as ws:
            elements = await run_script(ws, front, s)
            if (data := check(s, elements)) is not None:
                await blocks(http, s, data, t0)
            audio = [e.audio.url.lstrip("/") for e in elements if e.HasField("audio")]
            await fetch_all(http, audio, s.errors)
            s.settled_s = time.monotonic() - t0
            await left.wait()


async def arrive(
    front: str, class_: list[Student], spread_s: float, after: Callable[[], Any]
) -> Any:
    """Every student's visit, spread evenly over ``spread_s``; ``after()`` once all have
    settled (their pages still open)."""
    start, gap, left = time.monotonic() + 0.2, spread_s / max(1, len(class_) - 1), asyncio.Event()

    async def bounded(i: int, s: Student) -> None:
        await asyncio.sleep(max(0.0, start + i * gap - time.monotonic()))
        try:
            await asyncio.wait_for(visit(front, s, left), spread_s + STUDENT_S + 10)
        except TimeoutError:
            if s.settled_s is None:
                s.errors.append(f"not settled within {STUDENT_S:.0f} s")
        except Exception as error:  # reported with the figures
            s.errors.append(repr(error)[:300])

    tasks = [asyncio.create_task(bounded(i, s)) for i, s in enumerate(class_)]
    deadline = start + spread_s + STUDENT_S
    while any(s.settled_s is None and not s.errors for s in class_) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    got = after()
    left.set()
    await asyncio.gather(*tasks)
    return got


def class_of(n_students: int, n_listeners: int) -> list[Student]:
    """Readers (every third on SmolLM2) and listeners (each on the next example clip, the first
    on the page's default) spread among them, in order of arrival."""
    from attention_core import load_model, tokenize
    from bench.classroom_listen import heard_all
    from ui.presets import CLIPS, clip_names

    models = {key: load_model(key) for key in ("minilm", "smollm2")}
    everyone = []
    for i in range(n_students):
        key = "smollm2" if i % 3 == 2 else "minilm"
        text = texts_for(models[key], i, 0)[0]
        chosen = "&model=smollm2" if key == "smollm2" else ""
        path = f"/pattern?layer=0&head=0{chosen}&s={quote_plus(text)}"
        everyone.append(Student(i, path, text, key, list(tokenize(models[key], text).tokens)))
    names = clip_names()[: max(1, n_listeners)]
    heard = heard_all([CLIPS / f"{name}.wav" for name in names]) if n_listeners else []
    for j in range(n_listeners):
        link = f"?lis_clip={names[j % len(names)]}" if j % len(names) else ""
        at = round((j + 0.5) * n_students / n_listeners) + j
        everyone.insert(at, Student(n_students + j, "/listen" + link, heard=heard[j % len(names)]))
    return everyone


def measure(students: int, listeners: int, replicas: int, spread_s: float, same: bool) -> dict:
    """Start serve.sh (warmed: "ready:"), let the class arrive; the figures (``same``: then the
    first reader and listener against a real Chromium visit of their pages)."""
    from scripts.live_app import free_port
    from scripts.serving import start_serve, stop_serve, wait_ready

    everyone, port = class_of(students, listeners), free_port()
    front = f"http://127.0.0.1:{port}"
    out = Path(tempfile.mkdtemp(prefix="class-protocol-")) / "serve.out"
    serve = start_serve(port, out, replicas)
    try:
        if not wait_ready(serve, 300) or serve.proc.poll() is not None:
            raise RuntimeError(f"./serve.sh did not start: {serve.text()[-1000:]}")
        time.sleep(2.0)  # its first health checks pass
        os.nice(CLIENT_NICE)  # after serve.sh started: its processes keep their priority
        found = re.search(r"haproxy \S+ started: pid (\d+)", serve.text())
        haproxy = int(found.group(1)) if found else 0
        clocks = lambda: (replica_cpu(serve), server_cpu_s(haproxy), time.process_time())  # noqa: E731
        cpu, before = clocks(), load()
        progress(f"serve.sh ready on {port}; {len(everyone)} arriving over {spread_s:.0f} s")

        def after() -> dict:
            rss = {i: rss_mb(pid)[0] for i, (pid, _) in serve.replicas().items()}
            spent = [b - a for a, b in zip(cpu, clocks(), strict=True)]
            return {"cpu_s": spent, "rss": rss, "load": (before, load())}

        fig = asyncio.run(arrive(front, everyone, spread_s, after))
        firsts = [next((s for s in everyone if bool(s.heard) == kind), None) for kind in (0, 1)]
        fig["same"] = {s.number: compare(front, s) for s in firsts if same and s is not None}
    finally:
        stop_serve(serve)
    return fig | {"everyone": everyone}


def chromium_visit(front: str, path: str) -> tuple[list[str], list[dict], list[str]]:
    """One real Chromium first visit of ``path``: the BackMsgs it sent, its block requests'
    bodies and the element types it received, until its first chart and 3 s after settling."""
    from playwright.sync_api import sync_playwright

    from bench.classroom_listen import FIRST_CHART, GIVEN
    from bench.explorer import FIRST_DRAW, INSTRUMENT, SETTLED
    from scripts.live_app import launch_chromium

    sent: list[str] = []
    posts: list[dict] = []
    kinds: list[str] = []
    listen, wait_ms = path.startswith("/listen"), STUDENT_S * 1000

    def on_ws(ws: Any) -> None:
        def got(payload: bytes) -> None:
            if (element := new_element(ForwardMsg.FromString(payload))) is not None:
                kinds.append(str(element.WhichOneof("type")))

        ws.on("framesent", lambda b: sent.append(str(BackMsg.FromString(b))))
        ws.on("framereceived", got)

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        timed = f"window.__listen = {{}}; {GIVEN} {FIRST_CHART}"
        page.add_init_script(timed if listen else INSTRUMENT)
        page.on("request", lambda r: API in r.url and posts.append(json.loads(r.post_data or "{}")))
        page.on("websocket", on_ws)
        page.goto(front + path, timeout=wait_ms)
        for ready in ["() => window.__firstChart"] if listen else [FIRST_DRAW, SETTLED]:
            page.wait_for_function(ready, timeout=wait_ms, polling=100)
        page.wait_for_timeout(3000)
        browser.close()
    return sent, posts, kinds


def compare(front: str, s: Student) -> list[str]:
    """``s`` (a protocol client after its visit) against a real Chromium visit of its page:
    what differs (nothing: the same BackMsgs, block requests and elements)."""
    sent, posts, kinds = chromium_visit(front, s.path)
    said = [] if sent == s.sent else [f"BackMsgs: Chromium {sent}, the client {s.sent}"]
    asked = [Counter(json.dumps(p, sort_keys=True) for p in ps) for ps in (posts, s.posts)]
    if asked[0] != asked[1]:
        said.append(f"blocks: Chromium {posts}, the client {s.posts}")
    if kinds != s.elements:
        said.append(f"elements: Chromium {kinds}, the client {s.elements}")
    return said


def seconds(xs: list[float | None]) -> str:
    got = [x for x in xs if x is not None]
    return f"{p50(got):.2f} / {p95(got):.2f} s (n={len(got)})" if got else "n/a"


def report(fig: dict, spread_s: float) -> None:
    everyone: list[Student] = fig["everyone"]
    readers, listening = [s for s in everyone if not s.heard], [s for s in everyone if s.heard]
    errors = [f"student {s.number}: {e}" for s in everyone for e in s.errors]
    per_arrival = [f"{cpu / len(everyone) * 1000:.0f} ms" for cpu in fig["cpu_s"]]
    rows = [
        ["readers: first chart p50 / p95", seconds([s.first_s for s in readers])],
        ["readers: every block asked p50 / p95", seconds([s.settled_s for s in readers])],
        ["listeners: first chart p50 / p95", seconds([s.first_s for s in listening])],
        ["listeners: every block and audio p50 / p95", seconds([s.settled_s for s in listening])],
        ["server CPU per arrival: replicas, HAProxy", per_arrival[0] + ", " + per_arrival[1]],
        ["this bench's own CPU per arrival (the clients)", per_arrival[2]],
        ["arrivals per replica", str(sorted(Counter(str(s.replica) for s in everyone).items()))],
        ["RSS per replica after", ", ".join(f"{v:.0f} MB" for v in fig["rss"].values())],
        ["errors", str(len(errors))],
        ["load average before / after", " → ".join(fig["load"])],
    ]
    title = f"{len(readers)} readers and {len(listening)} listeners over {spread_s:.0f} s"
    note = "Targets (issue 37): first chart p95 ≤ 5 s for readers, ≤ 10 s for listeners."
    table(title + ", protocol clients (no browser)", ["", "measured"], rows, note)
    print("\n".join("  " + line for line in errors[:20]))
    for number, said in fig.get("same", {}).items():
        print(f"student {number} against Chromium: " + ("\n".join(said) or "the same"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.class_protocol", description=__doc__)
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--listeners", type=int, default=4)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--spread", type=float, default=10.0)
    parser.add_argument("--compare", action="store_true", help="one student against Chromium")
    args = parser.parse_args(argv)
    fig = measure(args.students, args.listeners, args.replicas, args.spread, args.compare)
    report(fig, args.spread)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
