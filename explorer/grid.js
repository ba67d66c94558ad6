// Every head at once: one small pattern per head (the trained model's setting: scaled by √d_k,
// no mask, temperature 1). Up to GRID_FROM_SCORES tokens it is drawn from the same layer blocks as
// the full view (prefetched there anyway); longer sentences fetch the engine's thumbnails,
// pooled by attention_core.pack.pool_blocks (query rows averaged, key columns summed, so a
// thumbnail row still sums to 1): 72 × 48² floats instead of every layer's n² scores.

const GRID_FROM_SCORES = 128;

function pooledPattern(scores, head, n, dk, keep, f, side, causal) {
  const st = computeStages(headScores(scores, head, n), n, dk,
    { scale: true, temperature: 1, causal });
  const m = keep.length;
  const out = new Float64Array(side * side);
  for (let r = 0; r < m; r++) {
    const br = Math.floor(r / f), rows = Math.min(f, m - br * f);
    for (let c = 0; c < m; c++) {
      out[br * side + Math.floor(c / f)] += st.pattern[keep[r] * n + keep[c]] / rows;
    }
  }
  return out;
}

function renderGrid({ data, parentElement, setTriggerValue }) {
  const { header } = data;
  const src = { api: data.api, model: data.model, text: data.text };
  const n = header.n_tokens;
  const holder = holderIn(parentElement);
  holder.innerHTML = '<div class="ax ax-heads"><div class="ax-status" role="status"></div>'
    + '<div class="ax-grid-heads"></div><div class="ax-tip" role="tooltip" hidden></div></div>';
  const root = holder.querySelector(".ax"), grid = root.querySelector(".ax-grid-heads");
  const tip = root.querySelector(".ax-tip");
  const keep = [];
  for (let i = 0; i < n; i++) if (!(data.hide_special && header.special[i])) keep.push(i);
  if (!keep.length) for (let i = 0; i < n; i++) keep.push(i);
  const tiles = new Map();
  const widest = Math.max(...data.rows.map((r) => r.heads.length));
  grid.style.gridTemplateColumns = `70px repeat(${widest}, minmax(0, 1fr))`;
  for (const row of data.rows) {
    const label = document.createElement("div");
    label.className = "ax-layer";
    label.textContent = `layer ${row.layer}`;
    grid.appendChild(label);
    label.style.gridColumn = "1";
    for (const [i, head] of row.heads.entries()) {
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
      grid.appendChild(canvas);
      tiles.set(`${row.layer}:${head}`, canvas);
    }
  }
  let alive = true, drawnLayers = 0;
  const layers = [...new Set(data.rows.map((r) => r.layer))];
  const fromScores = n <= GRID_FROM_SCORES;
  const part = fromScores ? "scores" : data.hide_special ? "thumbs_visible" : "thumbs";
  const f = Math.ceil(keep.length / data.max_tile), side = Math.ceil(keep.length / f);
  const thumb = (block, head) => fromScores
    ? pooledPattern(block, head, n, header.d_head, keep, f, side, !!header.causal)
    : block.subarray(head * side * side, (head + 1) * side * side);
  const drawLayer = (layer) => {
    if (!alive) return;
    const block = peekBlock(src, layer, part, () => drawLayer(layer));
    if (!block) return;
    if (block.error) {
      root.querySelector(".ax-status").textContent = `Could not load layer ${layer}: `
        + `${block.error}`;
      return;
    }
    for (const row of data.rows.filter((r) => r.layer === layer)) {
      for (const head of row.heads) {
        const values = thumb(block, head);
        const idx = [...Array(side).keys()];
        paint(tiles.get(`${layer}:${head}`), values, side, idx, idx, false, [0, 1],
          SCALES.weights, [0, 0, 0]);
      }
    }
    root.dataset.drawn = String(++drawnLayers);
  };
  for (const layer of layers) drawLayer(layer);

  const describe = (canvas) => {
    const layer = Number(canvas.dataset.layer), head = Number(canvas.dataset.head);
    const lines = [`layer ${layer}, head ${head}${sharing(header, head)}`];
    for (const [label, values] of Object.entries(data.metrics)) {
      lines.push(`${label}: ${values[layer][head].toFixed(3)}`);
    }
    return lines.join("\n");
  };
  grid.addEventListener("mousemove", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    if (!canvas) { tip.hidden = true; return; }
    tip.textContent = describe(canvas);
    const box = root.getBoundingClientRect();
    tip.style.left = `${e.clientX - box.left + 14}px`;
    tip.style.top = `${e.clientY - box.top + 14}px`;
    tip.hidden = false;
  });
  grid.addEventListener("mouseleave", () => { tip.hidden = true; });
  const open = (canvas) => setTriggerValue("open",
    { layer: Number(canvas.dataset.layer), head: Number(canvas.dataset.head) });
  grid.addEventListener("click", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    if (canvas) open(canvas);
  });
  grid.addEventListener("keydown", (e) => {
    const canvas = e.target.closest(".ax-thumb");
    if (canvas && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); open(canvas); }
  });
  return () => { alive = false; };
}
