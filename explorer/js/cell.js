// The cell arithmetic under the panels: where the picked entry's number comes from, from the
// head's queries and keys (the "qk" block) to its softmax share, then its weight × the key's
// value norm and the layer's rollout share when those stages are shown. Everyone reads three
// decimals in plain words; the engine's seven decimals and names wait in a closed "For
// engineers" section (kept open across redraws once opened).

import { cellArithmetic, headNorms, headQueriesKeys, weightedCell } from "./stages.js";
import { cellLines, rolloutLine, rolloutTitle, weightedLine } from "./words.js";

function line([label, text, cls]) {
  const p = document.createElement("p");
  const b = document.createElement("strong");
  b.textContent = label;
  const value = document.createElement("span");
  value.className = cls;
  value.textContent = text;
  p.append(b, " ", value);
  return p;
}

// The readout lines of the stages beyond the pattern shown ({lines, data}): the norm-weighted
// cell's weight × norm, the rollout's share.
function beyondLines(ctx, query, key) {
  const { n, tokens } = ctx;
  const { values, blocks } = ctx.computed;
  const lines = [];
  const data = {};
  if (values.weighted) {
    const norms = headNorms(blocks.norms, ctx.state.get().head, n);
    data.weighted = weightedCell(values, norms, n, query, key);
    lines.push(weightedLine(data.weighted));
  }
  if (values.rollout) {
    data.rollout = values.rollout[query * n + key];
    lines.push(rolloutLine(tokens, ctx.state.get().layer, query, key, data.rollout));
  }
  return { lines, data };
}

// The closed "For engineers" section holding `lines` (open if it was open before the redraw).
function engineers(box, lines) {
  const details = document.createElement("details");
  details.className = "ax-eng";
  details.open = !!box.querySelector("details.ax-eng")?.open;
  const summary = document.createElement("summary");
  summary.textContent = "For engineers";
  details.append(summary, ...lines.map(line));
  return details;
}

function writeLines(box, title, lines, data, engineer = []) {
  const heading = document.createElement("h4");
  heading.textContent = title;
  const more = engineer.length ? [engineers(box, engineer)] : [];
  box.replaceChildren(heading, ...lines.map(line), ...more);
  box.dataset.cell = JSON.stringify(data);
}

function writeCell(box, cell, ctx, query, key, beyond) {
  const view = ctx.state.get();
  const own = !!ctx.header.causal;
  const words = cellLines(cell, ctx.tokens, view, ctx.dk, query, key, own);
  writeLines(
    box,
    words.title,
    [...words.lines, ...beyond.lines],
    {
      query,
      key,
      score: cell.score,
      scaled: cell.scaled,
      row_max: cell.rowMax,
      row_exp_sum: cell.rowExpSum,
      share: cell.share,
      masked: cell.masked,
      products: Array.from(cell.products),
      ...beyond.data,
    },
    words.engineer,
  );
}

// Spell out the picked cell (view.q, view.k): the pattern's arithmetic (asking for the layer's
// queries and keys first) when the pattern is computed, and the stages beyond it.
export function drawCell(ctx) {
  const box = ctx.root.querySelector(".ax-cell");
  const { q: query, k: key, layer, head } = ctx.state.get();
  if (ctx.inline) {
    box.hidden = true; // no queries and keys came with it
    return;
  }
  if (query == null || query < 0 || key < 0 || query >= ctx.n || key >= ctx.n) {
    box.textContent = "Click a cell to see where its number comes from.";
    return;
  }
  const beyond = beyondLines(ctx, query, key);
  if (!ctx.computed.values.pattern) {
    const title = rolloutTitle(ctx.tokens, layer, query, key);
    writeLines(box, title, beyond.lines, { query, key, ...beyond.data });
    return;
  }
  const qk = ctx.source.peek(layer, "qk");
  if (!qk || qk.error) {
    delete box.dataset.cell;
    box.textContent = qk ? `Could not load the queries and keys: ${qk.error}` : "loading…";
    if (!qk) ctx.source.block(layer, "qk").then(ctx.redrawCell, ctx.redrawCell);
    return;
  }
  const { q, k } = headQueriesKeys(qk, head, ctx.header.n_heads, ctx.n, ctx.dk);
  const cell = cellArithmetic(q, k, ctx.dk, ctx.computed.values, ctx.n, query, key);
  writeCell(box, cell, ctx, query, key, beyond);
}
