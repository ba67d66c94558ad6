// The explorer's sentences: numbers as it prints them, the captions under each stage, the hint
// above the panels and the lines of the cell arithmetic. Pure functions (no DOM).

export const STAGES = ["scores", "scaled", "masked", "pattern"];
export const STAGE_TITLES = {
  scores: "1 · scores Q·Kᵀ",
  scaled: "2 · scaled",
  masked: "3 · masked",
  pattern: "4 · softmax",
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

// The tooltip over a stage's cell.
export function tipText(stage, tokens, query, key, value) {
  return (
    `${STAGE_TITLES[stage]} · query “${tokens[query]}” (${query}) → ` +
    `key “${tokens[key]}” (${key}): ${fmt(value)}`
  );
}
