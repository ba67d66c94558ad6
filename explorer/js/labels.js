// How the token labels fit along a heatmap's sides, and how large the panels are drawn so that
// they do: first a smaller font (never under LABEL_FONT.least px), then larger panels, one to a
// row; only when even that cannot hold every label, every step-th one, and the view says how
// many it hid. Where each of an axis's cells sits (slotLeft, slotAt: the pointer, the marks
// and a strip drawn over the same columns share them), and the time axis of cross-attention,
// whose columns are 20 ms frames: ticks at round seconds instead of a label per column.
// Pure functions (no DOM): tests/js/labels.test.js runs them.

import { FRAME_S, secondsText } from "./words.js";

export const LABEL_FONT = { most: 11, least: 10 }; // px; 10 is the smallest we call readable
const LABEL_GAP = 1; // px between two neighbouring labels, so their boxes never touch
const PANEL_SIDE = { least: 100, usual: 460, most: 640 }; // px, a heatmap's side
const PANEL_ROOM = 140; // px beside a heatmap: its row labels, its colour bar and their margins

// The labels along an axis `size` px long that holds `count` tokens: {font, step, shown,
// hidden}. Every token's label when each gets at least the smallest font and a gap; otherwise
// every step-th at the smallest font, `hidden` of them left out.
export function labelFit(count, size) {
  const pitch = size / Math.max(1, count);
  const font = Math.min(LABEL_FONT.most, Math.floor(pitch - LABEL_GAP));
  if (font >= LABEL_FONT.least) return { font, step: 1, shown: count, hidden: 0 };
  const step = Math.ceil((LABEL_FONT.least + LABEL_GAP) / pitch);
  const shown = Math.ceil(count / step);
  return { font: LABEL_FONT.least, step, shown, hidden: count - shown };
}

// Every step-th of `count` positions gets a label along an axis `size` px long.
export function labelStep(count, size) {
  return labelFit(count, size).step;
}

// A heatmap's side with `room` px for it: the usual side, larger (up to PANEL_SIDE.most) when
// that lets the labels of `count` tokens fit, never more than the room.
function panelSide(room, count) {
  const need = count * (LABEL_FONT.least + LABEL_GAP);
  const want = Math.min(PANEL_SIDE.most, Math.max(PANEL_SIDE.usual, need));
  return Math.max(PANEL_SIDE.least, Math.min(room, want));
}

// How `stages` panels of `count` tokens a side are laid out in a view `width` px wide:
// {across: 1 or 2 panels to a row, size: a heatmap's side}. Two to a row when every label fits
// there; else one to a row when every label fits that way; else (labels are thinned either way)
// two to a row, which keeps the stages side by side.
export function panelLayout(width, stages, count) {
  const one = panelSide(width - PANEL_ROOM, count);
  if (stages < 2) return { across: 1, size: one };
  const two = panelSide(Math.floor(width / 2) - PANEL_ROOM, count);
  if (labelFit(count, two).hidden === 0 || labelFit(count, one).hidden > 0) {
    return { across: 2, size: two };
  }
  return { across: 1, size: one };
}

// What the view says when labels were left out (rows, cols: labelFit of each axis and the
// count along it), or "" when every label is shown.
export function labelNote(rows, cols) {
  if (!rows.hidden && !cols.hidden) return "";
  const hover = "hover a cell for its tokens.";
  if (rows.shown + rows.hidden === cols.shown + cols.hidden && rows.hidden === cols.hidden) {
    const count = rows.shown + rows.hidden;
    return `${rows.hidden} of ${count} labels hidden on the rows and on the columns; ${hover}`;
  }
  const side = (fit, name) => `${fit.hidden} of ${fit.shown + fit.hidden} ${name}`;
  return `Labels hidden: ${side(rows, "rows")}, ${side(cols, "columns")}; ${hover}`;
}

// Cell i of `count` along an axis `size` px long covers [slotLeft(i), slotLeft(i + 1)); slotAt
// is its inverse for a pointer `x` px along it (-1 outside).
export function slotLeft(i, count, size) {
  return (i / count) * size;
}

export function slotAt(x, count, size) {
  const i = Math.floor((x / size) * count);
  return i >= 0 && i < count ? i : -1;
}

const TICK_FRAMES = [5, 10, 25, 50, 100, 250, 500]; // 0.1 s … 10 s between time ticks

// Time ticks along `nFrames` frames from clip frame `first`, drawn `width` px wide: at round
// seconds (every 0.1, 0.2, 0.5, 1, 2, 5 or 10 s, the finest that leaves ≥ 56 px between two).
// Each tick: {at: its position in frames from the span's start, text}.
export function timeTicks(first, nFrames, width) {
  const px = width / Math.max(1, nFrames);
  const every = TICK_FRAMES.find((f) => f * px >= 56) || TICK_FRAMES[TICK_FRAMES.length - 1];
  const digits = every < 50 ? 1 : 0;
  const ticks = [];
  for (let f = Math.ceil(first / every) * every; f <= first + nFrames; f += every) {
    ticks.push({ at: f - first, text: secondsText(f * FRAME_S, digits) });
  }
  return ticks;
}
