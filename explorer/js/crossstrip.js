// The sound above the cross-attention matrix (cross.js): the log-mel over the speech span,
// [bin, frame] in 20 ms frames, low pitches at the bottom, exactly as wide as the matrix so
// that frame f of the strip sits above column f of the matrix (crossdata.js' frameLeft for
// both). Hovering it tells the moment; the picked cell's moment is outlined in it. The strip's
// own part of the view's context, ctx.sound (setUpStrip's), is written here only.

import { paint, SCALES } from "./draw.js";
import { placeTip } from "./pointer.js";
import { decodeFloat32 } from "./protocol.js";
import { frameAt, frameLeft, melRange, stripRows, stripTip } from "./crossdata.js";

// The strip's part of the view's context (ctx.sound) for `data` under `root`: the canvas, the
// log-mel (null without data.mel), its bins and whether it is painted yet. The strip's parts
// show only when there is a sound to draw.
export function setUpStrip(root, shape, data) {
  const sound = { strip: root.querySelector(".ax-strip"), painted: false };
  sound.mel = data.mel ? decodeFloat32(data.mel) : null;
  sound.nBins = data.n_bins || 0;
  if (sound.mel && sound.mel.length !== sound.nBins * shape.nFrames) {
    const want = `${sound.nBins} × ${shape.nFrames}`;
    throw new Error(`the sound: ${sound.mel.length} floats, want ${want}`);
  }
  for (const part of [".ax-strip-title", ".ax-strip-axis", ".ax-strip"]) {
    root.querySelector(part).hidden = !sound.mel;
  }
  return sound;
}

// Paint the sound once (it does not change with the head); its width follows the matrix's.
export function drawStrip(ctx, frames, width) {
  const sound = ctx.sound;
  if (!sound.mel) return;
  const { strip, mel } = sound;
  if (!sound.painted) {
    const bins = stripRows(sound.nBins);
    const range = melRange(mel);
    paint(strip, mel, ctx.shape.nFrames, bins, frames, false, range, SCALES.weights, ctx.blank);
    sound.painted = true;
  }
  strip.style.width = `${width}px`;
}

// Outline frame `f` of the span (a column `w` px wide) in the strip.
export function markStrip(ctx, f, w) {
  const mark = ctx.root.querySelector(".ax-strip-mark");
  const { strip, mel } = ctx.sound;
  mark.hidden = !mel;
  if (!mel) return;
  const x =
    strip.offsetLeft + strip.clientLeft + frameLeft(f, ctx.shape.nFrames, strip.clientWidth);
  mark.style.left = `${x - 2}px`;
  mark.style.top = `${strip.offsetTop}px`;
  mark.style.width = `${w + 4}px`;
  mark.style.height = `${strip.offsetHeight}px`;
}

// Hovering the strip tells the moment (the same frames as the matrix's columns below).
export function wireStripPointer(ctx) {
  const { tip } = ctx;
  const { strip } = ctx.sound;
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
