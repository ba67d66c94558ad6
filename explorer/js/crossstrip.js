// The sound above the cross-attention matrix (cross.js): the log-mel over the speech span,
// [bin, frame] in 20 ms frames, low pitches at the bottom, exactly as wide as the matrix so
// that frame f of the strip sits above column f of the matrix (crossdata.js' frameLeft for
// both). Hovering it tells the moment; the picked cell's moment is outlined in it.

import { paint, SCALES } from "./draw.js";
import { placeTip } from "./pointer.js";
import { decodeFloat32 } from "./protocol.js";
import { frameAt, frameLeft, melRange, stripRows, stripTip } from "./crossdata.js";

// ctx.strip, ctx.mel (null without data.mel) and ctx.nBins from `data`; the strip's parts
// show only when there is a sound to draw.
export function setUpStrip(ctx, data) {
  const { root, shape } = ctx;
  ctx.strip = root.querySelector(".ax-strip");
  ctx.mel = data.mel ? decodeFloat32(data.mel) : null;
  ctx.nBins = data.n_bins || 0;
  if (ctx.mel && ctx.mel.length !== ctx.nBins * shape.nFrames) {
    throw new Error(`the sound: ${ctx.mel.length} floats, want ${ctx.nBins} × ${shape.nFrames}`);
  }
  for (const part of [".ax-strip-title", ".ax-strip-axis", ".ax-strip"]) {
    root.querySelector(part).hidden = !ctx.mel;
  }
}

// Paint the sound once (it does not change with the head); its width follows the matrix's.
export function drawStrip(ctx, frames, width) {
  if (!ctx.mel) return;
  const { strip, shape } = ctx;
  if (!ctx.stripPainted) {
    const bins = stripRows(ctx.nBins);
    const range = melRange(ctx.mel);
    paint(strip, ctx.mel, shape.nFrames, bins, frames, false, range, SCALES.weights, ctx.blank);
    ctx.stripPainted = true;
  }
  strip.style.width = `${width}px`;
}

// Outline frame `f` of the span (a column `w` px wide) in the strip.
export function markStrip(ctx, f, w) {
  const mark = ctx.root.querySelector(".ax-strip-mark");
  mark.hidden = !ctx.mel;
  if (!ctx.mel) return;
  const { strip } = ctx;
  const x =
    strip.offsetLeft + strip.clientLeft + frameLeft(f, ctx.shape.nFrames, strip.clientWidth);
  mark.style.left = `${x - 2}px`;
  mark.style.top = `${strip.offsetTop}px`;
  mark.style.width = `${w + 4}px`;
  mark.style.height = `${strip.offsetHeight}px`;
}

// Hovering the strip tells the moment (the same frames as the matrix's columns below).
export function wireStripPointer(ctx) {
  const { strip, tip } = ctx;
  strip.addEventListener("mousemove", (e) => {
    const x = e.clientX - strip.getBoundingClientRect().left - strip.clientLeft;
    const frame = frameAt(x, ctx.shape.nFrames, strip.clientWidth);
    if (frame < 0) {
      tip.hidden = true;
      return;
    }
    tip.textContent = stripTip(ctx.first, frame);
    tip.dataset.frame = String(ctx.first + frame);
    delete tip.dataset.value;
    placeTip(tip, ctx.root, e);
  });
  strip.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
}
