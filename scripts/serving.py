"""Run ./serve.sh from Python and watch what it started: its replicas (pid, port), the process
tree, a stop that leaves nothing behind. Shared by the failover test, the classroom load test
and ``python -m bench classroom``; everything listens on 127.0.0.1 and every wait is bounded.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scripts.live_app import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

STOP_S = 30  # serve.sh stops its children within 10 s (then SIGKILL); this bounds the whole stop


@dataclass
class Serve:
    """A running ./serve.sh: its process, its output file and what that output says."""

    proc: subprocess.Popen[bytes]
    port: int
    out: Path
    seen: dict[int, str] = field(default_factory=dict)  # pid -> start time: all it ever ran

    def text(self) -> str:
        return self.out.read_text(errors="replace")

    def replicas(self) -> dict[int, tuple[int, int]]:
        """Replica number -> (pid, port) of its latest start, from serve.sh's log lines."""
        found = re.findall(r"replica (\d+) started: pid (\d+), port (\d+)", self.text())
        return {int(i): (int(pid), int(port)) for i, pid, port in found}

    def run_dir(self) -> Path:
        found = re.search(r"logs and config: (\S+)", self.text())
        if found is None:
            raise RuntimeError("serve.sh has not said where its logs are yet")
        return Path(found.group(1))

    def remember_children(self) -> None:
        for pid in descendants(self.proc.pid):
            self.seen.setdefault(pid, start_time(pid))


def start_time(pid: int) -> str:
    """The process's start time (field 22 of /proc/pid/stat): tells a reused pid apart."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def parent_and_state(pid: int) -> tuple[int, str]:
    try:
        state, ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[:2]
    except (OSError, ValueError):
        return -1, ""
    return int(ppid), state


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            children.setdefault(parent_and_state(int(entry.name))[0], []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def alive(pid: int, started: str) -> bool:
    return start_time(pid) == started and parent_and_state(pid)[1] not in ("Z", "")


def wait_until(
    ok: Callable[[], object],
    timeout_s: float,
    pause: Callable[[], object] = lambda: time.sleep(0.25),
) -> bool:
    """Poll ``ok`` until it holds (True) or ``timeout_s`` passed (False). Pass a page's
    ``wait_for_timeout`` as ``pause`` while browser events must keep arriving."""
    deadline = time.monotonic() + timeout_s
    while not ok():
        if time.monotonic() > deadline:
            return False
        pause()
    return True


def http_status(url: str) -> int | str:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status
    except OSError as error:
        return repr(error)


def start_serve(
    port: int, out: Path, replicas: int = 2, env: dict[str, str] | None = None
) -> Serve:
    """./serve.sh on 127.0.0.1:``port``, its output into ``out``; ``env`` added to ours (e.g.
    ATTENTION_FAULT_HOOKS=1, which its replicas inherit)."""
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [str(ROOT / "serve.sh"), "--replicas", str(replicas), "--port", str(port)],
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C of pytest reaches it only through our SIGTERM
        )
    return Serve(proc, port, out)


def stop_serve(serve: Serve) -> tuple[int | None, list[int]]:
    """SIGTERM to serve.sh alone; its exit code and the pids it left behind (killed here)."""
    serve.remember_children()
    if serve.proc.poll() is None:
        serve.proc.send_signal(signal.SIGTERM)
    try:
        code = serve.proc.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        code = None
    left = [pid for pid, started in serve.seen.items() if alive(pid, started)]
    for pid in left:  # only processes serve.sh started (pid and start time recorded)
        os.kill(pid, signal.SIGKILL)
    if code is None:
        serve.proc.kill()
        serve.proc.wait(timeout=10)
    return code, left


def haproxy_servers(serve: Serve) -> dict[str, dict[str, str]]:
    """HAProxy's view of each replica ("r1", ...): its ``show stat`` row by column name (status
    UP / DOWN, slim: its connection limit, ...), read from the run's stats socket."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        sock.connect(str(serve.run_dir() / "haproxy.sock"))
        sock.sendall(b"show stat\n")
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    header, *rows = reply.decode().lstrip("# ").splitlines()
    names = header.split(",")
    found = (dict(zip(names, row.split(","), strict=False)) for row in rows if row)
    return {r["svname"]: r for r in found if r["pxname"] == "replicas" and r["svname"] != "BACKEND"}


def srv_cookie(context: BrowserContext) -> str | None:
    return next((c["value"] for c in context.cookies() if c["name"] == "SRV"), None)


def wait_ready(serve: Serve, timeout_s: float) -> bool:
    """Until serve.sh says "ready:" (every replica healthy, HAProxy up), or it exited."""
    return wait_until(lambda: "ready:" in serve.text() or serve.proc.poll() is not None, timeout_s)
