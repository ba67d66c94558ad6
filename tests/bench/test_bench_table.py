"""The pure parts of ``python -m bench report`` (bench/rows.py): judging a row, the quiet-machine
rule, the Markdown and JSON forms, and the replacement between the markers on a real copy of
docs/PERFORMANCE.md. No timing is asserted (the timings are the benchmark's, not a test's)."""

import json
from pathlib import Path

import pytest

from bench.rows import (
    BEGIN,
    END,
    Quiet,
    Row,
    as_json,
    guarded,
    markdown,
    part_of,
    replace_block,
    reused,
    row,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "PERFORMANCE.md"
QUIET = Quiet((0.2, 0.3, 0.4), (0.1, 0.3, 0.4), 2)


def test_a_row_is_judged_on_its_limit_and_on_its_ratio_to_the_anchor():
    both = row(
        "s", "head", 20.0, "ms", limit=33, anchor=100.0, anchor_label="floor", ratio_limit=0.25
    )
    assert (both.ratio, both.met, both.target) == (0.2, True, "≤ 33.0 ms and ≤ 0.25× anchor")
    assert both.anchor == "floor 100 ms"
    over_ratio = row("s", "head", 30.0, "ms", limit=33, anchor=100.0, ratio_limit=0.25)
    assert over_ratio.met is False  # under the limit, over the ratio: missed
    assert row("s", "x", 2.0, "s", limit=1.0).met is False
    assert row("s", "x", 1.0, "s", limit=1.0).met is True  # "≤" includes the limit
    nothing = row("s", "x", None, "s", limit=1.0, anchor=2.0)
    assert (nothing.ratio, nothing.met) == (None, None)  # not measured: not judged
    no_target = row("s", "x", 5.0, "MB")
    assert (no_target.target, no_target.met, no_target.anchor) == ("", None, "")


@pytest.mark.parametrize(
    ("before", "after", "cores", "suspect", "words"),
    [
        ((0.5, 0, 0), (0.4, 0, 0), 2, False, []),
        ((1.0, 0, 0), (1.0, 0, 0), 2, False, []),  # at cores × 0.5 exactly, and flat: quiet
        ((1.1, 0, 0), (0.2, 0, 0), 2, True, ["1.10 at the start > 1"]),
        ((0.2, 0, 0), (1.5, 0, 0), 2, True, ["1.50 at the end > 1", "rose during the run"]),
        ((0.2, 0, 0), (0.3, 0, 0), 2, True, ["rose during the run (0.20 → 0.30)"]),
        ((13.6, 0, 0), (3.0, 0, 0), 8, True, ["13.60 at the start > 4 (8 cores × 0.5)"]),
    ],
)
def test_the_table_is_suspect_when_the_load_is_high_at_either_end_or_rises(
    before, after, cores, suspect, words
):
    quiet = Quiet(before, after, cores)
    assert quiet.suspect is suspect
    assert all(w in quiet.reason for w in words), quiet.reason
    assert (quiet.reason == "") is (not suspect)


ROWS = [
    row("switch", "head switch, 512 tokens", 58.04, "ms", limit=33, anchor=110.0,
        anchor_label="floor page", ratio_limit=0.25),
    row("load", "MiniLM load", 0.31, "s", limit=0.5),
    Row("class", "fairness", None, "×", target="≤ 2×", note="skipped by --quick"),
]  # fmt: skip


def test_markdown_has_a_row_per_figure_with_target_anchor_ratio_and_verdict():
    text = markdown(ROWS, QUIET, "Title", "2026-11-26 16:00 UTC")
    lines = text.splitlines()
    assert lines[0].startswith("**Title** — 2026-11-26 16:00 UTC; load average (1/5/15 min) ")
    assert "0.20 / 0.30 / 0.40 at the start, 0.10 / 0.30 / 0.40 at the end, 2 cores" in lines[0]
    assert lines[2].startswith("Quiet machine")
    table = [line for line in lines if line.startswith("| ")]
    assert len(table) == 1 + len(ROWS)
    assert table[1] == (
        "| switch | head switch, 512 tokens | 58.0 ms | ≤ 33.0 ms and ≤ 0.25× anchor "
        "| floor page 110 ms | 0.53× | **missed** |"
    )
    assert table[2] == "| load | MiniLM load | 0.310 s | ≤ 0.500 s |  |  | met |"
    assert table[3] == "| class | fairness | n/a (skipped by --quick) | ≤ 2× |  |  |  |"
    assert lines[-1] == "1 of 2 targets met; 3 figures."


def test_a_suspect_table_says_so_and_why():
    text = markdown(ROWS, Quiet((13.6, 14.9, 13.9), (9.0, 12.0, 13.0), 2), "T", "now")
    assert "**Suspect: 1-minute load 13.60 at the start > 1 (2 cores × 0.5); " in text
    assert "1-minute load 9.00 at the end > 1" in text


def test_json_holds_every_row_and_the_load():
    data = json.loads(as_json(ROWS, QUIET, "Title", "when"))
    assert (data["suspect"], data["cores"], data["load_before"]) == (False, 2, [0.2, 0.3, 0.4])
    assert [r["name"] for r in data["rows"]] == [r.name for r in ROWS]
    assert data["rows"][0]["met"] is False and data["rows"][0]["ratio"] == pytest.approx(
        58.04 / 110
    )
    assert data["rows"][2]["measured"] is None


def test_the_block_replaces_what_is_between_the_markers_and_nothing_else(tmp_path):
    original = DOC.read_text()
    copy = tmp_path / "PERFORMANCE.md"
    copy.write_text(original)
    once = replace_block(copy.read_text(), "first table\n")
    assert once.count(BEGIN) == once.count(END) == 1
    assert "first table" in once
    twice = replace_block(once, "second table\n")
    assert "first table" not in twice and "second table" in twice
    assert twice.count(BEGIN) == 1
    # everything outside the markers is the document as it was
    outside = twice[: twice.index(BEGIN)] + twice[twice.index(END) + len(END) :]
    assert outside == once[: once.index(BEGIN)] + once[once.index(END) + len(END) :]
    assert "# The measurement log" in outside


def test_without_markers_the_block_goes_under_the_title():
    assert replace_block("# Performance\n\nprose\n", "t") == (
        f"# Performance\n\n{BEGIN}\nt\n{END}\n\nprose\n"
    )
    with pytest.raises(ValueError, match="one report marker"):
        replace_block(f"# P\n{BEGIN}\n", "t")


def test_a_failing_part_gives_one_na_row_and_the_run_goes_on():
    rows = []
    guarded("ok", rows, lambda: [row("ok", "a", 1.0, "s")])
    guarded("bad", rows, lambda: [][1])
    assert [r.section for r in rows] == ["ok", "bad"]
    assert rows[1].measured is None and rows[1].note.startswith(
        "IndexError: list index out of range"
    )


def test_reused_rows_come_from_the_last_json_by_part_and_say_which_run():
    previous = json.loads(DOC.with_name("performance.json").read_text())
    said = f"from the run of {previous['when']}"
    for part in ("engine", "pages", "class"):
        got = reused(previous, {part})
        assert got, part
        assert all(r.part == part for r in got)
        source = [d for d in previous["rows"] if part_of(d) == part]
        for row_, data in zip(got, source, strict=True):
            if data["note"].startswith("from the run of"):  # reused already: its own run
                assert row_.note == data["note"]
            else:
                assert row_.note.startswith(said) and row_.note.endswith(data["note"])
    every = reused(previous, {"engine", "pages", "listen", "long", "arrivals", "class", "protocol"})
    assert len(every) == len(previous["rows"])  # each row belongs to exactly one part
    again = json.loads(as_json(every, QUIET, "T", "now"))
    assert reused(again, {"class"}) == [r for r in every if r.part == "class"]  # said once


def test_an_older_row_without_its_part_is_placed_by_section_and_name():
    assert part_of({"section": "class", "name": "fairness"}) == "class"
    assert (
        part_of({"section": "whisper", "name": "5 s clip in the Listen page → drawn"}) == "listen"
    )
    assert part_of({"section": "switch", "name": "head switch, 12 tokens"}) == "pages"
    assert part_of({"section": "generation", "name": "generation step in the page"}) == "pages"
    assert part_of({"section": "generation", "name": "engine step at 99 tokens"}) == "engine"
    assert part_of({"section": "memory", "name": "x", "part": "long"}) == "long"
