"""bench.cpu_groups: the class benchmark's browsers go into a low-weight CPU group, and what
they start is born inside it. Skipped where cgroups cannot be written (not root, no cgroup v1
cpu controller or v2 cpu delegation): the benchmark then falls back to nice and says so."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from bench.cpu_groups import LOW, LOW_V2, CpuGroup


def cgroup_of_text(text: str) -> str:
    """The cpu controller's group in a /proc/.../cgroup text (v1), or the unified one (v2)."""
    lines = text.splitlines()
    cpu = [x for x in lines if x.split(":")[1].split(",").count("cpu")]
    return (cpu or [x for x in lines if x.startswith("0::")])[0].split(":", 2)[2]


def cgroup_of(path: str) -> str:
    return cgroup_of_text(Path(path).read_text())


@pytest.fixture
def group():
    made = CpuGroup.make(f"attention-test-{os.getpid()}")
    if made is None:
        pytest.skip("no writable cgroup here")
    yield made
    made.remove()
    assert not made.path.exists()


def test_a_thread_and_what_it_starts_run_in_the_low_group(group):
    knob, value = ("cpu.shares", LOW) if group.v1 else ("cpu.weight", LOW_V2)
    assert int((group.path / knob).read_text()) == value
    seen: dict[str, str] = {}

    def inside() -> None:
        assert group.enter()
        seen["thread"] = cgroup_of(f"/proc/self/task/{threading.get_native_id()}/cgroup")
        child = subprocess.run(["cat", "/proc/self/cgroup"], capture_output=True, text=True)
        seen["child"] = cgroup_of_text(child.stdout)
        group.leave()
        seen["after"] = cgroup_of(f"/proc/self/task/{threading.get_native_id()}/cgroup")

    worker = threading.Thread(target=inside)
    worker.start()
    worker.join(30)
    name = "/" + group.path.name
    assert seen["thread"].endswith(name) and seen["child"].endswith(name), seen
    assert not seen["after"].endswith(name), seen
    if group.v1:  # v1 moves one thread: this one never moved
        assert not cgroup_of(f"/proc/self/task/{threading.get_native_id()}/cgroup").endswith(name)


def test_groups_nest_with_their_own_weights(group):
    if not group.v1:
        assert CpuGroup.make("below", group) is None  # v2: one group per process only
        return
    readers, below = CpuGroup.make("readers", group, low=False), CpuGroup.make("heavy", group)
    assert readers is not None and below is not None
    assert int((readers.path / "cpu.shares").read_text()) == 1024  # the default
    assert int((below.path / "cpu.shares").read_text()) == LOW
