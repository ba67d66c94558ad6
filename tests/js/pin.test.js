// A pinned token in the all-heads grid (explorer/js/pin.js): its row or column from a full
// pattern, from a pooled thumbnail, the strongest entry and what the tooltip says.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  blockSpan,
  pinStrip,
  pinText,
  pooledIndex,
  pooledStrip,
  strongest,
} from "../../explorer/js/pin.js";
import { poolPattern } from "../../explorer/js/stages.js";

// A 4-token pattern; rows are queries and sum to 1.
const N = 4;
const PATTERN = Float64Array.from(
  [
    [1, 0, 0, 0],
    [0.5, 0.5, 0, 0],
    [0.1, 0.6, 0.3, 0],
    [0.4, 0.1, 0.2, 0.3],
  ].flat(),
);
const TOKENS = ["[CLS]", "it", "<b>cat</b>", "[SEP]"];

test("a pinned token's row: what it attends to", () => {
  assert.deepEqual(Array.from(pinStrip(PATTERN, N, [0, 1, 2, 3], 2, "row")), [0.1, 0.6, 0.3, 0]);
  // Only the shown tokens (here [CLS]/[SEP] hidden), in their order.
  assert.deepEqual(Array.from(pinStrip(PATTERN, N, [1, 2], 2, "row")), [0.6, 0.3]);
});

test("a pinned token's column: who attends to it", () => {
  assert.deepEqual(Array.from(pinStrip(PATTERN, N, [0, 1, 2, 3], 1, "column")), [0, 0.5, 0.6, 0.1]);
  assert.deepEqual(Array.from(pinStrip(PATTERN, N, [1, 2], 1, "column")), [0.5, 0.6]);
});

test("the strongest entry, the first of a tie", () => {
  assert.deepEqual(strongest(Float64Array.from([0.1, 0.6, 0.3])), { index: 1, value: 0.6 });
  assert.deepEqual(strongest(Float64Array.from([0.5, 0.5])), { index: 0, value: 0.5 });
});

test("pooled: the pinned token's block, its row and column of the thumbnail", () => {
  const keep = [0, 1, 2, 3];
  const f = 2;
  const side = 2;
  const thumb = poolPattern(PATTERN, N, keep, f, side);
  // Block rows average the queries, block columns sum the keys: [[1, 0], [0.6, 0.4]].
  assert.equal(pooledIndex(keep, 2, f), 1);
  assert.equal(pooledIndex([1, 2, 3], 2, f), 0);
  assert.equal(pooledIndex([1, 3], 2, f), -1);
  const row = pooledStrip(thumb, side, 1, "row");
  [0.6, 0.4].forEach((w, i) => assert.ok(Math.abs(row[i] - w) < 1e-12, `${row[i]}`));
  const col = pooledStrip(thumb, side, 0, "column");
  [1, 0.6].forEach((w, i) => assert.ok(Math.abs(col[i] - w) < 1e-12, `${col[i]}`));
  assert.deepEqual(blockSpan(keep, 1, f), [2, 3]);
  assert.deepEqual(blockSpan([0, 1, 2], 1, f), [2, 2]);
});

test("the tooltip names the token given (or getting) most weight, with the number", () => {
  const keep = [0, 1, 2, 3];
  const words = { tokens: TOKENS, keep, pin: 2, f: 1 };
  const row = pinText({ ...words, along: "row" }, { index: 1, value: 0.6 });
  assert.equal(row, "“<b>cat</b>” (2) gives most weight to “it” (1): 0.600");
  const col = pinText({ ...words, pin: 1, along: "column" }, { index: 2, value: 0.6 });
  assert.equal(col, "“it” (1) gets most weight from “<b>cat</b>” (2): 0.600");
  const pooled = pinText({ ...words, f: 2, along: "row" }, { index: 1, value: 0.6 });
  assert.match(
    pooled,
    /^A pixel here is a block of 2 tokens: “<b>cat<\/b>” \(2\) is in tokens 2–3/,
  );
  assert.match(pooled, /gives most weight to tokens 2–3 .*: 0\.600/);
});
