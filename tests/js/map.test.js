// Map mode's geometry (explorer/js/map.js), against attention_core/methods/pack_map.py's rule.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  assemble,
  blockOf,
  cellTokens,
  headFields,
  plane,
  pooledShape,
  tilesAround,
  tilesOver,
  wholeWindow,
} from "../../explorer/js/map.js";

test("a cell is ceil(longest side / side) tokens a side, the last one smaller", () => {
  assert.equal(blockOf(wholeWindow(2048), 512), 4);
  assert.equal(blockOf(wholeWindow(700), 512), 2);
  assert.equal(blockOf({ r0: 100, r1: 400, c0: 50, c1: 650 }, 512), 2);
  assert.equal(blockOf({ r0: 0, r1: 300, c0: 0, c1: 300 }, 512), 1);
  assert.deepEqual(pooledShape(wholeWindow(701), 2), { rows: 351, cols: 351 });
  assert.deepEqual(cellTokens(wholeWindow(701), 2, 350, 0), { r0: 700, r1: 701, c0: 0, c1: 2 });
});

test("the tiles over a window sit on a fixed grid, clipped to the sentence", () => {
  const tiles = tilesOver({ r0: 200, r1: 300, c0: 0, c1: 10 }, 256, 700);
  assert.deepEqual(
    tiles.map((t) => t.window),
    [
      [0, 256, 0, 256],
      [256, 512, 0, 256],
    ],
  );
  const last = tilesOver({ r0: 690, r1: 700, c0: 690, c1: 700 }, 256, 700);
  assert.deepEqual(last[0].window, [512, 700, 512, 700]);
});

test("the tiles around a window are its neighbours, none of its own", () => {
  const w = { r0: 256, r1: 512, c0: 256, c1: 512 };
  const around = tilesAround(w, 256, 2048).map((t) => `${t.i},${t.j}`);
  assert.equal(around.length, 8);
  assert.ok(!around.includes("1,1"));
  assert.deepEqual(tilesAround(wholeWindow(200), 256, 200), []);
});

test("a window is put together from its tiles row by row", () => {
  const n = 6;
  const full = Float32Array.from({ length: n * n }, (_, i) => i);
  const cut = ([r0, r1, c0, c1]) => {
    const out = [];
    for (let r = r0; r < r1; r++) for (let c = c0; c < c1; c++) out.push(full[r * n + c]);
    return Float32Array.from(out);
  };
  const w = { r0: 1, r1: 5, c0: 2, c1: 6 };
  const tiles = tilesOver(w, 4, n);
  const got = assemble(
    w,
    tiles,
    tiles.map((t) => cut(t.window)),
  );
  assert.deepEqual(Array.from(got), Array.from(cut([1, 5, 2, 6])));
});

test("a request names the view's switches; a map holds the means, then the maxima", () => {
  const view = { layer: 3, head: 2, scale: true, temp: 0.5, causal: true, q: 1 };
  assert.deepEqual(headFields("tile", view, "pattern", [0, 256, 0, 256]), {
    part: "tile",
    layer: 3,
    head: 2,
    stage: "pattern",
    settings: { scale: true, temp: 0.5, causal: true },
    window: [0, 256, 0, 256],
  });
  const block = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(Array.from(plane(block, 2, 2, "mean")), [1, 2, 3, 4]);
  assert.deepEqual(Array.from(plane(block, 2, 2, "max")), [5, 6, 7, 8]);
});
