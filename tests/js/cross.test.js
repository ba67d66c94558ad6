// Cross-attention, tokens × time (explorer/js/crossdata.js): slicing one head out of
// [layer, head, token, frame], seconds on the time axis, the tooltip and the cell readout.
import assert from "node:assert/strict";
import { test } from "node:test";

import { layout } from "../../explorer/js/export.js";
import {
  checkCross,
  crossPeak,
  crossRange,
  crossReadout,
  crossRows,
  crossSeconds,
  crossTicks,
  crossTip,
} from "../../explorer/js/crossdata.js";

// [2 layers, 3 heads, 2 tokens, 4 frames], each value 1000·l + 100·h + 10·t + f.
const SHAPE = { nLayers: 2, nHeads: 3, nTokens: 2, nFrames: 4 };
function pattern() {
  const out = new Float32Array(2 * 3 * 2 * 4);
  let i = 0;
  for (let l = 0; l < 2; l++)
    for (let h = 0; h < 3; h++)
      for (let t = 0; t < 2; t++)
        for (let f = 0; f < 4; f++) out[i++] = 1000 * l + 100 * h + 10 * t + f;
  return out;
}

test("one head's rows come out of [layer, head, token, frame] in order", () => {
  const p = pattern();
  checkCross(p, SHAPE);
  assert.throws(() => checkCross(p.subarray(1), SHAPE), /47 floats, want 48/);
  assert.deepEqual(
    [...crossRows(p, SHAPE, 1, 2)],
    [1200, 1201, 1202, 1203, 1210, 1211, 1212, 1213],
  );
  assert.deepEqual([...crossRows(p, SHAPE, 0, 0)].slice(4), [10, 11, 12, 13]);
});

test("frames are 20 ms, counted from the span's first frame in the clip", () => {
  assert.equal(crossSeconds(0, 0), 0);
  assert.equal(crossSeconds(62, 0), 1.24);
  assert.equal(crossSeconds(50, 13), 1.26);
  assert.equal(crossSeconds(0, 1500), 30);
});

test("time ticks fall on round seconds, as fine as the width allows", () => {
  // 250 frames (5 s) over 500 px: 2 px a frame; 0.5 s would be 50 px apart, too close
  const ticks = crossTicks(40, 250, 500);
  assert.deepEqual(ticks.slice(0, 2), [
    { at: 10, text: "1 s" },
    { at: 60, text: "2 s" },
  ]);
  assert.deepEqual(ticks.at(-1), { at: 210, text: "5 s" });
  const whole = crossTicks(0, 1500, 800).map((t) => t.text); // 30 s over 800 px
  assert.deepEqual(whole, ["0 s", "5 s", "10 s", "15 s", "20 s", "25 s", "30 s"]);
  assert.deepEqual(crossTicks(3, 6, 600), [{ at: 2, text: "0.1 s" }]); // 100 px a frame
});

test("the tooltip gives the token, the time in seconds and the weight to 3 decimals", () => {
  assert.equal(
    crossTip(["▁the", "▁river"], 62, 1, 3, 0.12345),
    "“▁river” (token 1) at 1.30 s: 0.123",
  );
});

test("the readout names the cell, its moment and the token's peak", () => {
  const rows = new Float32Array([0.1, 0.7, 0.2, 0, 0.05, 0.05, 0.1, 0.8]);
  const view = { layer: 3, head: 0, token: 1 };
  const picked = crossReadout(["▁a", "<b>"], 100, view, rows, 4, 2);
  assert.deepEqual(picked.cell, {
    layer: 3,
    head: 0,
    token: 1,
    frame: 102,
    seconds: 2.04,
    value: rows[6],
  });
  assert.equal(
    picked.lines[0],
    "Layer 3, head 0: token 1 “<b>” gives the moment 2.04 s–2.06 s (frame 102 of the clip) a weight of 0.100000.",
  );
  assert.equal(picked.lines[1], "Its largest weight over the speech: 0.800 at 2.06 s.");
  const peak = crossReadout(["▁a", "<b>"], 100, { ...view, token: 0 }, rows, 4, -1);
  assert.equal(peak.cell.frame, 101);
  assert.deepEqual(crossPeak(rows, 4, 0), { frame: 1, value: rows[1] });
});

test("an export panel may name its own rows and columns", () => {
  const panel = {
    title: "x",
    rows: [0, 1],
    cols: [0, 1, 2],
    rowNames: ["a", "b"],
    colNames: ["0 s", "1 s", "2 s"],
  };
  const [p] = layout({ title: "t", tokens: ["no"], panels: [panel] }).panels;
  assert.deepEqual(
    p.rowLabels.map((l) => l.text),
    ["a", "b"],
  );
  assert.deepEqual(
    p.colLabels.map((l) => l.text),
    ["0 s", "1 s", "2 s"],
  );
});

test("a head is coloured from 0 to its own largest weight (1 when every weight is 0)", () => {
  assert.deepEqual(crossRange(Float32Array.of(0.02, 0.19, 0.05)), [0, Math.fround(0.19)]);
  assert.deepEqual(crossRange(new Float32Array(4)), [0, 1]);
});
