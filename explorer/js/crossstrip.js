// The sound above the cross-attention matrix (cross.js), the one piece the explorer draws for
// audio alone: the log-mel over the speech span, [bin, frame] in 20 ms frames, low pitches at
// the bottom, exactly as wide as the matrix and in its grid column (explorer.css), so that
// frame f of the strip sits above column f of the matrix (labels.js' slotLeft and slotAt for
// both). Hovering it tells the moment; the picked cell's moment is outlined in it. Its markup
// goes into the panel's plot here, and its part of the view's context, ctx.sound (setUpStrip's),
// is written here only.

import { fullRange, paint, SCALES } from "./draw.js";
import { slotAt } from "./labels.js";
import { placeTip } from "./pointer.js";
import { stripTip } from "./words.js";

const STRIP = `
<div class="ax-strip-title">The sound: pitch (low → high) over time</div>
<div class="ax-strip-axis"><span class="ax-hi">high</span><span class="ax-lo">low</span></div>
<canvas class="ax-strip" role="img" aria-label="The sound over time"></canvas>
<div class="ax-strip-mark" hidden></div>`;

// The strip's part of the view's context for the panel `fig`: the canvas and its mark, the
// log-mel `mel` ([nBins, header.n_frames] floats; null: no strip, nothing added) and whether it
// is painted yet.
export function setUpStrip(fig, header, mel, nBins) {
  if (!mel) return { mel: null };
  if (mel.length !== nBins * header.n_frames) {
    throw new Error(`the sound: ${mel.length} floats, want ${nBins} × ${header.n_frames}`);
  }
  const plot = fig.querySelector(".ax-plot");
  plot.insertAdjacentHTML("afterbegin", STRIP); // fixed markup only
  const strip = plot.querySelector(".ax-strip");
  return { mel, nBins, strip, mark: plot.querySelector(".ax-strip-mark"), painted: false };
}

// Paint the sound once (it does not change with the head); its width follows the matrix's.
export function drawStrip(ctx, width) {
  const sound = ctx.sound;
  if (!sound.mel) return;
  if (!sound.painted) {
    const n = ctx.header.n_frames;
    const bins = [...Array(sound.nBins).keys()].reverse(); // the highest pitch on top
    const frames = [...Array(n).keys()];
    const range = fullRange(sound.mel);
    paint(sound.strip, sound.mel, n, bins, frames, false, range, SCALES.weights, ctx.blank);
    sound.painted = true;
  }
  sound.strip.style.width = `${width}px`;
}

// Outline in the strip the moment outlined in the matrix below (`box`: its {left, width} in
// the plot, panels.js' placePick), or nothing (`box` null).
export function markStrip(ctx, box) {
  const { strip, mark } = ctx.sound;
  if (!mark) return;
  mark.hidden = !box;
  if (!box) return;
  Object.assign(mark.style, {
    left: `${box.left}px`,
    top: `${strip.offsetTop}px`,
    width: `${box.width}px`,
    height: `${strip.offsetHeight}px`,
  });
}

// Hovering the strip tells the moment (the same frames as the matrix's columns below).
export function wireStripPointer(ctx) {
  const { tip, root } = ctx;
  const { strip } = ctx.sound;
  if (!strip) return;
  const { first, n_frames: n } = ctx.header;
  strip.addEventListener("mousemove", (e) => {
    const x = e.clientX - strip.getBoundingClientRect().left - strip.clientLeft;
    const frame = slotAt(x, n, strip.clientWidth);
    if (frame < 0) {
      tip.hidden = true;
      return;
    }
    tip.textContent = stripTip(first, frame);
    tip.dataset.frame = String(first + frame);
    delete tip.dataset.value;
    placeTip(tip, root, e);
  });
  strip.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
}
