// Cross-attention, tokens × time, on the explorer's common parts: a clip's layer block asked
// for over the text models' route (protocol.js, source.js), a head cut out of it and a row's
// peak (stages.js), the colour ranges (draw.js), the columns shared by the sound strip and the
// matrix and the time axis (labels.js), and the words: seconds, title, tooltips, readout
// (words.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { colourRange, fullRange } from "../../explorer/js/draw.js";
import { layout } from "../../explorer/js/export.js";
import { slotAt, slotLeft, timeTicks } from "../../explorer/js/labels.js";
import { clipRequest } from "../../explorer/js/protocol.js";
import {
  BlockCache,
  askOnce,
  clipSource,
  createSource,
  layerFloats,
  prefetchLayers,
  PREFETCH_BYTES,
} from "../../explorer/js/source.js";
import { crossHead, rowPeak } from "../../explorer/js/stages.js";
import {
  crossReadout,
  crossTip,
  crossTitle,
  frameSeconds,
  loadStatus,
  stripTip,
} from "../../explorer/js/words.js";

// A layer block [3 heads, 2 tokens, 4 frames], each value 100·h + 10·t + f.
const HEADER = { n_layers: 4, n_heads: 3, n_tokens: 2, n_frames: 4, first: 40 };
const BLOCK = Float32Array.from({ length: 24 }, (_, i) => {
  const [h, t, f] = [Math.floor(i / 8), Math.floor(i / 4) % 2, i % 4];
  return 100 * h + 10 * t + f;
});

test("a clip's layer is asked for over the text models' route, all its heads at once", async () => {
  assert.equal(
    clipRequest("whisper", "ab:40-290", 3, "cross", [40, 290]),
    '{"model":"whisper","clip":"ab:40-290","layer":3,"part":"cross","frames":[40,290]}',
  );
  const seen = [];
  const real = globalThis.fetch;
  globalThis.fetch = async (url, init) => {
    seen.push([url, init.headers["X-Attention-Token"], JSON.parse(init.body)]);
    return new Response(BLOCK.buffer.slice(0), { status: 200 });
  };
  try {
    const data = { api: "api/b", model: "whisper", clip: "ab:40-44", frames: [40, 44] };
    const source = clipSource({ ...data, token: "tok" });
    assert.deepEqual(await source.block(3, "cross"), BLOCK);
    assert.deepEqual(source.peek(3, "cross"), BLOCK); // kept: a head switch asks nothing
    const body = { model: "whisper", clip: "ab:40-44", layer: 3, part: "cross", frames: [40, 44] };
    assert.deepEqual(seen, [["api/b", "tok", body]]);
  } finally {
    globalThis.fetch = real;
  }
});

test("a head is cut out of the layer's block, which must hold heads × tokens × frames", () => {
  assert.deepEqual([...crossHead(BLOCK, HEADER, 2)], [200, 201, 202, 203, 210, 211, 212, 213]);
  assert.throws(
    () => crossHead(BLOCK.subarray(1), HEADER, 0),
    /cross-attention: 23 floats for a layer, want 24/,
  );
  const rows = Float32Array.of(0.1, 0.7, 0.2, 0.7, 0.05, 0.05, 0.1, 0.8);
  assert.deepEqual(rowPeak(rows, 4, 0), { col: 1, value: rows[1] }); // the first of a tie
  assert.deepEqual(rowPeak(rows, 4, 1), { col: 3, value: rows[7] });
});

test("a head is coloured from 0 to its own largest weight, the sound from lowest to highest", () => {
  const all = (n) => [...Array(n).keys()];
  const rows = Float32Array.of(0.02, 0.19, 0.05, 0.01);
  assert.deepEqual(colourRange("cross", rows, 2, all(2), all(2)), [0, Math.fround(0.19)]);
  assert.deepEqual(colourRange("cross", new Float32Array(4), 2, all(2), all(2)), [0, 1]);
  assert.deepEqual(fullRange(Float32Array.of(-0.5, 1.25, 0.25)), [-0.5, 1.25]);
  assert.deepEqual(fullRange(Float32Array.of(0.5, 0.5)), [-0.5, 1.5]); // flat: centred
});

test("the sound and the matrix put frame f at the same x, and the pointer finds it", () => {
  // 1500 frames over 997 px (not a whole number of px a frame): the strip and the matrix are
  // drawn the same width, so every column's left edge is one number for both
  const width = 997;
  for (const f of [0, 1, 749, 1499]) {
    const left = slotLeft(f, 1500, width);
    const right = slotLeft(f + 1, 1500, width);
    assert.equal(slotAt((left + right) / 2, 1500, width), f);
    assert.equal(slotAt(left + 1e-9, 1500, width), f);
  }
  assert.equal(slotLeft(1500, 1500, width), width);
  assert.equal(slotAt(-0.5, 1500, width), -1);
  assert.equal(slotAt(width, 1500, width), -1);
  // the time ticks sit on the frames' left edges: "1 s" is frame 50 - first
  const [tick] = timeTicks(40, 250, 500);
  assert.equal(slotLeft(tick.at, 250, 500), 20);
});

test("frames are 20 ms, counted from the span's first frame in the clip", () => {
  assert.equal(frameSeconds(0, 0), 0);
  assert.equal(frameSeconds(62, 0), 1.24);
  assert.equal(frameSeconds(50, 13), 1.26);
  assert.equal(frameSeconds(0, 1500), 30);
});

test("time ticks fall on round seconds, as fine as the width allows", () => {
  // 250 frames (5 s) over 500 px: 2 px a frame; 0.5 s would be 50 px apart, too close
  const ticks = timeTicks(40, 250, 500);
  assert.deepEqual(ticks.slice(0, 2), [
    { at: 10, text: "1 s" },
    { at: 60, text: "2 s" },
  ]);
  assert.deepEqual(ticks.at(-1), { at: 210, text: "5 s" });
  const whole = timeTicks(0, 1500, 800).map((t) => t.text); // 30 s over 800 px
  assert.deepEqual(whole, ["0 s", "5 s", "10 s", "15 s", "20 s", "25 s", "30 s"]);
  assert.deepEqual(timeTicks(3, 6, 600), [{ at: 2, text: "0.1 s" }]); // 100 px a frame
});

test("the title marks the model's alignment heads; the status says why a layer is missing", () => {
  const named = new Set(["3,0", "2,5"]);
  assert.equal(crossTitle({ layer: 3, head: 0 }, named), "Layer 3, head 0 (an alignment head)");
  assert.equal(crossTitle({ layer: 3, head: 1 }, named), "Layer 3, head 1");
  assert.equal(loadStatus(2, true), "loading layer 2…");
  assert.equal(loadStatus(2, false), "");
  const gone = "The server no longer holds this clip's cross-attention. Reload the page.";
  assert.equal(loadStatus(2, true, gone), `Could not load layer 2: ${gone}`);
  assert.equal(
    loadStatus(2, true, "the server answered 502"),
    "Could not load layer 2: the server answered 502.",
  );
});

test("the tooltips give the token, the moment in seconds and the weight to 3 decimals", () => {
  assert.equal(
    crossTip(["▁the", "▁river"], 62, 1, 3, 0.12345),
    "“▁river” (token 1) at 1.30 s: 0.123",
  );
  assert.equal(stripTip(62, 3), "The sound at 1.30 s–1.32 s");
});

test("the readout names the cell, its moment and the token's peak", () => {
  const rows = new Float32Array([0.1, 0.7, 0.2, 0, 0.05, 0.05, 0.1, 0.8]);
  const view = { layer: 3, head: 0, token: 1, frame: 2 };
  const picked = crossReadout(["▁a", "<b>"], 100, view, rows, 4, rowPeak(rows, 4, 1));
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
    "Layer 3, head 0: token 1 “<b>” gives the moment 2.04 s–2.06 s a weight of 0.100.",
  );
  assert.equal(picked.lines[1], "Its largest weight over the speech: 0.800 at 2.06 s.");
  const unpicked = { ...view, token: 0, frame: -1 }; // the token's own peak
  const peak = crossReadout(["▁a", "<b>"], 100, unpicked, rows, 4, rowPeak(rows, 4, 0));
  assert.equal(peak.cell.frame, 101);
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

test("a view asks for a block once while it comes, and prefetches small clips' layers", async () => {
  const asked = [];
  const cache = new BlockCache();
  const source = createSource(
    `c${Math.random()}`,
    (layer, part) => {
      asked.push([layer, part]);
      return Promise.resolve(new Float32Array(4));
    },
    cache,
  );
  const pending = new Set();
  let arrived = 0;
  askOnce(source, pending, 1, "cross", () => arrived++);
  askOnce(source, pending, 1, "cross", () => arrived++); // on its way: not asked again
  assert.deepEqual(asked, [[1, "cross"]]);
  await source.block(1, "cross");
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(arrived, 1);
  assert.equal(pending.size, 0);
  const clip = { n_layers: 4, n_heads: 6, n_tokens: 10, n_frames: 250 }; // 60 kB a layer
  assert.equal(layerFloats(clip, ["cross"]), 6 * 10 * 250);
  prefetchLayers(source, clip, 1, ["cross"]);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(asked, [
    [1, "cross"],
    [0, "cross"],
    [2, "cross"],
    [3, "cross"],
  ]);
  const long = { ...clip, n_tokens: 100, n_frames: 1500 }; // 3.6 MB a layer: asked as viewed
  assert.ok(4 * 4 * layerFloats(long, ["cross"]) > PREFETCH_BYTES);
  prefetchLayers(
    createSource("long", () => assert.fail("prefetched"), cache),
    long,
    0,
    ["cross"],
  );
});

test("the opening layer sent with the page is taken as fetched: nothing asked for it", async () => {
  const asked = [];
  const source = createSource(`seed${Math.random()}`, (layer, part) => {
    asked.push([layer, part]);
    return Promise.resolve(new Float32Array(4));
  });
  source.seed(3, "cross", BLOCK);
  assert.equal(source.peek(3, "cross"), BLOCK);
  assert.equal(await source.block(3, "cross"), BLOCK);
  assert.deepEqual(asked, []);
  await source.block(2, "cross");
  assert.deepEqual(asked, [[2, "cross"]]);
});
