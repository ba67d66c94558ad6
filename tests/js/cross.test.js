// Cross-attention, tokens × time (explorer/js/crossdata.js): the heads sent with the view,
// the sound strip's columns under the matrix's, seconds on the time axis, the tooltip and the
// cell readout.
import assert from "node:assert/strict";
import { test } from "node:test";

import { layout } from "../../explorer/js/export.js";
import { headRequest } from "../../explorer/js/crossheads.js";
import {
  checkHead,
  crossPeak,
  crossRange,
  crossReadout,
  crossSeconds,
  crossTicks,
  crossTip,
  frameAt,
  frameLeft,
  headKey,
  inlineHeads,
  melRange,
  neighbours,
  stripRows,
  stripTip,
} from "../../explorer/js/crossdata.js";

// One head's rows [2 tokens, 4 frames], each value 10·t + f.
const SHAPE = { nLayers: 2, nHeads: 3, nTokens: 2, nFrames: 4 };
const ROWS = Float32Array.of(0, 1, 2, 3, 10, 11, 12, 13);

test("the heads sent with the view are found by layer and head, each checked", () => {
  const decode = (text) => Float32Array.from(text.split(" ").map(Number));
  const heads = inlineHeads([[1, 2, "0 1 2 3 10 11 12 13"]], SHAPE, decode);
  assert.deepEqual([...heads.keys()], [headKey(1, 2)]);
  assert.deepEqual(heads.get("1,2"), ROWS);
  checkHead(ROWS, SHAPE);
  assert.throws(() => checkHead(ROWS.subarray(1), SHAPE), /7 floats for a head, want 8/);
  assert.throws(() => inlineHeads([[0, 0, "1 2"]], SHAPE, decode), /2 floats/);
  assert.equal(headRequest("ab12", 3, 5), '{"id":"ab12","layer":3,"head":5}');
});

test("the heads fetched ahead are one step from the view, within the model", () => {
  const shape = { nLayers: 4, nHeads: 6 };
  assert.deepEqual(neighbours({ layer: 2, head: 3 }, shape), [
    [2, 4],
    [2, 2],
    [3, 3],
    [1, 3],
  ]);
  assert.deepEqual(neighbours({ layer: 3, head: 0 }, shape), [
    [3, 1],
    [2, 0],
  ]);
});

test("the sound and the matrix put frame f at the same x, and the pointer finds it", () => {
  // 1500 frames over 997 px (not a whole number of px a frame): the strip and the matrix are
  // drawn the same width, so every column's left edge is one number for both
  const width = 997;
  for (const f of [0, 1, 749, 1499]) {
    const left = frameLeft(f, 1500, width);
    const right = frameLeft(f + 1, 1500, width);
    assert.equal(frameAt((left + right) / 2, 1500, width), f);
    assert.equal(frameAt(left + 1e-9, 1500, width), f);
  }
  assert.equal(frameLeft(1500, 1500, width), width);
  assert.equal(frameAt(-0.5, 1500, width), -1);
  assert.equal(frameAt(width, 1500, width), -1);
  // the time ticks sit on the frames' left edges: "1 s" is frame 50 - first
  const [tick] = crossTicks(40, 250, 500);
  assert.equal(frameLeft(tick.at, 250, 500), 20);
});

test("the strip draws high pitches on top, coloured from its lowest to its highest value", () => {
  assert.deepEqual(stripRows(4), [3, 2, 1, 0]);
  assert.deepEqual(melRange(Float32Array.of(-0.5, 1.25, 0.25)), [-0.5, 1.25]);
  assert.deepEqual(melRange(Float32Array.of(0.5, 0.5)), [-0.5, 1.5]); // flat: a range all the same
  assert.equal(stripTip(62, 3), "The sound at 1.30 s–1.32 s (frame 65 of the clip)");
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
