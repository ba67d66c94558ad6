// The explorer's sentences: numbers as it prints them, the captions under each stage, the hint
// above the panels, the status of a layer's blocks and the lines of the cell arithmetic; for
// cross-attention (tokens × time) the seconds of a 20 ms frame, the title, the tooltips and the
// readout of a picked cell. Pure functions (no DOM).

export const STAGES = ["scores", "scaled", "masked", "pattern"]; // the default; also "weighted"
// (the pattern × each key's value norm) and "rollout" (the layer's attention rollout)
export const STAGE_TITLES = {
  scores: "1 · scores Q·Kᵀ",
  scaled: "2 · scaled",
  masked: "3 · masked",
  pattern: "4 · softmax",
  weighted: "weight × value length",
  rollout: "rollout (heads averaged)",
};

// A number with a real minus sign (U+2212), −∞ for a hidden entry.
export function fmt(x, digits = 7) {
  if (x === -Infinity) return "−∞";
  return (x < 0 ? "−" : "") + Math.abs(x).toFixed(digits);
}

// A head's figure in a tooltip, three decimals; null (nothing to measure, e.g. how even a
// one-token row's spread is) as "n/a".
export function metricText(value) {
  return value === null || value === undefined ? "n/a" : value.toFixed(3);
}

export function maskCaption(header, causal) {
  if (header.causal) {
    return (
      "The model's own mask: it was trained to guess the next token, so each token sees " +
      "only itself and the tokens before it. Later tokens (blank) are set to −∞, so softmax " +
      "gives them exactly 0."
    );
  }
  return causal
    ? "A what-if: this model was trained without a mask, reading every token both ways. With " +
        "the mask each query sees only itself and earlier tokens; hidden cells (blank) are set " +
        "to −∞, so softmax gives them exactly 0."
    : "No mask: every token may look at every token, as this model was trained to.";
}

// The rollout's caption: what it estimates, and what it assumes.
export function rolloutCaption(view) {
  const [row, col] = view.transpose ? ["a column", "a row"] : ["a row", "a column"];
  return (
    `How much each token's vector after layer ${view.layer} (${row}) draws on each input ` +
    `token (${col}), assuming the layer's heads averaged, the vector that skips attention ` +
    "counted as half, and the rest of each block (LayerNorm, the MLP) ignored (Abnar & " +
    "Zuidema, 2020): an estimate, not a measurement. The head and the switches do not change it."
  );
}

// The scaled stage's caption: what divided the scores, and which of it is a what-if.
export function scaledCaption(view, dk) {
  const root = `√d_k = √${dk} = ${Math.sqrt(dk).toFixed(2)}`;
  const div = view.scale
    ? `Scores divided by ${root} (d_k: the ${dk} numbers in each query and key)`
    : `Scores not divided (a what-if: the model divides them by ${root})`;
  const temp =
    Number(view.temp) !== 1
      ? `, then by temperature ${view.temp} (a what-if: the model uses 1; a temperature ` +
        "below 1 makes the weights sharper, above 1 flatter)"
      : "";
  return `${div}${temp}: the numbers softmax turns into weights.`;
}

// The caption under each stage, given the colour ranges drawn (range.scores: [lo, hi]).
export function captions(header, view, range) {
  const [across, line] = view.transpose
    ? ["down each column", "column"]
    : ["across each row", "row"];
  const cls = view.hide_special ? " ([CLS]/[SEP] hidden, so what is shown sums to less)" : "";
  const colours = range.scores
    ? ` Colours run from ${fmt(range.scores[0], 2)} to ${fmt(range.scores[1], 2)}.`
    : "";
  return {
    scores:
      "Each cell is one query · key dot product, before any scaling: the larger it is, the " +
      `more weight the key gets in that query's ${line}, among the keys it may see.${colours}`,
    scaled: scaledCaption(view, header.d_head),
    masked: maskCaption(header, view.causal),
    pattern: `Softmax: the weights sum to 1 ${across}${cls}.`,
    weighted:
      "A big weight on a token whose value vector is short moves almost nothing: weight × " +
      "length of what the token passes on (Kobayashi et al., 2020)." +
      (range.weighted ? ` Colours run from 0 to ${fmt(range.weighted[1], 2)}.` : ""),
    rollout: rolloutCaption(view),
  };
}

// The hint above the panels: what the axes are, the zoom window, what the pointer and keys do.
export function hint({ view, rows, cols, zoomed, keys, clickable }) {
  const axis = view.transpose
    ? "columns are queries, rows are keys"
    : "rows are queries, columns are keys";
  const zoom = zoomed
    ? `Showing tokens ${rows[0]}–${rows[rows.length - 1]} × ${cols[0]}–${cols[cols.length - 1]}; ` +
      "double-click to see all. "
    : "";
  const arrows = keys ? "; ← → change the head, ↑ ↓ the layer (after a click on the view)" : "";
  const click = clickable ? ", click it to see where its number comes from" : "";
  return (
    `${zoom}Here ${axis}. Hover a cell for its value${click}, drag or scroll to zoom, ` +
    `double-click to see all${arrows}.`
  );
}

// What the scaled step did, in words: "÷ √64 ÷ temperature 2", or that nothing divided.
function scaledWords(view, dk) {
  const parts = [];
  if (view.scale) parts.push(`÷ √${dk}`);
  if (Number(view.temp) !== 1) parts.push(`÷ temperature ${view.temp}`);
  return parts.join(" ");
}

// The learner's lines of one cell (three decimals, plain words): [label, text, class] each.
function plainLines(cell, tokens, view, dk, [query, key], ownMask) {
  const by = scaledWords(view, dk);
  const whatIf = !view.scale || Number(view.temp) !== 1;
  const scaled = by
    ? `= ${fmt(cell.score, 3)} ${by} = ${fmt(cell.scaled, 3)}`
    : `= ${fmt(cell.scaled, 3)}, not divided`;
  const model = whatIf ? ` (a what-if: the model itself divides by √${dk}, at temperature 1)` : "";
  const mask = ownMask ? "the model's own mask" : "the what-if mask";
  const weight = cell.masked
    ? `= 0: “${tokens[key]}” comes after “${tokens[query]}”, and ${mask} hides every later token.`
    : `= ${fmt(cell.share, 3)}: softmax turns this query's scores into weights that add up ` +
      `to 1; this is the weight “${tokens[key]}” gets.`;
  return [
    ["query · key", `= ${fmt(cell.score, 3)}: the query's ${dk} numbers times the key's, added up`],
    ["scaled", scaled + model],
    ["weight", weight],
  ].map(([label, text], i) => [label, text, `ax-n-plain ax-n-plain-${i}`]);
}

// The engineers' lines of one cell (seven decimals, as the engine computes them).
function engineerLines(cell, view, dk) {
  const terms = Array.from(cell.products.slice(0, 4), (x) => `(${fmt(x, 3)})`).join(" + ");
  const div = view.scale ? `÷ √d_k = √${dk} (${Math.sqrt(dk).toFixed(3)})` : "÷ 1 (scaling off)";
  const temp = Number(view.temp) !== 1 ? ` ÷ temperature ${view.temp}` : "";
  const last = cell.masked
    ? [
        "masked:",
        "key after query under the causal mask: −∞, so exp gives exactly 0.",
        "ax-n-masked",
      ]
    : [
        "softmax",
        `= exp(scaled − row max) ÷ Σ exp(row − row max) = exp(${fmt(cell.scaled, 4)} − ` +
          `${fmt(cell.rowMax, 4)}) ÷ ${fmt(cell.rowExpSum, 4)} = ${fmt(cell.share)}`,
        "ax-n-share",
      ];
  return [
    ["q·k", `= Σ q_e·k_e over e = 0…${dk - 1} = ${terms} + … = `, "ax-n-sum"],
    ["", fmt(cell.score), "ax-n-score"],
    ["scaled", `= ${fmt(cell.score, 4)} ${div}${temp} = ${fmt(cell.scaled)}`, "ax-n-scaled"],
    last,
    [
      "",
      "Computed here from the engine's float32 queries and keys, each product rounded to " +
        "float32: attention_core.cell_arithmetic gives the same numbers to float32 rounding.",
      "ax-n-note",
    ],
  ];
}

// The lines of one cell's arithmetic after a title: `lines` for everyone (three decimals,
// plain words), `engineer` for the closed "For engineers" section (seven decimals, code names).
// [label, text, class] each. `ownMask`: the model was trained with its causal mask.
export function cellLines(cell, tokens, view, dk, query, key, ownMask = false) {
  const title =
    `Where one number comes from: query “${tokens[query]}” (${query}) → ` +
    `key “${tokens[key]}” (${key})`;
  return {
    title,
    lines: plainLines(cell, tokens, view, dk, [query, key], ownMask),
    engineer: engineerLines(cell, view, dk),
  };
}

// The cell readout of the norm-weighted stage: [label, text, class].
export function weightedLine({ weight, norm, weighted }) {
  const text = `weight ${fmt(weight, 3)} × value length ${fmt(norm, 3)} = ${fmt(weighted, 3)}`;
  return ["weight × value length", text, "ax-n-weighted"];
}

// What a rollout cell says: the token after `layer` draws `value` on the input token.
export function rolloutText(tokens, layer, query, key, value) {
  return `after layer ${layer}, “${tokens[query]}” draws ${fmt(value, 3)} on input “${tokens[key]}”`;
}

// The cell readout of the rollout stage: [label, text, class].
export function rolloutLine(tokens, layer, query, key, value) {
  return ["rollout", rolloutText(tokens, layer, query, key, value), "ax-n-rollout"];
}

// The title of a cell readout that has no query·key arithmetic (the rollout alone).
export function rolloutTitle(tokens, layer, query, key) {
  return `Where one number comes from: “${tokens[query]}” (${query}) after layer ${layer} ← input “${tokens[key]}” (${key})`;
}

// The tooltip over a stage's cell (three decimals; its data-value holds the exact number).
export function tipText(stage, tokens, query, key, value, layer) {
  if (stage === "rollout") return rolloutText(tokens, layer, query, key, value);
  return (
    `${STAGE_TITLES[stage]} · query “${tokens[query]}” (${query}) → ` +
    `key “${tokens[key]}” (${key}): ${fmt(value, 3)}`
  );
}

// The status line above a view: why its layer is missing (the route's sentence), that it is on
// its way, or nothing once it is drawn.
export function loadStatus(layer, waiting, error) {
  if (error) return `Could not load layer ${layer}: ${error.replace(/\.$/, "")}.`;
  return waiting ? `loading layer ${layer}…` : "";
}

// Cross-attention's keys are 20 ms frames of the audio; a view counts them from the span's
// first frame in the clip (`first`).
export const FRAME_S = 0.02;

// When frame `f` of the span starts, in seconds (the clip's frame first + f), to 10 µs.
export function frameSeconds(first, f) {
  return Math.round((first + f) * FRAME_S * 1e5) / 1e5;
}

// "1.24 s"
export function secondsText(s, digits = 2) {
  return `${s.toFixed(digits)} s`;
}

// "Layer 3, head 0 (an alignment head)": `named` holds the "layer,head" pairs the model's
// makers list as aligning.
export function crossTitle(view, named) {
  const mark = named.has(`${view.layer},${view.head}`) ? " (an alignment head)" : "";
  return `Layer ${view.layer}, head ${view.head}${mark}`;
}

// The tooltip of a cell: “▁river” (token 1) at 1.24 s: 0.123
export function crossTip(tokens, first, token, frame, value) {
  const at = secondsText(frameSeconds(first, frame));
  return `“${tokens[token]}” (token ${token}) at ${at}: ${fmt(value, 3)}`;
}

// The strip's tooltip: “The sound at 1.24 s–1.26 s”
export function stripTip(first, frame) {
  const from = secondsText(frameSeconds(first, frame));
  const to = secondsText(frameSeconds(first, frame + 1));
  return `The sound at ${from}–${to}`;
}

// The readout of the view's cell (view.frame of the span, or the token's own peak when it is
// -1; `peak`: {col, value}, stages.rowPeak's) as lines of plain text, and the cell itself:
// {layer, head, token, frame (of the clip), seconds, value}. `rows`: the head's [token, frame].
export function crossReadout(tokens, first, view, rows, nFrames, peak) {
  const { layer, head, token } = view;
  const f = view.frame >= 0 ? view.frame : peak.col;
  const value = rows[token * nFrames + f];
  const start = frameSeconds(first, f);
  const cell = { layer, head, token, frame: first + f, seconds: start, value };
  const lines = [
    `Layer ${layer}, head ${head}: token ${token} “${tokens[token]}” gives the moment ` +
      `${secondsText(start)}–${secondsText(frameSeconds(first, f + 1))} ` +
      `a weight of ${value.toFixed(3)}.`,
    `Its largest weight over the speech: ${peak.value.toFixed(3)} at ` +
      `${secondsText(frameSeconds(first, peak.col))}.`,
  ];
  return { cell, lines };
}

// Map mode (map.js): what a pooled cell stands for, "tokens 1,024–1,027 × 300–303: mean
// 0.0031, max 0.012" (rows are queries, columns keys; a block wholly hidden by the mask has no
// number), and what each cell of a panel is.
export function blockText(t, mean, max) {
  const span = (lo, hi) => `${lo.toLocaleString("en")}–${(hi - 1).toLocaleString("en")}`;
  const said = mean === -Infinity ? "every cell hidden by the mask" : blockNumbers(mean, max);
  return `tokens ${span(t.r0, t.r1)} × ${span(t.c0, t.c1)}: ${said}`;
}

function blockNumbers(mean, max) {
  const num = (x) => (Math.abs(x) < 0.01 && x !== 0 ? x.toPrecision(2) : fmt(x, 3));
  if (Number.isNaN(max)) return `mean ${num(mean)} (only the mean is kept)`; // a long rollout
  return `mean ${num(mean)}, max ${num(max)}`;
}

export function mapCaption(block, pooling, rows, cols) {
  if (block === 1) return "Each cell: one query and one key, the engine's own number.";
  const what = pooling === "max" ? "the largest value" : "the mean";
  return (
    `Each cell: ${what} of a ${block} × ${block} block of tokens (${rows} × ${cols} cells); ` +
    "cells the mask hides are left out. Zoom in to see single tokens."
  );
}
