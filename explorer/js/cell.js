// The cell arithmetic under the panels: where the picked entry's number comes from, from the
// head's queries and keys (the "qk" block) to its softmax share.

import { cellArithmetic, headQueriesKeys } from "./stages.js";
import { cellLines } from "./words.js";

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

function writeCell(box, cell, ctx, query, key) {
  const { title, lines } = cellLines(cell, ctx.tokens, ctx.state.get(), ctx.dk, query, key);
  const heading = document.createElement("h4");
  heading.textContent = title;
  box.replaceChildren(heading, ...lines.map(line));
  box.dataset.cell = JSON.stringify({
    query,
    key,
    score: cell.score,
    scaled: cell.scaled,
    row_max: cell.rowMax,
    row_exp_sum: cell.rowExpSum,
    share: cell.share,
    masked: cell.masked,
    products: Array.from(cell.products),
  });
}

// Spell out the picked cell (view.q, view.k), asking for the layer's queries and keys first.
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
  const qk = ctx.source.peek(layer, "qk");
  if (!qk || qk.error) {
    delete box.dataset.cell;
    box.textContent = qk ? `Could not load the queries and keys: ${qk.error}` : "loading…";
    if (!qk) ctx.source.block(layer, "qk").then(ctx.redrawCell, ctx.redrawCell);
    return;
  }
  const { q, k } = headQueriesKeys(qk, head, ctx.header.n_heads, ctx.n, ctx.dk);
  writeCell(box, cellArithmetic(q, k, ctx.dk, ctx.values, ctx.n, query, key), ctx, query, key);
}
