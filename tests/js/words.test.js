// Model facts, the explorer's sentences and export (explorer/js/model.js, words.js, export.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { fileName, layout, svgOf } from "../../explorer/js/export.js";
import { SCALES } from "../../explorer/js/draw.js";
import {
  headLabel,
  headsPerKv,
  roleBadge,
  sharing,
  startsGroup,
  viewTitle,
} from "../../explorer/js/model.js";
import { captions, cellLines, fmt, hint, metricText } from "../../explorer/js/words.js";

test("heads sharing keys and values", () => {
  assert.equal(headsPerKv(9, 3), 3);
  assert.equal(headsPerKv(12, undefined), 1);
  assert.equal(headLabel(4, 3), "H4 · KV1");
  assert.deepEqual(
    [0, 1, 3, 6].map((h) => startsGroup(h, 3)),
    [false, false, true, true],
  );
  assert.equal(startsGroup(3, 1), false);
  assert.equal(sharing({ n_heads: 9, n_kv_heads: 3 }, 4), " (keys and values shared by heads 3–5)");
  assert.equal(sharing({ n_heads: 12 }, 4), "");
  assert.equal(viewTitle({ n_heads: 12 }, { layer: 2, head: 5 }), "layer 2, head 5");
  const view = { layer: 2, head: 5 };
  assert.equal(viewTitle({}, view, "", ["rollout"]), "layer 2, every head averaged");
  assert.equal(viewTitle({ n_heads: 12 }, view, "", ["pattern", "rollout"]), "layer 2, head 5");
});

test("a head's badge is the engine's, for the head in view", () => {
  const header = {
    roles: [
      ["mixed: first-token sink 0.41 · self 0.20", "self 0.55"],
      ["induction 0.43", "broad 0.93"],
    ],
  };
  assert.equal(roleBadge(header, { layer: 1, head: 0 }), "induction 0.43");
  assert.equal(roleBadge(header, { layer: 0, head: 1 }, ["pattern"]), "self 0.55");
  assert.equal(roleBadge(header, { layer: 1, head: 1 }, ["pattern", "rollout"]), "broad 0.93");
  assert.equal(roleBadge(header, { layer: 1, head: 1 }, ["rollout"]), ""); // every head averaged
  assert.equal(roleBadge({}, { layer: 0, head: 0 }), ""); // no roles sent (a clip)
  assert.equal(roleBadge(header, { layer: 5, head: 0 }), "");
});

test("a head's figure in a tooltip", () => {
  assert.equal(metricText(0.12345), "0.123");
  assert.equal(metricText(null), "n/a");
});

test("numbers are written with a real minus sign, and −∞", () => {
  assert.equal(fmt(-1.5, 2), "−1.50");
  assert.equal(fmt(0.25), "0.2500000");
  assert.equal(fmt(-Infinity), "−∞");
});

test("the hint and the cell's lines", () => {
  const view = { transpose: true, scale: true, temp: 1 };
  const text = hint({
    view,
    rows: [3, 4],
    cols: [5, 9],
    zoomed: true,
    keys: true,
    clickable: true,
  });
  assert.match(text, /^Showing tokens 3–4 × 5–9/);
  assert.match(text, /columns are queries/);
  const cell = {
    products: [1, -2],
    score: 3,
    scaled: 1.5,
    masked: false,
    rowMax: 2,
    rowExpSum: 4,
    share: 0.1,
  };
  const { title, lines, engineer } = cellLines(cell, ["a", "<b>"], view, 4, 0, 1);
  assert.equal(title, "Where one number comes from: query “a” (0) → key “<b>” (1)");
  // everyone: three decimals, plain words, no code names
  assert.deepEqual(
    lines.map((l) => l[0]),
    ["query · key", "scaled", "weight"],
  );
  assert.equal(lines[0][1], "= 3.000: the query's 4 numbers times the key's, added up");
  assert.equal(lines[1][1], "= 3.000 ÷ √4 = 1.500");
  assert.match(lines[2][1], /^= 0\.100: softmax turns this query's scores into weights/);
  for (const [, text] of lines) assert.doesNotMatch(text, /q_e|d_k|\d\.\d{4}|attention_core/);
  // engineers: seven decimals and the engine's names
  assert.equal(engineer[1][1], "3.0000000");
  assert.match(engineer[0][1], /q_e·k_e over e = 0…3 = \(1\.000\) \+ \(−2\.000\)/);
  assert.match(engineer[2][1], /÷ √d_k = √4 \(2\.000\) = 1\.5000000$/);
  assert.match(engineer[3][1], /= 0.1000000$/);
  assert.match(engineer[4][1], /attention_core\.cell_arithmetic/);
});

test("a cell's lines under the what-ifs and the masks", () => {
  const cell = { products: [1], score: 3, scaled: 6, masked: false, rowMax: 6, rowExpSum: 1 };
  const off = { scale: false, temp: 0.5 };
  const { lines } = cellLines({ ...cell, share: 1 }, ["a", "b"], off, 64, 1, 0);
  assert.equal(
    lines[1][1],
    "= 3.000 ÷ temperature 0.5 = 6.000 (a what-if: the model itself divides by √64, at " +
      "temperature 1)",
  );
  const none = cellLines({ ...cell, share: 1 }, ["a", "b"], { scale: false, temp: 1 }, 64, 1, 0);
  assert.match(
    none.lines[1][1],
    /^= 6\.000, not divided \(a what-if: the model itself divides by √64, at temperature 1\)$/,
  );
  const hidden = { ...cell, masked: true, share: 0 };
  const on = { scale: true, temp: 1 };
  const whatIf = cellLines(hidden, ["a", "b"], on, 64, 0, 1).lines[2][1];
  assert.equal(whatIf, "= 0: “b” comes after “a”, and the what-if mask hides every later token.");
  const own = cellLines(hidden, ["a", "b"], on, 64, 0, 1, true).lines[2][1];
  assert.match(own, /the model's own mask hides/);
  assert.equal(cellLines(hidden, ["a", "b"], on, 64, 0, 1).engineer[3][2], "ax-n-masked");
});

test("captions: the what-ifs and temperature said in words", () => {
  const header = { d_head: 64, causal: false };
  const base = { layer: 0, transpose: false, scale: true, temp: 1, hide_special: false };
  const plain = captions(header, base, {});
  assert.equal(
    plain.scaled,
    "Scores divided by √d_k = √64 = 8.00 (d_k: the 64 numbers in each query and key): the " +
      "numbers softmax turns into weights.",
  );
  assert.doesNotMatch(plain.scaled, /what-if/);
  const hot = captions(header, { ...base, scale: false, temp: 2 }, {}).scaled;
  assert.match(hot, /^Scores not divided \(a what-if: the model divides them by √d_k = √64/);
  assert.match(
    hot,
    /temperature 2 \(a what-if: the model uses 1; .*below 1 .*sharper, above 1 flatter/,
  );
  assert.match(captions(header, { ...base, causal: true }, {}).masked, /^A what-if: this model/);
  assert.match(captions({ ...header, causal: true }, base, {}).masked, /^The model's own mask/);
  assert.match(plain.scores, /more weight the key gets in that query's row/);
  assert.match(captions(header, { ...base, transpose: true }, {}).scores, /query's column/);
});

const TOKENS = ["[CLS]", "a", "<b>&", "[SEP]"];

function spec(n, image) {
  const values = new Float64Array(n * n).fill(0.5);
  values[1] = -Infinity;
  const ids = [...Array(n).keys()];
  const panel = (title) => ({
    title,
    values,
    n,
    rows: ids,
    cols: ids,
    transpose: false,
    range: [0, 1],
    scale: SCALES.weights,
    blank: [240, 242, 246],
    image,
  });
  return {
    title: "layer 2, head 5",
    tokens: TOKENS,
    panels: [panel("1 · scores"), panel("4 · softmax")],
  };
}

test("export: file names, and an SVG with its labels as text", () => {
  assert.equal(fileName("minilm", { layer: 2, head: 5 }, "svg"), "attention-minilm-L2-H5.svg");
  assert.equal(fileName("", { layer: 0, head: 0 }, "png"), "attention-L0-H0.png");
  const svg = svgOf(spec(4));
  assert.equal((svg.match(/<rect x="[\d.]+" y="[\d.]+" width/g) || []).length, 2 * 16 + 2);
  assert.match(svg, /<text[^>]*>&lt;b&gt;&amp;<\/text>/);
  assert.match(svg, /<text[^>]*>layer 2, head 5<\/text>/);
  assert.match(svg, /fill="rgb\(240,242,246\)"/); // the hidden cell
  assert.ok(!svg.includes("<b>"));
  assert.equal(layout(spec(4)).panels.length, 2);
});

test("export: a large heatmap goes into the SVG as an image", () => {
  const svg = svgOf(spec(70, "data:image/png;base64,AAAA"));
  assert.equal((svg.match(/<image /g) || []).length, 2);
  assert.ok(!svg.includes('<rect x="100.00"'));
});
