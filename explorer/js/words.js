// The explorer's sentences: numbers as it prints them, the captions under each stage, the hint
// above the panels and the lines of the cell arithmetic. Pure functions (no DOM).

export const STAGES = ["scores", "scaled", "masked", "pattern"]; // the default; also "weighted"
// (the pattern × each key's value norm) and "rollout" (the layer's attention rollout)
export const STAGE_TITLES = {
  scores: "1 · scores Q·Kᵀ",
  scaled: "2 · scaled",
  masked: "3 · masked",
  pattern: "4 · softmax",
  weighted: "weight × ‖value‖",
  rollout: "rollout (heads averaged)",
};

// A number with a real minus sign (U+2212), −∞ for a hidden entry.
export function fmt(x, digits = 7) {
  if (x === -Infinity) return "−∞";
  return (x < 0 ? "−" : "") + Math.abs(x).toFixed(digits);
}

export function maskCaption(header, causal) {
  if (header.causal) {
    return (
      "The model's own mask: it was trained to guess the next token, so each token sees " +
      "only itself and the tokens before it. Later tokens (blank) become −∞ and get exactly 0."
    );
  }
  return causal
    ? "What-if: a causal mask on a model trained without one. Each query now sees only itself " +
        "and earlier tokens; hidden cells (blank) become −∞, so softmax gives them exactly 0."
    : "No mask is on: every token may look at every token.";
}

// The rollout's caption: what it estimates, and what it assumes.
export function rolloutCaption(view) {
  const [row, col] = view.transpose ? ["a column", "a row"] : ["a row", "a column"];
  return (
    `How much each token's vector after layer ${view.layer} (${row}) draws on each input ` +
    `token (${col}), assuming the heads averaged, the residual as half, LayerNorm and the MLP ` +
    "ignored (Abnar & Zuidema, 2020): an estimate, not a measurement. The head and the " +
    "switches do not change it."
  );
}

// The caption under each stage, given the colour ranges drawn (range.scores: [lo, hi]).
export function captions(header, view, range) {
  const dk = header.d_head;
  const across = view.transpose ? "down each column" : "across each row";
  const div = view.scale ? `divided by √d_k = ${Math.sqrt(dk).toFixed(2)}` : "not divided by √d_k";
  const temp = view.temp !== 1 ? `, ÷ temperature ${view.temp}` : "";
  const cls = view.hide_special ? " ([CLS]/[SEP] hidden, so what is shown sums to less)" : "";
  const colours = range.scores
    ? `Colours run from ${fmt(range.scores[0], 2)} to ${fmt(range.scores[1], 2)}.`
    : "";
  return {
    scores: `Raw query·key dot products: large means the key answers the query's question. ${colours}`,
    scaled: `Scores ${div}${temp}: the numbers softmax turns into weights.`,
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
  const click = clickable ? ", click it for its arithmetic" : "";
  return (
    `${zoom}Here ${axis}. Hover a cell for its value${click}, drag or scroll to zoom, ` +
    `double-click to see all${arrows}.`
  );
}

// The lines of one cell's arithmetic: [label, text, class] each, after a title.
export function cellLines(cell, tokens, view, dk, query, key) {
  const terms = Array.from(cell.products.slice(0, 4), (x) => `(${fmt(x, 3)})`).join(" + ");
  const div = view.scale ? `÷ √${dk} (${Math.sqrt(dk).toFixed(3)})` : "÷ 1 (scaling off)";
  const temp = Number(view.temp) !== 1 ? ` ÷ temperature ${view.temp}` : "";
  const title =
    `Where one number comes from: query “${tokens[query]}” (${query}) → ` +
    `key “${tokens[key]}” (${key})`;
  const last = cell.masked
    ? ["masked:", "this key is hidden from this query, so its weight is exactly 0.", "ax-n-masked"]
    : [
        "softmax share",
        `= exp(${fmt(cell.scaled, 4)} − ${fmt(cell.rowMax, 4)}) ÷ ${fmt(cell.rowExpSum, 4)} = ` +
          fmt(cell.share),
        "ax-n-share",
      ];
  return {
    title,
    lines: [
      ["q·k", `= sum over ${dk} dimensions of q_e·k_e = ${terms} + … = `, "ax-n-sum"],
      ["", fmt(cell.score), "ax-n-score"],
      ["scaled", `= ${fmt(cell.score, 4)} ${div}${temp} = ${fmt(cell.scaled)}`, "ax-n-scaled"],
      last,
    ],
  };
}

// The cell readout of the norm-weighted stage: [label, text, class].
export function weightedLine({ weight, norm, weighted }) {
  const text = `weight ${fmt(weight, 3)} × ‖value‖ ${fmt(norm, 3)} = ${fmt(weighted, 3)}`;
  return ["weight × ‖value‖", text, "ax-n-weighted"];
}

// What a rollout cell says: the token after `layer` draws `value` on the input token.
export function rolloutText(tokens, layer, query, key, value, digits = 3) {
  return `after layer ${layer}, “${tokens[query]}” draws ${fmt(value, digits)} on input “${tokens[key]}”`;
}

// The cell readout of the rollout stage: [label, text, class].
export function rolloutLine(tokens, layer, query, key, value) {
  return ["rollout", rolloutText(tokens, layer, query, key, value), "ax-n-rollout"];
}

// The title of a cell readout that has no query·key arithmetic (the rollout alone).
export function rolloutTitle(tokens, layer, query, key) {
  return `Where one number comes from: “${tokens[query]}” (${query}) after layer ${layer} ← input “${tokens[key]}” (${key})`;
}

// The tooltip over a stage's cell.
export function tipText(stage, tokens, query, key, value, layer) {
  if (stage === "rollout") return rolloutText(tokens, layer, query, key, value, 7);
  return (
    `${STAGE_TITLES[stage]} · query “${tokens[query]}” (${query}) → ` +
    `key “${tokens[key]}” (${key}): ${fmt(value)}`
  );
}
