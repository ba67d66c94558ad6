// Saving the current view: a PNG of the drawn panels with their labels, and an SVG of the
// heatmaps with real <text> labels (tokens, title, stage titles, colour-bar ends). Both are
// laid out by layout(); the SVG is a pure string (tests/js/export.test.js), the PNG is drawn on
// a canvas in the browser. Cells go into the SVG as rects up to MAX_RECTS a panel, beyond that
// as the panel's own canvas, embedded as an image.

import { colourOf } from "./draw.js";
import { labelFit } from "./labels.js";
import { fmt } from "./words.js";

const SIZE = 360; // a heatmap's side
const LEFT = 100; // room for the row labels
const RIGHT = 70; // the colour bar and its ends
const HEAD = 28; // the stage title
const FOOT = 90; // the column labels
const TOP = 44; // the view's title
const MAX_RECTS = 64 * 64;
const FONT = "sans-serif";

// e.g. attention-minilm-L2-H5.svg
export function fileName(model, view, ext) {
  return `attention-${model ? `${model}-` : ""}L${view.layer}-H${view.head}.${ext}`;
}

// Where everything goes: the picture's size and each panel's corner (x, y: its heatmap's
// top-left corner) with its labels, sized and thinned as on screen (labels.js), at the smaller
// of the two axes' fonts.
export function layout(spec) {
  const across = spec.panels.length > 1 ? 2 : 1;
  const w = LEFT + SIZE + RIGHT;
  const h = HEAD + SIZE + FOOT;
  const panels = spec.panels.map((p, i) => {
    const x = (i % across) * w + LEFT;
    const y = TOP + Math.floor(i / across) * h + HEAD;
    const label = (list, names = spec.tokens) => {
      const { step } = labelFit(list.length, SIZE);
      const cell = SIZE / list.length;
      const out = [];
      for (let at = 0; at < list.length; at += step) {
        out.push({ at: (at + 0.5) * cell, text: names[list[at]] });
      }
      return out;
    };
    // A panel may name its own rows and columns (cross-attention: tokens × seconds).
    return {
      ...p,
      x,
      y,
      rowLabels: label(p.rows, p.rowNames),
      colLabels: label(p.cols, p.colNames),
      font: Math.min(labelFit(p.rows.length, SIZE).font, labelFit(p.cols.length, SIZE).font),
    };
  });
  return { width: across * w, height: TOP + Math.ceil(panels.length / across) * h, panels };
}

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESCAPES[c]);
const rgb = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;
const text = (x, y, s, attrs = "") => `<text x="${x}" y="${y}"${attrs}>${esc(s)}</text>`;

// One heatmap's cells: rects (one per cell) or, for a large one, the drawn canvas as an image.
function svgCells(p) {
  const nr = p.rows.length;
  const nc = p.cols.length;
  if (nr * nc > MAX_RECTS && p.image) {
    const attrs = `width="${SIZE}" height="${SIZE}" preserveAspectRatio="none"`;
    return [
      `<image x="${p.x}" y="${p.y}" ${attrs} style="image-rendering:pixelated" href="${p.image}"/>`,
    ];
  }
  const out = [];
  const [ch, cw] = [SIZE / nr, SIZE / nc];
  for (let r = 0; r < nr; r++) {
    for (let c = 0; c < nc; c++) {
      const cell = p.transpose ? p.cols[c] * p.n + p.rows[r] : p.rows[r] * p.n + p.cols[c];
      const fill = rgb(colourOf(p.values[cell], p.range, p.scale, p.blank));
      const at = `x="${(p.x + c * cw).toFixed(2)}" y="${(p.y + r * ch).toFixed(2)}"`;
      out.push(`<rect ${at} width="${cw.toFixed(2)}" height="${ch.toFixed(2)}" fill="${fill}"/>`);
    }
  }
  return out;
}

function svgBar(p, i) {
  const stops = [];
  for (let s = 0; s <= 10; s++) {
    const at = Math.round((1 - s / 10) * 255) * 3;
    stops.push(`<stop offset="${s / 10}" stop-color="${rgb(p.scale.slice(at, at + 3))}"/>`);
  }
  const x = p.x + SIZE + 8;
  return [
    `<linearGradient id="bar${i}" x1="0" y1="0" x2="0" y2="1">${stops.join("")}</linearGradient>`,
    `<rect x="${x}" y="${p.y}" width="10" height="${SIZE}" fill="url(#bar${i})"/>`,
    text(x + 14, p.y + 10, fmt(p.range[1], 2), ' class="end"'),
    text(x + 14, p.y + SIZE, fmt(p.range[0], 2), ' class="end"'),
  ];
}

function svgPanel(p, i) {
  const tok = ` class="tok" style="font-size:${p.font}px"`;
  const rows = p.rowLabels.map((l) =>
    text(p.x - 6, (p.y + l.at + 4).toFixed(2), l.text, ` text-anchor="end"${tok}`),
  );
  const cols = p.colLabels.map((l) => {
    const at = `translate(${(p.x + l.at + 4).toFixed(2)},${p.y + SIZE + 6}) rotate(-90)`;
    return `<text transform="${at}" text-anchor="end"${tok}>${esc(l.text)}</text>`;
  });
  const title = text(p.x - LEFT + 8, p.y - 10, p.title, ' class="stage"');
  return [title, ...svgCells(p), ...svgBar(p, i), ...rows, ...cols];
}

// The SVG document of `spec` ({title, tokens, panels: [{title, values, n, rows, cols,
// transpose, range, scale, blank, image?}]}).
export function svgOf(spec) {
  const l = layout(spec);
  const style =
    `text{font-family:${FONT};fill:#222}.end{font-size:10px}` +
    ".stage{font-size:14px;font-weight:600}.title{font-size:18px;font-weight:600}";
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${l.width}" height="${l.height}" ` +
      `viewBox="0 0 ${l.width} ${l.height}">`,
    `<style>${style}</style>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    text(8, 26, spec.title, ' class="title"'),
    ...l.panels.flatMap(svgPanel),
    "</svg>",
  ].join("\n");
}

function pngPanel(g, p) {
  g.imageSmoothingEnabled = false;
  g.drawImage(p.canvas, p.x, p.y, SIZE, SIZE);
  g.drawImage(p.bar, p.x + SIZE + 8, p.y, 10, SIZE);
  g.font = `600 14px ${FONT}`;
  g.fillText(p.title, p.x - LEFT + 8, p.y - 10);
  g.font = `10px ${FONT}`;
  g.fillText(fmt(p.range[1], 2), p.x + SIZE + 22, p.y + 10);
  g.fillText(fmt(p.range[0], 2), p.x + SIZE + 22, p.y + SIZE);
  g.font = `${p.font}px ${FONT}`;
  g.textAlign = "right";
  for (const l of p.rowLabels) g.fillText(l.text, p.x - 6, p.y + l.at + 4);
  for (const l of p.colLabels) {
    g.save();
    g.translate(p.x + l.at + 4, p.y + SIZE + 6);
    g.rotate(-Math.PI / 2);
    g.fillText(l.text, 0, 0);
    g.restore();
  }
  g.textAlign = "left";
}

// The PNG: the panels' own canvases (p.canvas, p.bar) and labels on one canvas, twice the size.
export function pngCanvas(spec, doc) {
  const l = layout(spec);
  const canvas = doc.createElement("canvas");
  canvas.width = l.width * 2;
  canvas.height = l.height * 2;
  const g = canvas.getContext("2d");
  g.scale(2, 2);
  g.fillStyle = "#fff";
  g.fillRect(0, 0, l.width, l.height);
  g.fillStyle = "#222";
  g.font = `600 18px ${FONT}`;
  g.fillText(spec.title, 8, 26);
  for (const p of l.panels) pngPanel(g, p);
  return canvas;
}

// Hand `blob` to the browser as a download named `name`.
export function download(blob, name, doc) {
  const a = doc.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  doc.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

// Save `spec` as "png" or "svg" under `name`.
export function save(spec, kind, name, doc) {
  if (kind === "svg") {
    download(new Blob([svgOf(spec)], { type: "image/svg+xml" }), name, doc);
  } else {
    pngCanvas(spec, doc).toBlob((blob) => download(blob, name, doc), "image/png");
  }
}
