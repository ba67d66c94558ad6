// Drawing: colour scales, one heatmap on a canvas (one pixel per cell, scaled up by CSS), its
// colour bar, and token labels as real text sized (and, past what fits, thinned) by labels.js,
// or ticks along a time axis.

import { labelFit, slotLeft } from "./labels.js";

// Colour-blind-safe scales, as the Plotly charts use: Cividis for weights (0 and up), a
// blue-grey-red diverging scale for signed scores.
const CIVIDIS = [
  [0, 32, 77],
  [0, 52, 110],
  [57, 72, 108],
  [87, 92, 109],
  [112, 113, 115],
  [138, 135, 121],
  [166, 157, 117],
  [196, 181, 108],
  [228, 207, 91],
  [253, 234, 69],
];
const DIVERGING = [
  [5, 10, 172],
  [106, 137, 247],
  [190, 190, 190],
  [220, 170, 132],
  [230, 145, 90],
  [178, 10, 28],
];
const DIVERGING_AT = [0, 0.35, 0.5, 0.6, 0.7, 1];

function lut(stops, at) {
  const table = new Uint8ClampedArray(256 * 3);
  const pos = at || stops.map((_, i) => i / (stops.length - 1));
  for (let i = 0; i < 256; i++) {
    const x = i / 255;
    let j = 1;
    while (j < pos.length - 1 && x > pos[j]) j++;
    const t = (x - pos[j - 1]) / (pos[j] - pos[j - 1]);
    for (let c = 0; c < 3; c++) {
      table[i * 3 + c] = stops[j - 1][c] + t * (stops[j][c] - stops[j - 1][c]);
    }
  }
  return table;
}
export const SCALES = { weights: lut(CIVIDIS), signed: lut(DIVERGING, DIVERGING_AT) };

// The stages coloured as signed numbers (the rest are weights, 0 and up).
const SIGNED = new Set(["scores", "scaled", "masked"]);

// The scale a stage is coloured with.
export function scaleOf(stage) {
  return SIGNED.has(stage) ? SCALES.signed : SCALES.weights;
}

// The largest |finite value| over the shown rows × cols (token ids), or 0.
function largest(values, n, rows, cols) {
  let big = 0;
  for (const r of rows) {
    const row = r * n;
    for (const c of cols) {
      const v = values[row + c];
      if (v !== -Infinity && (v > big || -v > big)) big = Math.abs(v);
    }
  }
  return big;
}

// The value range a stage is coloured over: the pattern and the rollout 0..1 (shares); the
// norm-weighted pattern 0..its largest shown value (it is not a share: a weight × a length);
// cross-attention 0..its largest (a head's weights over 1500 frames peak near 0.1-0.2, which
// 0..1 would draw almost black); signed stages ±max|finite| over the shown rows × cols (ids:
// tokens, or frames for cross-attention's columns); 1 stands for a largest value of 0.
export function colourRange(stage, values, n, rows, cols) {
  if (stage === "pattern" || stage === "rollout") return [0, 1];
  const big = largest(values, n, rows, cols) || 1;
  return SIGNED.has(stage) ? [-big, big] : [0, big];
}

// The range of values coloured from their lowest to their highest (a strip of any numbers,
// such as the sound's log-mel); a flat one is centred in a range 2 wide.
export function fullRange(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo < hi ? [lo, hi] : [lo - 1, lo + 1];
}

// The colour of one value: [r, g, b].
export function colourOf(v, range, scale, blank) {
  if (v === -Infinity) return blank;
  const [lo, hi] = range;
  const i = Math.max(0, Math.min(255, Math.round(((v - lo) / (hi - lo || 1)) * 255))) * 3;
  return [scale[i], scale[i + 1], scale[i + 2]];
}

const IMAGES = new WeakMap(); // one ImageData (and its 32-bit view) per canvas, reused
const PACKED = new WeakMap(); // a scale as 256 RGBA pixels packed in 32 bits, made once

// One pixel's four bytes as the canvas's own 32-bit word (byte order of this machine).
function packer() {
  const probe = new Uint8Array(new Uint32Array([0x01020304]).buffer);
  return probe[0] === 4
    ? (r, g, b) => ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0
    : (r, g, b) => ((r << 24) | (g << 16) | (b << 8) | 255) >>> 0;
}
const pack = packer();

function packed(scale) {
  let out = PACKED.get(scale);
  if (!out) {
    out = new Uint32Array(256);
    for (let i = 0; i < 256; i++) out[i] = pack(scale[3 * i], scale[3 * i + 1], scale[3 * i + 2]);
    PACKED.set(scale, out);
  }
  return out;
}

function imageFor(canvas, w, h) {
  let img = IMAGES.get(canvas);
  if (!img || img.data.width !== w || img.data.height !== h) {
    const data = canvas.getContext("2d").createImageData(w, h);
    IMAGES.set(canvas, (img = { data, words: new Uint32Array(data.data.buffer) }));
  }
  return img;
}

// Paint values[rows[r] * n + cols[c]] (or the transposed cell) onto a canvas of
// cols.length × rows.length pixels. Masked (−∞) cells take the `blank` colour. One 32-bit
// write per pixel from a packed scale and one putImageData: 4 × 512² cells per head switch.
export function paint(canvas, values, n, rows, cols, transpose, range, scale, blank) {
  const w = cols.length;
  const h = rows.length;
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const img = imageFor(canvas, w, h);
  const px = img.words;
  const lut = packed(scale);
  const hidden = pack(blank[0], blank[1], blank[2]);
  const [lo, hi] = range;
  const span = hi - lo || 1;
  const at = new Int32Array(w);
  for (let c = 0; c < w; c++) at[c] = transpose ? cols[c] * n : cols[c];
  for (let r = 0; r < h; r++) {
    const base = transpose ? rows[r] : rows[r] * n;
    const o = r * w;
    for (let c = 0; c < w; c++) {
      const v = values[base + at[c]];
      const x = Math.round(((v - lo) / span) * 255); // (colourOf, inlined)
      px[o + c] = v === -Infinity ? hidden : lut[x > 255 ? 255 : x > 0 ? x : 0];
    }
  }
  canvas.getContext("2d").putImageData(img.data, 0, 0);
}

// Paint `canvas` with the pixels `paint` last put on `from` (the same values, the same range):
// the masked stage with no mask is the scaled one, cell for cell.
export function paintSame(canvas, from) {
  const img = IMAGES.get(from).data;
  if (canvas.width !== img.width) canvas.width = img.width;
  if (canvas.height !== img.height) canvas.height = img.height;
  canvas.getContext("2d").putImageData(img, 0, 0);
}

export function paintColourBar(canvas, scale) {
  canvas.width = 1;
  canvas.height = 256;
  const ctx = canvas.getContext("2d");
  const img = ctx.createImageData(1, 256);
  for (let i = 0; i < 256; i++) {
    const s = (255 - i) * 3;
    img.data.set([scale[s], scale[s + 1], scale[s + 2], 255], i * 4);
  }
  ctx.putImageData(img, 0, 0);
}

const LABELLED = new WeakMap(); // holder -> {key, tokens, fit}: what it shows now

// Token labels along one axis as text elements (selectable, read by screen readers), at the
// font labelFit gives, every step-th one when even the smallest font cannot hold them all;
// `index` maps a shown position to a token. Returns the fit ({font, step, shown, hidden}).
// The same labels as last time (a head or layer switch) are left as they are: no new elements,
// no layout to redo.
export function labelAxis(holder, index, tokens, size, vertical) {
  const count = index.length;
  const fit = labelFit(count, size);
  const key = `${size}|${vertical}|${index.join(",")}`;
  const last = LABELLED.get(holder);
  if (last && last.key === key && last.tokens === tokens) return last.fit;
  LABELLED.set(holder, { key, tokens, fit });
  holder.replaceChildren();
  const cell = size / count;
  for (let p = 0; p < count; p += fit.step) {
    const span = document.createElement("span");
    span.textContent = tokens[index[p]];
    span.title = `${index[p]}: ${tokens[index[p]]}`;
    span.style[vertical ? "top" : "left"] = `${(p + 0.5) * cell}px`;
    span.style.fontSize = `${fit.font}px`;
    holder.appendChild(span);
  }
  return fit;
}

// Ticks along a column axis `size` px long holding `count` cells (timeTicks' seconds), each at
// its cell's left edge, as text elements.
export function tickAxis(holder, ticks, count, size) {
  holder.replaceChildren();
  for (const tick of ticks) {
    const span = document.createElement("span");
    span.textContent = tick.text;
    span.style.left = `${slotLeft(tick.at, count, size)}px`;
    holder.appendChild(span);
  }
}

export function themeRgb(el, name, fallback) {
  const probe = document.createElement("span");
  probe.style.color = getComputedStyle(el).getPropertyValue(name) || fallback;
  el.appendChild(probe);
  const rgb = getComputedStyle(probe).color.match(/\d+/g) || [128, 128, 128];
  probe.remove();
  return rgb.slice(0, 3).map(Number);
}

// Our own element inside the mount, made once and reused on every run: the mount (a shadow
// root, where `:scope` selects nothing) also holds the <style> Streamlit put there for us.
export function holderIn(parentElement) {
  let holder = Array.from(parentElement.children).find((el) => el.classList.contains("ax-holder"));
  if (!holder) {
    holder = document.createElement("div");
    holder.className = "ax-holder";
    parentElement.appendChild(holder);
  }
  return holder;
}
