"""CPU groups for the class benchmark: the browsers take only what the servers leave.

In a class the students' browsers run on their own machines; here they share the server's two
cores. A nice value cannot keep them out of the servers' way: niceness is compared across every
thread of the machine, so the server's own low-priority work (the back lane, nice 10) competes
with thirty renderers on equal terms, and Chromium, run as root, raises its GPU process to
nice -8, above the servers. A cgroup's CPU weight is compared between groups first: the browsers'
group as a whole, weight 2 against the servers' 1024, gets a core only when the servers leave
one free, whatever the niceness inside it.

Linux with a writable cgroup file system only (root, cgroup v1's ``cpu`` controller or v2 with
``cpu`` delegated); elsewhere ``CpuGroup.make`` returns None and the callers fall back to nice.
A thread moves itself in (v1 moves threads, and groups nest; v2 moves its whole process, one
group), and what it starts from then on is born inside.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

V1 = Path("/sys/fs/cgroup/cpu")  # cgroup v1's cpu controller
V2 = Path("/sys/fs/cgroup")  # the unified hierarchy
LOW = 2  # the browsers' weight (v1 cpu.shares; the servers' are 1024) ...
LOW_V2 = 1  # ... and in v2 (cpu.weight; the servers' are 100)


@dataclass
class CpuGroup:
    path: Path
    v1: bool

    @staticmethod
    def make(name: str, parent: CpuGroup | None = None, low: bool = True) -> CpuGroup | None:
        """A new group ``name`` (under ``parent``, or the machine's root), its weight LOW, or
        the default one when not ``low``; None where cgroups cannot be written."""
        if parent is not None:
            if not parent.v1:
                return None  # v2 moves whole processes: no group per thread below
            base, v1 = parent.path, True
        elif (V1 / "cpu.shares").exists():
            base, v1 = V1, True
        elif "cpu" in _read(V2 / "cgroup.subtree_control").split():
            base, v1 = V2, False
        else:
            return None
        path = base / name
        try:
            path.mkdir(exist_ok=True)
            if low:
                knob, value = ("cpu.shares", LOW) if v1 else ("cpu.weight", LOW_V2)
                (path / knob).write_text(str(value))
        except OSError:
            return None
        return CpuGroup(path, v1)

    def enter(self) -> bool:
        """Move the calling thread (v1) or its process (v2) into the group."""
        return _move(self.path, self.v1)

    def leave(self) -> None:
        """Move the calling thread (or process) back to the root group."""
        _move(V1 if self.v1 else V2, self.v1)

    def weight(self) -> str:
        """The low groups' CPU weight against the servers', in words."""
        return f"{LOW} against the servers' 1024" if self.v1 else f"{LOW_V2} against their 100"

    def remove(self) -> None:
        """Remove the group and the groups under it, once nothing runs in them (best effort:
        a group still holding a process stays; it is empty and costs nothing)."""
        for path in sorted(self.path.glob("**/"), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                path.rmdir()


def _move(group: Path, v1: bool) -> bool:
    """Write the calling thread's id (v1) or the process's (v2) into ``group``; False if
    refused."""
    try:
        if v1:
            (group / "tasks").write_text(str(threading.get_native_id()))
        else:
            (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return False
    return True


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
