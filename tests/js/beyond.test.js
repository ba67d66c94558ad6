// The stages beyond the pattern (explorer/js/stages.js, draw.js, words.js): the norm-weighted
// pattern against hand-checked numbers, the rollout as sent, their colour ranges and sentences.
import assert from "node:assert/strict";
import { test } from "node:test";

import { colourRange, scaleOf, SCALES } from "../../explorer/js/draw.js";
import {
  headNorms,
  normWeighted,
  partsFor,
  stageValues,
  weightedCell,
} from "../../explorer/js/stages.js";
import {
  captions,
  rolloutLine,
  rolloutText,
  tipText,
  weightedLine,
} from "../../explorer/js/words.js";

const close = (a, b, tol = 1e-7) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

test("each stage asks for only the blocks it draws from", () => {
  assert.deepEqual(partsFor(["scores", "scaled", "masked", "pattern"]), ["scores"]);
  assert.deepEqual(partsFor(["pattern", "weighted"]), ["scores", "norms"]);
  assert.deepEqual(partsFor(["weighted"]), ["scores", "norms"]);
  assert.deepEqual(partsFor(["rollout"]), ["rollout"]);
  assert.deepEqual(partsFor(["pattern", "rollout"]), ["scores", "rollout"]);
});

test("weighted = pattern × the key's value norm, by hand", () => {
  // Rows: [0.5, 0.25, 0.25], [0, 1, 0], [0.1, 0.2, 0.7]; norms 2, 4, 0.5.
  const pattern = Float64Array.from([0.5, 0.25, 0.25, 0, 1, 0, 0.1, 0.2, 0.7]);
  const norms = Float32Array.from([2, 4, 0.5]);
  const got = Array.from(normWeighted(pattern, norms, 3));
  const want = [1, 1, 0.125, 0, 4, 0, 0.2, 0.8, 0.35];
  for (const [i, w] of want.entries()) close(got[i], w, 1e-12);
  const reused = normWeighted(pattern, norms, 3, new Float64Array(9));
  assert.deepEqual(Array.from(reused), got);
});

test("a head's value norms are its row of the layer's [h, k] block", () => {
  const block = Float32Array.from([1, 2, 3, 4, 5, 6]); // 2 heads × 3 keys
  assert.deepEqual(Array.from(headNorms(block, 1, 3)), [4, 5, 6]);
});

test("stageValues: softmax under the switches, then × the head's norms; rollout as sent", () => {
  // Two tokens, one head: scores [0, ln 3] on each row -> softmax [0.25, 0.75] (scaling off).
  const ln3 = Math.log(3);
  const header = { n_tokens: 2, d_head: 4 };
  const blocks = {
    scores: Float32Array.from([0, ln3, 0, ln3, 9, 9, 9, 9]), // head 1 is not shown
    norms: Float32Array.from([2, 8, 7, 7]), // head 0: 2 and 8
    rollout: Float32Array.from([1, 0, 0.4, 0.6]),
  };
  const view = { head: 0, scale: false, temp: 1, causal: false };
  const v = stageValues(blocks, view, header);
  close(v.pattern[1], 0.75);
  close(v.weighted[0], 0.25 * 2);
  close(v.weighted[1], 0.75 * 8);
  assert.equal(v.rollout, blocks.rollout);
  const cell = weightedCell(v, headNorms(blocks.norms, 0, 2), 2, 0, 1);
  close(cell.weight, 0.75);
  assert.equal(cell.norm, 8);
  close(cell.weighted, 6);
  // A causal mask: query 0 sees only itself, so its weight 1 × its norm 2; key 1 gets 0.
  const causal = stageValues(blocks, { ...view, causal: true }, header);
  assert.deepEqual(Array.from(causal.weighted.subarray(0, 2)), [2, 0]);
  // The rollout alone needs no scores and computes no pattern.
  const alone = stageValues({ rollout: blocks.rollout }, view, header, v);
  assert.deepEqual(Object.keys(alone), ["rollout"]);
});

test("colours: weighted 0..its largest shown value on Cividis, rollout 0..1", () => {
  const values = Float64Array.from([0.5, 3.25, 1, 9]);
  assert.deepEqual(colourRange("weighted", values, 2, [0], [0, 1]), [0, 3.25]);
  assert.deepEqual(colourRange("weighted", values, 2, [0, 1], [0, 1]), [0, 9]);
  assert.deepEqual(colourRange("rollout", values, 2, [0, 1], [0, 1]), [0, 1]);
  assert.deepEqual(colourRange("scores", Float64Array.from([-2, 1]), 2, [0], [0, 1]), [-2, 2]);
  assert.equal(scaleOf("weighted"), SCALES.weights);
  assert.equal(scaleOf("rollout"), SCALES.weights);
  assert.equal(scaleOf("masked"), SCALES.signed);
});

test("the readouts and tooltips of the two stages", () => {
  const line = weightedLine({ weight: 0.4121, norm: 2.3009, weighted: 0.9482 });
  assert.equal(line[1], "weight 0.412 × value length 2.301 = 0.948");
  const tokens = ["the", "river", "bank"];
  assert.equal(
    rolloutLine(tokens, 3, 2, 1, 0.2314)[1],
    "after layer 3, “bank” draws 0.231 on input “river”",
  );
  assert.equal(rolloutText(tokens, 0, 0, 0, 1), "after layer 0, “the” draws 1.000 on input “the”");
  assert.equal(
    tipText("rollout", tokens, 2, 1, 0.25, 4),
    "after layer 4, “bank” draws 0.250 on input “river”",
  );
  assert.equal(
    tipText("weighted", tokens, 2, 1, 0.25, 4),
    "weight × value length · query “bank” (2) → key “river” (1): 0.250",
  );
});

test("captions say what the rollout assumes and where the weighted colours end", () => {
  const header = { d_head: 64, causal: false };
  const view = { layer: 2, transpose: false, scale: true, temp: 1, hide_special: false };
  const text = captions(header, view, { weighted: [0, 3.5] });
  assert.match(text.weighted, /moves almost nothing/);
  assert.match(text.weighted, /Kobayashi et al\., 2020/);
  assert.match(text.weighted, /from 0 to 3\.50/);
  assert.match(text.rollout, /after layer 2 \(a row\)/);
  for (const part of ["heads averaged", "skips attention", "counted as half", "the MLP", "Abnar"]) {
    assert.ok(text.rollout.includes(part), part);
  }
  assert.match(text.rollout, /an estimate, not a measurement/);
  assert.match(captions(header, { ...view, transpose: true }, {}).rollout, /\(a column\)/);
});
