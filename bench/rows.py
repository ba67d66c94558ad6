"""The performance table's rows and its writers (``python -m bench report``, bench/table.py):
a Row per figure, the quiet-machine rule, the Markdown and JSON forms, and the replacement of
the block between two marker comments in docs/PERFORMANCE.md. Pure: no timing here."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, TypeVar

BEGIN = "<!-- bench report: begin -->"
END = "<!-- bench report: end -->"
T = TypeVar("T")
QUIET_FACTOR = 0.5  # a 1-minute load above cores × this, at either end, makes figures suspect


@dataclass(frozen=True)
class Row:
    """One figure: ``measured`` in ``unit`` (None: not measured, ``note`` says why), its target
    as text, its anchor measured in the same run as text, ``ratio`` measured ÷ anchor, and
    whether the target was met (None: no target, or nothing to judge)."""

    section: str
    name: str
    measured: float | None
    unit: str
    target: str = ""
    anchor: str = ""
    ratio: float | None = None
    met: bool | None = None
    note: str = ""
    part: str = ""  # the report's part that measured it (bench/table.py: engine, pages, …)


@dataclass
class Quiet:
    """The load averages (1, 5, 15 min) at the start and the end of the run, and the verdict."""

    before: tuple[float, float, float]
    after: tuple[float, float, float]
    cores: int
    suspect: bool = field(init=False)
    reason: str = field(init=False)

    def __post_init__(self) -> None:
        self.suspect, self.reason = suspect(self.before, self.after, self.cores)


def suspect(before: Sequence[float], after: Sequence[float], cores: int) -> tuple[bool, str]:
    """(suspect?, why): the 1-minute load above ``cores`` × QUIET_FACTOR at either end, or
    higher at the end than at the start (other work came in during the run)."""
    limit = cores * QUIET_FACTOR
    reasons = [
        f"1-minute load {load[0]:.2f} at the {when} > {limit:g} ({cores} cores × 0.5)"
        for when, load in (("start", before), ("end", after))
        if load[0] > limit
    ]
    if after[0] > before[0]:
        reasons.append(f"the load rose during the run ({before[0]:.2f} → {after[0]:.2f})")
    return bool(reasons), "; ".join(reasons)


def row(
    section: str,
    name: str,
    value: float | None,
    unit: str,
    *,
    limit: float | None = None,
    anchor: float | None = None,
    anchor_label: str = "",
    ratio_limit: float | None = None,
    note: str = "",
) -> Row:
    """A Row judged on its limit (``value`` ≤ ``limit``, in ``unit``) and on its ratio to the
    anchor (≤ ``ratio_limit``), both when both are given; the target text says which."""
    ratio = value / anchor if value is not None and anchor else None
    checks, target = [], []
    if limit is not None:
        target.append(f"≤ {show(limit, unit)}")
        checks.append(None if value is None else value <= limit)
    if ratio_limit is not None:
        target.append(f"≤ {ratio_limit:g}× anchor")
        checks.append(None if ratio is None else ratio <= ratio_limit)
    met = None if not checks or None in checks else all(checks)
    label = f"{anchor_label} {show(anchor, unit)}" if anchor is not None else anchor_label
    return Row(section, name, value, unit, " and ".join(target), label.strip(), ratio, met, note)


def show(value: float | None, unit: str) -> str:
    """A figure in its unit, with as many digits as it deserves."""
    if value is None:
        return "n/a"
    if unit == "×":
        return f"{value:.2f}×"
    size = abs(value)
    digits = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else 3
    return f"{value:.{digits}f} {unit}"


def verdict(met: bool | None) -> str:
    return "" if met is None else "met" if met else "**missed**"


def markdown(rows: Sequence[Row], quiet: Quiet, title: str, when: str, machine: str = "") -> str:
    """The table as Markdown: a headline saying what the run was, on which machine (``machine``:
    the CPU, its vector extensions, its threads) and whether it is suspect, then one table with
    a row per figure, grouped by section."""
    state = (
        f"**Suspect: {quiet.reason}.** Ratios are measured within the run, so they hold better "
        "than the absolute times; re-run on a quiet machine before quoting a figure."
        if quiet.suspect
        else "Quiet machine: the 1-minute load stayed at most "
        f"{quiet.cores * QUIET_FACTOR:g} ({quiet.cores} cores × 0.5) and did not rise."
    )
    lines = [
        f"**{title}** — {when}; load average (1/5/15 min) "
        f"{_load(quiet.before)} at the start, {_load(quiet.after)} at the end, "
        f"{quiet.cores} cores.",
        *([f"Machine: {machine}."] if machine else []),
        "",
        state,
        "",
        "| section | figure | measured | target | anchor (same run) | ÷ anchor | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        measured = show(row.measured, row.unit) + (f" ({row.note})" if row.note else "")
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}×"
        cells = [row.section, row.name, measured, row.target, row.anchor, ratio, verdict(row.met)]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    met = sum(r.met is True for r in rows)
    judged = sum(r.met is not None for r in rows)
    lines += ["", f"{met} of {judged} targets met; {len(rows)} figures."]
    return "\n".join(lines) + "\n"


def _load(xs: Sequence[float]) -> str:
    return " / ".join(f"{x:.2f}" for x in xs)


def as_json(
    rows: Sequence[Row], quiet: Quiet, title: str, when: str, machine: dict[str, Any] | None = None
) -> str:
    data = {
        "title": title,
        "when": when,
        "machine": machine or {},
        "load_before": list(quiet.before),
        "load_after": list(quiet.after),
        "cores": quiet.cores,
        "suspect": quiet.suspect,
        "reason": quiet.reason,
        "rows": [asdict(r) for r in rows],
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


# Rows written before they carried their part: told apart by section and name.
_PAGE_SECTIONS = ("new sentence", "switch", "cold start")


def part_of(data: dict[str, Any]) -> str:
    """The part of the report a row (as JSON) came from: its own ``part``, or for an older row
    its section and name (the class's rows, the Listen page's, the pages', else the engine's)."""
    if data.get("part"):
        return str(data["part"])
    section, name = data["section"], data["name"]
    if section == "class":
        return "class"
    if "Listen page" in name:
        return "listen"
    if section in _PAGE_SECTIONS or "in the page" in name or "the app's server" in name:
        return "pages"
    return "engine"


def reused(previous: dict[str, Any], parts: set[str]) -> list[Row]:
    """The rows of an earlier report (its JSON) that the parts in ``parts`` measured, each
    note saying which run and what load (the table's header speaks of this run only)."""
    load = previous.get("load_before", [0.0])[0], previous.get("load_after", [0.0])[0]
    said = f"from the run of {previous.get('when', '?')}, load {load[0]:.2f} → {load[1]:.2f}"
    names = {f.name for f in fields(Row)}
    out = []
    for data in previous.get("rows", []):
        if part_of(data) in parts:
            row = Row(**{k: v for k, v in data.items() if k in names})
            note = f"{said}; {row.note}" if row.note else said
            if row.note.startswith("from the run of"):  # reused before: its run said already
                note = row.note
            out.append(replace(row, note=note, part=part_of(data)))
    return out


def replace_block(text: str, block: str) -> str:
    """``text`` with everything between BEGIN and END replaced by ``block``; when the markers
    are missing, the block (with its markers) goes after the first heading line."""
    wrapped = f"{BEGIN}\n{block.rstrip()}\n{END}"
    start, end = text.find(BEGIN), text.find(END)
    if start >= 0 and end > start:
        return text[:start] + wrapped + text[end + len(END) :]
    if start >= 0 or end >= 0:
        raise ValueError("docs/PERFORMANCE.md holds one report marker without the other")
    head, _, rest = text.partition("\n")
    if head.startswith("# "):
        return f"{head}\n\n{wrapped}\n{rest}"
    return f"{wrapped}\n\n{text}"


def attempt(section: str, rows: list[Row], part: Callable[[], T]) -> T | None:
    """Run one part of the report and return what it measured; on an error, None and one n/a
    row naming it, and the run goes on (a benchmark reports, it does not stop at a failure)."""
    started = time.monotonic()
    try:
        return part()
    except Exception as err:
        traceback.print_exc()
        why = " ".join(f"{type(err).__name__}: {err}".split())[:160]
        rows.append(Row(section, "(this part failed)", None, "", note=why))
        return None
    finally:
        print(f"  [{section}: {time.monotonic() - started:.0f} s]", flush=True)


def guarded(section: str, rows: list[Row], part: Callable[[], list[Row]]) -> None:
    """``attempt`` a part that gives rows, and add them."""
    rows += attempt(section, rows, part) or []
