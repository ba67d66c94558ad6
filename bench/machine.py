"""The machine a benchmark ran on, said in its report: the CPU's model name, its vector
extensions (a figure measured with AVX-512 does not carry over to a CPU without it), its
threads, and the BLAS kernels NumPy picked. Parsed from /proc/cpuinfo (what ``lscpu`` reads)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# The flags that change how fast NumPy's and torch's kernels run, in the order said.
VECTOR_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512dq",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
)


@dataclass(frozen=True)
class Machine:
    """What the report's header says of the CPU."""

    cpu: str  # /proc/cpuinfo's "model name"
    vector: tuple[str, ...]  # the VECTOR_FLAGS it has
    threads: int  # logical processors the OS shows
    blas: str  # NumPy's BLAS and the kernels it picked (threadpoolctl), or ""

    def line(self) -> str:
        blas = f"; NumPy's BLAS: {self.blas}" if self.blas else ""
        return f"CPU {self.cpu}, {self.threads} threads, {' '.join(self.vector) or 'none'}{blas}"

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["vector"] = list(self.vector)
        return out


def parse_cpuinfo(text: str) -> tuple[str, tuple[str, ...], int]:
    """(model name, vector flags present, processor count) from /proc/cpuinfo's text; the first
    processor's name and flags stand for all (they are alike on the machines here)."""
    name, flags, count = "unknown", set[str](), 0
    for line in text.splitlines():
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "processor":
            count += 1
        elif key == "model name" and name == "unknown":
            name = value
        elif key == "flags" and not flags:
            flags = set(value.split())
    return name, tuple(f for f in VECTOR_FLAGS if f in flags), count


def blas_kernels() -> str:
    """NumPy's BLAS library and the architecture it chose, e.g. 'openblas SkylakeX'."""
    try:
        import numpy  # noqa: F401  (threadpoolctl sees only libraries already loaded)
        from threadpoolctl import threadpool_info
    except ImportError:
        return ""
    found = [
        f"{i.get('internal_api')} {i.get('architecture') or ''}".strip()
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return ", ".join(dict.fromkeys(found))


def this_machine(cpuinfo: Path = Path("/proc/cpuinfo")) -> Machine:
    try:
        name, vector, count = parse_cpuinfo(cpuinfo.read_text())
    except OSError:
        name, vector, count = "unknown", (), 0
    return Machine(name, vector, count or os.cpu_count() or 0, blas_kernels())


def describe_machine() -> str:
    """The header line, with the load average now."""
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{this_machine().line()}; load average {load}"
