// The explorer's arithmetic (explorer/js/stages.js) against direct formulas in float64.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  causallyHidden,
  cellArithmetic,
  computeStages,
  divisor,
  headQueriesKeys,
  headScores,
  poolPattern,
  visibleTokens,
} from "../../explorer/js/stages.js";

const N = 5;
const DK = 4;
// Deterministic pseudo-random numbers (no Math.random: the tests are repeatable).
function numbers(count, seed = 1) {
  const out = new Float32Array(count);
  let x = seed;
  for (let i = 0; i < count; i++) {
    x = (x * 16807) % 2147483647;
    out[i] = (x / 2147483647) * 8 - 4;
  }
  return out;
}
const SCORES = numbers(N * N);

function directSoftmax(row, temperature, dk, scale) {
  const z = row.map((s) => s / ((scale ? Math.sqrt(dk) : 1) * temperature));
  const max = Math.max(...z);
  const e = z.map((v) => Math.exp(v - max));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / total);
}

const rowOf = (values, q) => Array.from(values.subarray(q * N, (q + 1) * N));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

test("softmax at any temperature equals the direct formula and rows sum to 1", () => {
  for (const temperature of [0.05, 0.35, 1, 2.5, 5]) {
    for (const scale of [true, false]) {
      const st = computeStages(SCORES, N, DK, { scale, temperature, causal: false });
      for (let q = 0; q < N; q++) {
        const want = directSoftmax(rowOf(SCORES, q), temperature, DK, scale);
        const got = rowOf(st.pattern, q);
        for (let k = 0; k < N; k++) assert.ok(Math.abs(got[k] - want[k]) < 1e-6, `${q},${k}`);
        assert.ok(Math.abs(sum(got) - 1) < 1e-12);
      }
    }
  }
});

test("as the temperature goes to 0 softmax picks the row's largest score", () => {
  const st = computeStages(SCORES, N, DK, { scale: true, temperature: 1e-4, causal: false });
  for (let q = 0; q < N; q++) {
    const row = rowOf(SCORES, q);
    const top = row.indexOf(Math.max(...row));
    assert.equal(st.pattern[q * N + top], 1);
    assert.equal(sum(rowOf(st.pattern, q)), 1);
  }
});

test("stage numbers: scaled is scores ÷ divisor in float32, masked hides later keys", () => {
  const sw = { scale: true, temperature: 0.5, causal: true };
  const st = computeStages(SCORES, N, DK, sw);
  assert.equal(divisor(DK, true, 0.5), Math.fround(Math.sqrt(DK) * 0.5));
  assert.equal(divisor(DK, false, 2), 2);
  for (let q = 0; q < N; q++) {
    for (let k = 0; k < N; k++) {
      const i = q * N + k;
      assert.equal(st.scores[i], SCORES[i]);
      assert.equal(st.scaled[i], Math.fround(SCORES[i] / divisor(DK, true, 0.5)));
      if (k > q) {
        assert.ok(causallyHidden(true, q, k));
        assert.equal(st.masked[i], -Infinity);
        assert.equal(st.pattern[i], 0);
      } else {
        assert.equal(st.masked[i], st.scaled[i]);
      }
    }
    assert.ok(Math.abs(sum(rowOf(st.pattern, q)) - 1) < 1e-12);
  }
  assert.equal(st.pattern[0], 1); // the first token sees only itself
  assert.ok(!causallyHidden(false, 0, 4));
});

test("the arrays of a previous result are reused for the same n", () => {
  const sw = { scale: true, temperature: 1, causal: false };
  const first = computeStages(SCORES, N, DK, sw);
  const again = computeStages(SCORES, N, DK, { ...sw, causal: true }, first);
  assert.equal(again.pattern, first.pattern);
  assert.equal(again.masked[1], -Infinity);
});

test("overflowing scaled scores are clipped to the largest float32, as the engine does", () => {
  const huge = new Float32Array([3e38, -3e38, 1, 0]);
  const st = computeStages(huge, 2, 1, { scale: false, temperature: 0.05, causal: false });
  assert.equal(st.scaled[0], 3.4028234663852886e38);
  assert.equal(st.scaled[1], -3.4028234663852886e38);
  assert.deepEqual(Array.from(st.pattern.subarray(0, 2)), [1, 0]);
});

test("hiding special tokens keeps the engine's positions (pack.visible_tokens), else all", () => {
  const header = { n_tokens: 4, kept_hiding_special: [1, 2] };
  assert.deepEqual(visibleTokens(header, true), [1, 2]);
  assert.deepEqual(visibleTokens(header, false), [0, 1, 2, 3]);
  assert.notEqual(visibleTokens(header, true), header.kept_hiding_special); // a copy
});

test("cell arithmetic: products, score, scaled, row max, sum of exps and share", () => {
  const heads = 2;
  const qk = numbers(2 * heads * N * DK, 7);
  const head = 1;
  const { q, k } = headQueriesKeys(qk, head, heads, N, DK);
  assert.equal(q[0], qk[head * N * DK]);
  assert.equal(k[0], qk[(heads + head) * N * DK]);
  const scores = new Float32Array(N * N);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let e = 0; e < DK; e++) s += q[i * DK + e] * k[j * DK + e];
      scores[i * N + j] = s;
    }
  }
  const st = computeStages(scores, N, DK, { scale: true, temperature: 1, causal: true });
  const cell = cellArithmetic(q, k, DK, st, N, 3, 1);
  assert.ok(Math.abs(sum(Array.from(cell.products)) - cell.score) < 1e-5);
  assert.equal(cell.scaled, st.scaled[3 * N + 1]);
  const visible = [0, 1, 2, 3].map((j) => st.scaled[3 * N + j]);
  assert.equal(cell.rowMax, Math.max(...visible));
  const exps = sum(visible.map((v) => Math.exp(v - cell.rowMax)));
  assert.ok(Math.abs(cell.rowExpSum - exps) < 1e-12);
  assert.ok(Math.abs(cell.share - Math.exp(cell.scaled - cell.rowMax) / exps) < 1e-6);
  assert.equal(cellArithmetic(q, k, DK, st, N, 1, 3).masked, true);
  assert.equal(cellArithmetic(q, k, DK, st, N, 1, 3).share, 0);
});

test("a head's scores are its n×n slice of the layer block", () => {
  const block = numbers(3 * N * N);
  assert.deepEqual(Array.from(headScores(block, 2, N)), Array.from(block.slice(50, 75)));
});

test("pooled thumbnails keep every row summing to 1", () => {
  const st = computeStages(SCORES, N, DK, { scale: true, temperature: 1, causal: false });
  const keep = [0, 1, 2, 3, 4];
  const side = 3;
  const pooled = poolPattern(st.pattern, N, keep, 2, side);
  for (let r = 0; r < side; r++) {
    assert.ok(Math.abs(sum(Array.from(pooled.subarray(r * side, (r + 1) * side))) - 1) < 1e-12);
  }
});

// What the captions claim (words.js): within a row a larger score gets a larger weight (among
// the keys the query may see), and a temperature below 1 sharpens the weights, above 1 flattens.
test("a larger score, a larger weight in its row; temperature below 1 sharper, above 1 flatter", () => {
  const scores = numbers(N * N, 7);
  for (const causal of [false, true]) {
    const s = computeStages(scores, N, DK, { scale: true, temperature: 1, causal });
    for (let q = 0; q < N; q++) {
      for (let a = 0; a < N; a++) {
        for (let b = 0; b < N; b++) {
          if (causallyHidden(causal, q, a) || causallyHidden(causal, q, b)) continue;
          if (scores[q * N + a] > scores[q * N + b]) {
            assert.ok(s.pattern[q * N + a] > s.pattern[q * N + b]);
          }
        }
      }
    }
  }
  const entropy = (temperature) => {
    const p = computeStages(scores, N, DK, { scale: true, temperature, causal: false }).pattern;
    let h = 0;
    for (const x of p) h -= x > 0 ? x * Math.log(x) : 0;
    return h;
  };
  assert.ok(entropy(0.5) < entropy(1) && entropy(1) < entropy(2));
});
