// The attention explorer: one head's four stages for a sentence, every switch redrawn here in the
// browser. Python (explorer/__init__.py) mounts it with a small JSON `data`: the sentence, its
// tokens and shapes, and the view to start from. The numbers come from fetch.js, the arithmetic
// from stages.js, the pixels from draw.js. The server hears of a change only after the redraw
// (setStateValue, debounced), so the sidebar and the other pages follow the chosen head.

const STAGES = ["scores", "scaled", "masked", "pattern"];
const STAGE_TITLES = {
  scores: "1 · scores Q·Kᵀ", scaled: "2 · scaled", masked: "3 · masked", pattern: "4 · softmax",
};
const TELL_AFTER_MS = 350;
const VIEWS = (globalThis.__attentionViews ||= new Map());  // view state by component key

const SKELETON = `
<div class="ax" tabindex="0" aria-label="Attention explorer">
  <div class="ax-top"><h3 class="ax-title"></h3><span class="ax-status" role="status"></span></div>
  <div class="ax-controls">
    <label>Layer <button data-step="layer:-1" aria-label="previous layer">−</button>
      <select data-name="layer"></select><button data-step="layer:1" aria-label="next layer">+</button></label>
    <label>Head <button data-step="head:-1" aria-label="previous head">−</button>
      <select data-name="head"></select><button data-step="head:1" aria-label="next head">+</button></label>
    <label><input type="checkbox" data-name="causal"> <span class="ax-causal">Causal mask</span></label>
    <label><input type="checkbox" data-name="scale"> Scale by √d_k</label>
    <label>Temperature <input type="range" data-name="temp" min="0.05" max="5" step="0.05">
      <output class="ax-temp"></output></label>
    <label><input type="checkbox" data-name="transpose"> Columns = queries</label>
    <label class="ax-special"><input type="checkbox" data-name="hide_special"> Hide [CLS] / [SEP]</label>
  </div>
  <p class="ax-hint"></p>
  <div class="ax-grid"></div>
  <div class="ax-tip" role="tooltip" hidden></div>
  <div class="ax-cell" aria-live="polite"></div>
</div>`;

const PANEL = `
<figcaption class="ax-stage"></figcaption>
<div class="ax-plot"><div class="ax-rows"></div><canvas class="ax-map"></canvas>
  <div class="ax-bar"><canvas></canvas><span class="ax-hi"></span><span class="ax-lo"></span></div>
  <div class="ax-cols"></div><div class="ax-box" hidden></div><div class="ax-pick" hidden></div></div>
<p class="ax-caption"></p>`;

function fmt(x, digits = 7) {
  if (x === -Infinity) return "−∞";
  return (x < 0 ? "−" : "") + Math.abs(x).toFixed(digits);
}

function isTyping(event) {
  const el = event.composedPath()[0];
  if (!(el instanceof Element)) return false;
  const role = el.getAttribute("role") || "";
  return /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(el.tagName) || el.isContentEditable
    || /slider|textbox|combobox|listbox|option|spinbutton|button|menu|tab/.test(role);
}

// Streamlit runs the module again when a view's data changes but calls the returned cleanup
// only on unmount: run the previous run's cleanup first, or listeners pile up run after run.
const CLEANUPS = (globalThis.__attentionCleanups ||= new WeakMap());

export default function (args) {
  const previous = CLEANUPS.get(args.parentElement);
  if (previous && isEcho(args, previous.data)) return previous.remove;
  previous?.cleanup();
  const render = { grid: renderGrid, step: renderStep }[args.data.mode] || renderView;
  const cleanup = render(args);
  const entry = { data: args.data, cleanup };
  entry.remove = () => {
    if (CLEANUPS.get(args.parentElement) === entry) CLEANUPS.delete(args.parentElement);
    cleanup();
  };
  CLEANUPS.set(args.parentElement, entry);
  return entry.remove;
}

// The server's rerun after a tell sends the view back: the same sentence, and the view this
// browser itself reported. Nothing to redraw (and redrawing would drop the keyboard focus).
function isEcho({ data, key }, before) {
  if (data.mode || before.mode) return false;  // the grid and a step redraw on every run
  const { view, ...rest } = data, { view: _, ...was } = before;
  const st = VIEWS.get(key);
  if (!st || JSON.stringify(rest) !== JSON.stringify(was)) return false;
  const echoed = JSON.stringify(view) === st.told;
  if (echoed) st.given = st.told;
  return echoed;
}

function renderView({ data, parentElement, setStateValue, key }) {
  const { header, view: given } = data;
  const src = { api: data.api, model: data.model, text: data.text };
  const n = header.n_tokens, dk = header.d_head, tokens = header.tokens;
  const sentence = `${src.model}\u0000${src.text}`;
  let st = VIEWS.get(key);
  if (!st || st.sentence !== sentence) {
    st = { sentence, view: { ...given }, told: JSON.stringify(given), given: JSON.stringify(given),
      window: null };
    VIEWS.set(key, st);
  } else if (JSON.stringify(given) !== st.given) {  // the server moved the view (sidebar, link)
    st.given = JSON.stringify(given);
    if (st.given !== st.told) st.view = { ...given };
  }
  const view = st.view;
  if (header.causal) view.causal = true;  // a decoder's own mask: part of the model, not a switch
  const inline = data.inline ? decodeFloat32(data.inline) : null;  // small views carry scores
  const allowed = (name) => !data.controls || data.controls.includes(name);

  const holder = holderIn(parentElement);
  holder.innerHTML = SKELETON;  // fixed markup only: every token goes in as textContent
  const root = holder.querySelector(".ax");
  const $ = (sel) => root.querySelector(sel);
  const grid = $(".ax-grid");
  const drawnStages = data.stages || STAGES;
  if (drawnStages.length === 1) grid.style.gridTemplateColumns = "minmax(0, 1fr)";
  const panels = drawnStages.map((stage) => {
    const fig = document.createElement("figure");
    fig.className = "ax-panel";
    fig.dataset.stage = stage;
    fig.innerHTML = PANEL;
    grid.appendChild(fig);
    paintColourBar(fig.querySelector(".ax-bar canvas"),
      stage === "pattern" ? SCALES.weights : SCALES.signed);
    return fig;
  });
  if (data.controls && !data.controls.length) {  // a fixed small multiple: the page explains it
    $(".ax-controls").hidden = true;
    $(".ax-hint").hidden = true;
  }
  if (data.controls) {  // a page may show only some controls (the tour: layer and head)
    for (const el of root.querySelectorAll(".ax-controls [data-name]")) {
      if (!data.controls.includes(el.dataset.name)) el.closest("label").hidden = true;
    }
  }
  const fill = (select, count) => {
    for (let i = 0; i < count; i++) select.add(new Option(String(i), String(i)));
  };
  describeModel(root, header);
  fill(root.querySelector('[data-name="layer"]'), header.n_layers);
  fill(root.querySelector('[data-name="head"]'), header.n_heads);

  let tellTimer = 0, alive = true, stages = null, shown = null, blank = null;

  function visible() {
    const keep = [];
    for (let i = 0; i < n; i++) if (!(view.hide_special && header.special[i])) keep.push(i);
    return keep.length ? keep : [...Array(n).keys()];
  }

  function windowed(keep) {
    const w = st.window;
    if (!w || w.r1 > keep.length || w.c1 > keep.length) {
      st.window = null;
      return { rows: keep, cols: keep };
    }
    return { rows: keep.slice(w.r0, w.r1), cols: keep.slice(w.c0, w.c1) };
  }

  function syncControls() {
    $(".ax-title").textContent = data.title
      || `layer ${view.layer}, head ${view.head}${sharing(header, view.head)}`;
    for (const el of root.querySelectorAll("[data-name]")) {
      const v = view[el.dataset.name];
      if (el.type === "checkbox") el.checked = !!v; else el.value = String(v);
    }
    $(".ax-temp").textContent = Number(view.temp).toFixed(2);
  }

  function captions(range) {
    const across = view.transpose ? "down each column" : "across each row";
    const div = view.scale ? `divided by √d_k = ${Math.sqrt(dk).toFixed(2)}` : "not divided by √d_k";
    const temp = view.temp !== 1 ? `, ÷ temperature ${view.temp}` : "";
    const cls = view.hide_special ? " ([CLS]/[SEP] hidden, so what is shown sums to less)" : "";
    return {
      scores: `Raw query·key dot products: large means the key answers the query's question. `
        + (range.scores ? `Colours run from ${fmt(range.scores[0], 2)} to `
          + `${fmt(range.scores[1], 2)}.` : ""),
      scaled: `Scores ${div}${temp}: the numbers softmax turns into weights.`,
      masked: maskCaption(header, view.causal),
      pattern: `Softmax: the weights sum to 1 ${across}${cls}.`,
    };
  }

  function drawPanels() {
    const keep = visible();
    const { rows, cols } = windowed(keep);
    const dispRows = view.transpose ? cols : rows, dispCols = view.transpose ? rows : cols;
    shown = { keep, rows: dispRows, cols: dispCols };
    const size = panelSize();
    blank ||= themeRgb(root, "--st-secondary-background-color", "#f0f2f6");
    const range = {};
    for (const [i, stage] of drawnStages.entries()) {
      const fig = panels[i], values = stages[stage];
      range[stage] = colourRange(values, n, rows, cols, stage !== "pattern");
      const map = fig.querySelector(".ax-map");
      map.style.width = map.style.height = `${size}px`;
      paint(map, values, n, dispRows, dispCols, view.transpose, range[stage],
        stage === "pattern" ? SCALES.weights : SCALES.signed, blank);
      fig.querySelector(".ax-stage").textContent = STAGE_TITLES[stage];
      fig.querySelector(".ax-hi").textContent = fmt(range[stage][1], 2);
      fig.querySelector(".ax-lo").textContent = fmt(range[stage][0], 2);
      labelAxis(fig.querySelector(".ax-rows"), dispRows, tokens, size, true);
      labelAxis(fig.querySelector(".ax-cols"), dispCols, tokens, size, false);
      fig.querySelector(".ax-rows").style.height = `${size}px`;
      fig.querySelector(".ax-bar").style.height = `${size}px`;
      markPick(fig, map, dispRows, dispCols, size);
      fig.querySelector(".ax-cols").style.width = `${size}px`;
    }
    const text = captions(range);
    for (const [i, stage] of drawnStages.entries()) {
      panels[i].querySelector(".ax-caption").textContent = text[stage];
    }
    const axis = view.transpose ? "columns are queries, rows are keys" : "rows are queries, "
      + "columns are keys";
    const zoom = st.window ? `Showing tokens ${rows[0]}–${rows[rows.length - 1]} × `
      + `${cols[0]}–${cols[cols.length - 1]}; double-click to see all. ` : "";
    const keys = allowed("head") && allowed("layer") ? "; ← → change the head, ↑ ↓ the layer "
      + "(after a click on the view)" : "";
    const click = inline ? "" : ", click it for its arithmetic";
    $(".ax-hint").textContent = `${zoom}Here ${axis}. Hover a cell for its value${click}, drag `
      + `or scroll to zoom, double-click to see all${keys}.`;
  }

  // Outline the picked cell (the one the arithmetic below spells out) in every panel.
  function markPick(fig, map, dispRows, dispCols, size) {
    const mark = fig.querySelector(".ax-pick");
    const [row, col] = view.transpose ? [view.k, view.q] : [view.q, view.k];
    const r = dispRows.indexOf(row), c = dispCols.indexOf(col);
    mark.hidden = inline || r < 0 || c < 0;
    if (mark.hidden) return;
    const h = size / dispRows.length, w = size / dispCols.length;
    Object.assign(mark.style, {
      left: `${map.offsetLeft + map.clientLeft + c * w}px`,
      top: `${map.offsetTop + map.clientTop + r * h}px`,
      width: `${Math.max(w, 3)}px`, height: `${Math.max(h, 3)}px`,
    });
  }

  function panelSize() {
    const width = root.getBoundingClientRect().width || 900;
    const across = drawnStages.length > 1 ? 2 : 1;
    return Math.max(100, Math.min(460, Math.floor(width / across) - 140));
  }

  function draw() {
    if (!alive) return;
    syncControls();
    const scores = inline || peekBlock(src, view.layer, "scores", draw);
    if (!scores || scores.error) {
      $(".ax-status").textContent = scores ? `Could not load layer ${view.layer}: `
        + `${scores.error}. Start the app with ./run.sh (streamlit run server.py).`
        : `loading layer ${view.layer}…`;
      return;
    }
    $(".ax-status").textContent = "";
    const sw = { scale: view.scale, temperature: Number(view.temp), causal: view.causal };
    stages = computeStages(headScores(scores, view.head, n), n, dk, sw, stages);
    stages.key = `${view.layer}:${view.head}`;
    drawPanels();
    drawCell();
    st.drawn = (st.drawn || 0) + 1;  // counts on across reruns (benchmarks and tests wait on it)
    root.dataset.drawn = String(st.drawn);
    root.dataset.view = JSON.stringify(view);
    afterDraw();
  }

  function drawCell() {
    const box = $(".ax-cell");
    const { q: query, k: keyTok } = view;
    if (inline) { box.hidden = true; return; }  // no queries and keys came with it
    if (query == null || query < 0 || keyTok < 0 || query >= n || keyTok >= n) {
      box.textContent = "Click a cell to see where its number comes from.";
      return;
    }
    const qk = peekBlock(src, view.layer, "qk", drawCell);
    if (!qk || qk.error) {
      delete box.dataset.cell;
      box.textContent = qk ? `Could not load the queries and keys: ${qk.error}` : "loading…";
      return;
    }
    const per = n * dk, h = view.head;
    const q = qk.subarray(h * per, (h + 1) * per);
    const k = qk.subarray((header.n_heads + h) * per, (header.n_heads + h + 1) * per);
    writeCell(box, cellArithmetic(q, k, dk, stages, n, query, keyTok), query, keyTok);
  }

  function writeCell(box, cell, query, keyTok) {
    const line = (label, text, cls) => {
      const p = document.createElement("p");
      const b = document.createElement("strong");
      b.textContent = label;
      const value = document.createElement("span");
      value.className = cls;
      value.textContent = text;
      p.append(b, " ", value);
      return p;
    };
    const terms = Array.from(cell.products.slice(0, 4), (x) => `(${fmt(x, 3)})`).join(" + ");
    const div = view.scale ? `÷ √${dk} (${Math.sqrt(dk).toFixed(3)})` : "÷ 1 (scaling off)";
    const temp = Number(view.temp) !== 1 ? ` ÷ temperature ${view.temp}` : "";
    const title = document.createElement("h4");
    title.textContent = `Where one number comes from: query “${tokens[query]}” (${query}) → `
      + `key “${tokens[keyTok]}” (${keyTok})`;
    box.replaceChildren(
      title,
      line("q·k", `= sum over ${dk} dimensions of q_e·k_e = ${terms} + … = `, "ax-n-sum"),
      line("", fmt(cell.score), "ax-n-score"),
      line("scaled", `= ${fmt(cell.score, 4)} ${div}${temp} = ${fmt(cell.scaled)}`,
        "ax-n-scaled"),
      cell.masked
        ? line("masked:", "this key is hidden from this query, so its weight is exactly 0.",
          "ax-n-masked")
        : line("softmax share", `= exp(${fmt(cell.scaled, 4)} − ${fmt(cell.rowMax, 4)}) ÷ `
          + `${fmt(cell.rowExpSum, 4)} = ${fmt(cell.share)}`, "ax-n-share"),
    );
    box.dataset.cell = JSON.stringify({
      query, key: keyTok, score: cell.score, scaled: cell.scaled, row_max: cell.rowMax,
      row_exp_sum: cell.rowExpSum, share: cell.share, masked: cell.masked,
      products: Array.from(cell.products),
    });
  }

  function afterDraw() {
    if (data.tell === false) return;  // a fixed view: neither the URL nor the server follows it
    const url = new URL(window.location.href);
    for (const name of Object.keys(data.defaults)) {  // the settings this page keeps in its URL
      const value = view[name];
      const enc = typeof value === "boolean" ? (value ? "1" : "0") : String(value);
      if (value === data.defaults[name]) url.searchParams.delete(name);
      else url.searchParams.set(name, enc);
    }
    if (url.href !== window.location.href) window.history.replaceState(window.history.state, "", url);
    clearTimeout(tellTimer);
    tellTimer = setTimeout(() => {
      const told = JSON.stringify(view);
      if (told === st.told) return;
      st.told = told;
      setStateValue("view", { ...view });
    }, TELL_AFTER_MS);
  }

  function set(changes) {
    clearTimeout(tellTimer);  // the server hears of a view only once it is drawn
    Object.assign(view, changes);
    view.layer = Math.max(0, Math.min(header.n_layers - 1, view.layer));
    view.head = Math.max(0, Math.min(header.n_heads - 1, view.head));
    draw();
  }

  function cellAt(event) {
    const map = event.currentTarget, rect = map.getBoundingClientRect();
    // The image fills the content box, inside the canvas's 1 px border.
    const x = event.clientX - rect.left - map.clientLeft, y = event.clientY - rect.top - map.clientTop;
    const c = Math.floor((x / map.clientWidth) * shown.cols.length);
    const r = Math.floor((y / map.clientHeight) * shown.rows.length);
    if (r < 0 || c < 0 || r >= shown.rows.length || c >= shown.cols.length) return null;
    const row = shown.rows[r], col = shown.cols[c];
    const [query, keyTok] = view.transpose ? [col, row] : [row, col];
    return { r, c, query, key: keyTok };
  }

  function showTip(event, stage) {
    const tip = $(".ax-tip"), cell = cellAt(event);
    if (!cell || !stages) { tip.hidden = true; return; }
    const value = stages[stage][cell.query * n + cell.key];
    tip.textContent = `${STAGE_TITLES[stage]} · query “${tokens[cell.query]}” (${cell.query}) → `
      + `key “${tokens[cell.key]}” (${cell.key}): ${fmt(value)}`;
    tip.dataset.value = String(value);
    const box = root.getBoundingClientRect();
    tip.style.left = `${event.clientX - box.left + 14}px`;
    tip.style.top = `${event.clientY - box.top + 14}px`;
    tip.hidden = false;
  }

  function zoomTo(r0, r1, c0, c1) {
    const len = shown.keep.length;
    const clamp = (a, b) => [Math.max(0, Math.min(a, len - 1)), Math.max(1, Math.min(b, len))];
    [r0, r1] = clamp(r0, r1);
    [c0, c1] = clamp(c0, c1);
    if (r1 - r0 >= len && c1 - c0 >= len) st.window = null;
    else if (r1 > r0 && c1 > c0) st.window = { r0, r1, c0, c1 };
    draw();
  }

  // shown rows/cols are token ids; the window counts positions in the visible list.
  function position(list, index) {
    return shown.keep.indexOf(list[index]);
  }

  function onWheel(event) {
    if (!shown) return;
    event.preventDefault();
    const cell = cellAt(event);
    if (!cell) return;
    const factor = event.deltaY < 0 ? 0.7 : 1 / 0.7;
    const span = (list, at) => {
      const lo = position(list, 0), hi = position(list, list.length - 1) + 1;
      const mid = position(list, at);
      const size = Math.max(4, Math.round((hi - lo) * factor));
      const start = Math.round(mid - ((mid - lo) / (hi - lo)) * size);
      return [start, start + size];
    };
    const [r0, r1] = span(shown.rows, cell.r), [c0, c1] = span(shown.cols, cell.c);
    view.transpose ? zoomTo(c0, c1, r0, r1) : zoomTo(r0, r1, c0, c1);
  }

  function onDrag(event, fig) {
    const start = cellAt(event);
    if (!start) return;
    const map = event.currentTarget, box = fig.querySelector(".ax-box");
    const rect = map.getBoundingClientRect(), x0 = event.clientX, y0 = event.clientY;
    const move = (e) => {
      box.hidden = false;
      Object.assign(box.style, {
        left: `${map.offsetLeft + Math.min(x0, e.clientX) - rect.left}px`,
        top: `${map.offsetTop + Math.min(y0, e.clientY) - rect.top}px`,
        width: `${Math.abs(e.clientX - x0)}px`, height: `${Math.abs(e.clientY - y0)}px`,
      });
    };
    const up = (e) => {
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
      box.hidden = true;
      if (Math.abs(e.clientX - x0) + Math.abs(e.clientY - y0) < 4) {
        set({ q: start.query, k: start.key });
        return;
      }
      const end = cellAt({ currentTarget: map, clientX: Math.min(Math.max(e.clientX,
        rect.left), rect.right - 1), clientY: Math.min(Math.max(e.clientY, rect.top),
        rect.bottom - 1) });
      if (!end) return;
      const rs = [position(shown.rows, start.r), position(shown.rows, end.r)].sort((a, b) => a - b);
      const cs = [position(shown.cols, start.c), position(shown.cols, end.c)].sort((a, b) => a - b);
      if (view.transpose) zoomTo(cs[0], cs[1] + 1, rs[0], rs[1] + 1);
      else zoomTo(rs[0], rs[1] + 1, cs[0], cs[1] + 1);
    };
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  }

  for (const [i, fig] of panels.entries()) {
    const map = fig.querySelector(".ax-map");
    map.addEventListener("mousemove", (e) => showTip(e, drawnStages[i]));
    map.addEventListener("mouseleave", () => { $(".ax-tip").hidden = true; });
    map.addEventListener("mousedown", (e) => {
      e.preventDefault();
      root.focus({ preventScroll: true });  // a scroll here would move the cell under the pointer
      onDrag(e, fig);
    });
    map.addEventListener("wheel", onWheel, { passive: false });
    map.addEventListener("dblclick", () => { st.window = null; draw(); });
  }
  root.addEventListener("change", (e) => {
    const name = e.target.dataset.name;
    if (!name) return;
    set({ [name]: e.target.type === "checkbox" ? e.target.checked : Number(e.target.value) });
  });
  root.addEventListener("input", (e) => {
    if (e.target.dataset.name === "temp") set({ temp: Number(e.target.value) });
  });
  root.addEventListener("click", (e) => {
    const step = e.target.closest && e.target.closest("[data-step]");
    if (!step) return;
    const [name, by] = step.dataset.step.split(":");
    set({ [name]: view[name] + Number(by) });
  });
  root.addEventListener("keydown", (e) => {
    if ((e.key !== "ArrowUp" && e.key !== "ArrowDown") || isTyping(e) || !allowed("layer")) return;
    e.preventDefault();
    set({ layer: view.layer + (e.key === "ArrowUp" ? -1 : 1) });
  });
  const onKey = (e) => {
    if ((e.key !== "ArrowLeft" && e.key !== "ArrowRight") || isTyping(e) || e.altKey
      || e.ctrlKey || e.metaKey || !allowed("head")) return;
    e.preventDefault();
    set({ head: view.head + (e.key === "ArrowLeft" ? -1 : 1) });
  };
  document.addEventListener("keydown", onKey);
  const resize = new ResizeObserver(() => { if (stages) drawPanels(); });
  resize.observe(root);

  draw();
  if (!inline) prefetch(src, header, view.layer, data.prefetch_bytes);
  return () => {
    alive = false;
    clearTimeout(tellTimer);
    document.removeEventListener("keydown", onKey);
    resize.disconnect();
  };
}

// Once the first view is drawn, ask for the other layers' scores too when the whole sentence
// is small enough (≤ prefetchBytes), so a layer switch never waits.
function prefetch(src, header, first, prefetchBytes) {
  const n = header.n_tokens;
  const all = 4 * header.n_layers * header.n_heads * n * n;
  if (all > prefetchBytes) return;
  const next = (layer) => {
    if (layer >= header.n_layers) return;
    if (layer === first) { next(layer + 1); return; }
    const got = peekBlock(src, layer, "scores", () => next(layer + 1));
    if (got) next(layer + 1);
  };
  const start = () => next(0);
  if (peekBlock(src, first, "scores", start)) start();
}
