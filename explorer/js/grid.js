// Every head at once: one small pattern per head (the trained model's setting: scaled by √d_k,
// no mask, temperature 1). Up to GRID_FROM_SCORES tokens it is drawn from the same layer blocks
// as the full view (prefetched there anyway); longer sentences fetch the engine's thumbnails,
// pooled by attention_core.pack.pool_blocks (query rows averaged, key columns summed, so a
// thumbnail row still sums to 1): 72 × 48² floats instead of every layer's n² scores.

import { holderIn, paint, SCALES } from "./draw.js";
import { headsPerKv, sharing, startsGroup } from "./model.js";
import { placeTip } from "./pointer.js";
import { computeStages, headScores, poolPattern, visibleTokens } from "./stages.js";

const GRID_FROM_SCORES = 128;

function thumbCanvas(header, row, i, head) {
  const canvas = document.createElement("canvas");
  canvas.className = "ax-thumb";
  // Heads in number order: a gap before each group that shares keys and values (GQA).
  const per = headsPerKv(header.n_heads, header.n_kv_heads);
  if (startsGroup(head, per) && i > 0 && row.heads[i - 1] === head - 1) {
    canvas.classList.add("ax-kv-start");
  }
  canvas.dataset.layer = String(row.layer);
  canvas.dataset.head = String(head);
  canvas.setAttribute("role", "button");
  canvas.setAttribute("aria-label", `open layer ${row.layer}, head ${head}`);
  canvas.tabIndex = 0;
  return canvas;
}

function buildGrid(grid, data) {
  const tiles = new Map();
  const widest = Math.max(...data.rows.map((r) => r.heads.length));
  grid.style.gridTemplateColumns = `70px repeat(${widest}, minmax(0, 1fr))`;
  for (const row of data.rows) {
    const label = document.createElement("div");
    label.className = "ax-layer";
    label.textContent = `layer ${row.layer}`;
    label.style.gridColumn = "1";
    grid.appendChild(label);
    for (const [i, head] of row.heads.entries()) {
      const canvas = thumbCanvas(data.header, row, i, head);
      grid.appendChild(canvas);
      tiles.set(`${row.layer}:${head}`, canvas);
    }
  }
  return tiles;
}

// How a head's thumbnail is made: from the scores (small sentences) or the engine's thumbnails.
function thumbnails(data) {
  const { header } = data;
  const n = header.n_tokens;
  const keep = visibleTokens(header, data.hide_special);
  const f = Math.ceil(keep.length / data.max_tile);
  const side = Math.ceil(keep.length / f);
  const fromScores = n <= GRID_FROM_SCORES;
  const part = fromScores ? "scores" : data.hide_special ? "thumbs_visible" : "thumbs";
  const sw = { scale: true, temperature: 1, causal: !!header.causal };
  const thumb = (block, head) => {
    if (!fromScores) return block.subarray(head * side * side, (head + 1) * side * side);
    const st = computeStages(headScores(block, head, n), n, header.d_head, sw);
    return poolPattern(st.pattern, n, keep, f, side);
  };
  return { part, side, thumb };
}

function wireGrid(root, grid, data, onOpen) {
  const tip = root.querySelector(".ax-tip");
  const describe = (canvas) => {
    const layer = Number(canvas.dataset.layer);
    const head = Number(canvas.dataset.head);
    const lines = [`layer ${layer}, head ${head}${sharing(data.header, head)}`];
    for (const [label, values] of Object.entries(data.metrics)) {
      lines.push(`${label}: ${values[layer][head].toFixed(3)}`);
    }
    return lines.join("\n");
  };
  grid.addEventListener("mousemove", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    tip.hidden = !canvas;
    if (!canvas) return;
    tip.textContent = describe(canvas);
    placeTip(tip, root, e);
  });
  grid.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
  const open = (canvas) =>
    onOpen({ layer: Number(canvas.dataset.layer), head: Number(canvas.dataset.head) });
  grid.addEventListener("click", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    if (canvas) open(canvas);
  });
  grid.addEventListener("keydown", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    if (canvas && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      open(canvas);
    }
  });
}

// Draw the grid of `data` (header, rows: [{layer, heads}], metrics, hide_special, max_tile)
// into `parent` from `source`; a click or Enter on a head calls onOpen({layer, head}).
export function renderGrid(parent, data, source, onOpen) {
  const holder = holderIn(parent);
  holder.innerHTML =
    '<div class="ax ax-heads"><div class="ax-status" role="status"></div>' +
    '<div class="ax-grid-heads"></div><div class="ax-tip" role="tooltip" hidden></div></div>';
  const root = holder.querySelector(".ax");
  const grid = root.querySelector(".ax-grid-heads");
  const tiles = buildGrid(grid, data);
  const { part, side, thumb } = thumbnails(data);
  const idx = [...Array(side).keys()];
  let alive = true;
  let drawnLayers = 0;
  const drawLayer = (layer) => {
    if (!alive) return;
    const block = source.peek(layer, part);
    if (!block)
      source.block(layer, part).then(
        () => drawLayer(layer),
        () => drawLayer(layer),
      );
    if (!block) return;
    if (block.error) {
      root.querySelector(".ax-status").textContent =
        `Could not load layer ${layer}: ${block.error}`;
      return;
    }
    for (const row of data.rows.filter((r) => r.layer === layer)) {
      for (const head of row.heads) {
        const tile = tiles.get(`${layer}:${head}`);
        paint(tile, thumb(block, head), side, idx, idx, false, [0, 1], SCALES.weights, [0, 0, 0]);
      }
    }
    root.dataset.drawn = String(++drawnLayers);
  };
  for (const layer of new Set(data.rows.map((r) => r.layer))) drawLayer(layer);
  wireGrid(root, grid, data, onOpen);
  return () => {
    alive = false;
  };
}
