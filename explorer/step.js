// One generation step of a decoder: the newest token's attention over every token so far, one
// row per query head, for any layer. Every layer's rows come with the view (a few hundred kB at
// most), so the layer buttons redraw here, with no server round trip; the page sends a new view
// only when the model writes a token. Rows of heads that share a key/value head are grouped.

const STEP_SKELETON = `
<div class="ax ax-step" tabindex="0" aria-label="The new token's attention, per head">
  <div class="ax-top"><h3 class="ax-title"></h3></div>
  <div class="ax-controls"><label>Layer <button data-step="-1" aria-label="previous layer">−</button>
    <select data-name="layer"></select><button data-step="1" aria-label="next layer">+</button>
  </label></div>
  <div class="ax-plot"><div class="ax-rows"></div><canvas class="ax-map"></canvas>
    <div class="ax-bar"><canvas></canvas><span class="ax-hi">1</span><span class="ax-lo">0</span>
    </div><div class="ax-cols"></div></div>
  <div class="ax-tip" role="tooltip" hidden></div>
</div>`;

const STEP_LAYERS = (globalThis.__attentionStepLayers ||= new Map());  // layer shown, by key

function renderStep({ data, parentElement, key }) {
  const { n_layers: nLayers, n_heads: nHeads, n_kv_heads: nKv, tokens } = data;
  const n = tokens.length;
  const rows = decodeFloat32(data.rows);  // [layer, head, key], float32 as the engine's
  const holder = holderIn(parentElement);
  holder.innerHTML = STEP_SKELETON;  // fixed markup; tokens only ever go in as textContent
  const root = holder.querySelector(".ax"), $ = (sel) => root.querySelector(sel);
  const map = $(".ax-map"), select = $('[data-name="layer"]'), tip = $(".ax-tip");
  for (let l = 0; l < nLayers; l++) select.add(new Option(String(l), String(l)));
  paintColourBar($(".ax-bar canvas"), SCALES.weights);
  const per = headsPerKv(nHeads, nKv), keys = [...Array(n).keys()];
  // Drawn rows: the heads, with a blank row between two key/value groups (its index is -1).
  const drawn = [];
  for (let h = 0; h < nHeads; h++) drawn.push(...(startsGroup(h, per) ? [-1, h] : [h]));
  const labels = drawn.map((h) => (h < 0 ? "" : headLabel(h, per)));
  const blank = themeRgb(root, "--st-background-color", "#ffffff");
  // The layer the visitor picked survives the next token's redraw.
  let layer = Math.max(0, Math.min(nLayers - 1, STEP_LAYERS.get(key) ?? data.layer));

  function draw() {
    const values = new Float32Array(drawn.length * n).fill(-Infinity);
    for (const [r, h] of drawn.entries()) {
      const at = (layer * nHeads + h) * n;
      if (h >= 0) values.set(rows.subarray(at, at + n), r * n);
    }
    const width = Math.min(720, Math.max(240, 18 * n)), height = 22 * drawn.length;
    map.style.width = `${width}px`;
    map.style.height = `${height}px`;
    const order = [...drawn.keys()];
    paint(map, values, n, order, keys, false, [0, 1], SCALES.weights, blank);
    labelAxis($(".ax-rows"), order, labels, height, true);
    labelAxis($(".ax-cols"), keys, tokens, width, false);
    $(".ax-rows").style.height = $(".ax-bar").style.height = `${height}px`;
    select.value = String(layer);
    $(".ax-title").textContent = `layer ${layer}: one row per head`;
    root.dataset.layer = String(layer);
    root.dataset.n = String(n);
    root.dataset.drawnAt = String(performance.now());  // benchmarks time a step to here
    root.dataset.drawn = String(Number(root.dataset.drawn || 0) + 1);
  }

  function showTip(event) {
    const rect = map.getBoundingClientRect();
    const c = Math.floor(((event.clientX - rect.left - map.clientLeft) / map.clientWidth) * n);
    const y = (event.clientY - rect.top - map.clientTop) / map.clientHeight;
    const r = Math.floor(y * drawn.length);
    const h = drawn[r];
    if (c < 0 || c >= n || h === undefined || h < 0) { tip.hidden = true; return; }
    const value = rows[(layer * nHeads + h) * n + c];
    tip.textContent = `head ${h} (${labels[r]}) → key “${tokens[c]}” (${c}): ${value.toFixed(4)}`;
    tip.dataset.value = String(value);
    const box = root.getBoundingClientRect();
    tip.style.left = `${event.clientX - box.left + 14}px`;
    tip.style.top = `${event.clientY - box.top + 14}px`;
    tip.hidden = false;
  }

  const set = (l) => {
    layer = Math.max(0, Math.min(nLayers - 1, l));
    STEP_LAYERS.set(key, layer);
    draw();
  };
  select.addEventListener("change", () => set(Number(select.value)));
  root.addEventListener("click", (e) => {
    const step = e.target.closest && e.target.closest("[data-step]");
    if (step) set(layer + Number(step.dataset.step));
  });
  root.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowUp" && e.key !== "ArrowDown") return;
    e.preventDefault();
    set(layer + (e.key === "ArrowUp" ? -1 : 1));
  });
  map.addEventListener("mousemove", showTip);
  map.addEventListener("mouseleave", () => { tip.hidden = true; });
  draw();
  return () => {};
}
