// Cross-attention, tokens × time: the pure parts of cross.js (no DOM; tests/js/cross.test.js
// runs them in node). The pattern arrives as float32 [layer, head, token, frame] over the
// speech span only: frame f of it is frame `first + f` of the clip, 20 ms each.

export const CROSS_FRAME_S = 0.02;
const TICK_FRAMES = [5, 10, 25, 50, 100, 250, 500]; // 0.1 s … 10 s between time ticks

// Does `pattern` hold exactly layers × heads × tokens × frames floats? Throws if not.
export function checkCross(pattern, shape) {
  const { nLayers, nHeads, nTokens, nFrames } = shape;
  const want = nLayers * nHeads * nTokens * nFrames;
  if (pattern.length !== want) {
    throw new Error(`cross-attention: ${pattern.length} floats, want ${want}`);
  }
}

// One head's rows [token, frame] out of the pattern (a view, not a copy).
export function crossRows(pattern, shape, layer, head) {
  const size = shape.nTokens * shape.nFrames;
  const at = (layer * shape.nHeads + head) * size;
  return pattern.subarray(at, at + size);
}

// When frame `f` of the span starts, in seconds (the clip's frame first + f), to 10 µs.
// The colour range of one head's rows: 0 to its largest weight (1 when all are 0). A head's
// weights over 1500 frames peak near 0.1-0.2, which a fixed 0..1 scale would draw almost black.
export function crossRange(rows) {
  let top = 0;
  for (const v of rows) if (v > top) top = v;
  return [0, top || 1];
}

export function crossSeconds(first, f) {
  return Math.round((first + f) * CROSS_FRAME_S * 1e5) / 1e5;
}

// "1.24 s"
export function secondsText(s, digits = 2) {
  return `${s.toFixed(digits)} s`;
}

// Time ticks along `nFrames` frames from clip frame `first`, drawn `width` px wide: at round
// seconds (every 0.1, 0.2, 0.5, 1, 2, 5 or 10 s, the finest that leaves ≥ 56 px between two).
// Each tick: {at: its position in frames from the span's start, text}.
export function crossTicks(first, nFrames, width) {
  const px = width / Math.max(1, nFrames);
  const every = TICK_FRAMES.find((f) => f * px >= 56) || TICK_FRAMES[TICK_FRAMES.length - 1];
  const digits = every < 50 ? 1 : 0;
  const ticks = [];
  for (let f = Math.ceil(first / every) * every; f <= first + nFrames; f += every) {
    ticks.push({ at: f - first, text: secondsText(f * CROSS_FRAME_S, digits) });
  }
  return ticks;
}

// The token's largest weight over the span: {frame (of the span), value}.
export function crossPeak(rows, nFrames, token) {
  let frame = 0;
  for (let f = 1; f < nFrames; f++) {
    if (rows[token * nFrames + f] > rows[token * nFrames + frame]) frame = f;
  }
  return { frame, value: rows[token * nFrames + frame] };
}

// The tooltip of a cell: “▁river” at 1.24 s: 0.123
export function crossTip(tokens, first, token, frame, value) {
  const at = secondsText(crossSeconds(first, frame));
  return `“${tokens[token]}” (token ${token}) at ${at}: ${value.toFixed(3)}`;
}

// The readout of a picked cell (frame < 0: the token's own peak), as lines of plain text, and
// the cell itself: {layer, head, token, frame (of the clip), seconds, value}.
export function crossReadout(tokens, first, view, rows, nFrames, frame) {
  const { layer, head, token } = view;
  const peak = crossPeak(rows, nFrames, token);
  const f = frame >= 0 ? frame : peak.frame;
  const value = rows[token * nFrames + f];
  const start = crossSeconds(first, f);
  const cell = { layer, head, token, frame: first + f, seconds: start, value };
  const lines = [
    `Layer ${layer}, head ${head}: token ${token} “${tokens[token]}” gives the moment ` +
      `${secondsText(start)}–${secondsText(crossSeconds(first, f + 1))} ` +
      `(frame ${first + f} of the clip) a weight of ${value.toFixed(6)}.`,
    `Its largest weight over the speech: ${peak.value.toFixed(3)} at ` +
      `${secondsText(crossSeconds(first, peak.frame))}.`,
  ];
  return { cell, lines };
}
