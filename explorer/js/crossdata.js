// Cross-attention, tokens × time: the pure parts of cross.js (no DOM; tests/js/cross.test.js
// runs them in node). Each head arrives as float32 [token, frame] over the speech span only:
// frame f of it is frame `first + f` of the clip, 20 ms each. The sound above it is the
// log-mel [bin, frame] over the same frames.

export const CROSS_FRAME_S = 0.02;
const TICK_FRAMES = [5, 10, 25, 50, 100, 250, 500]; // 0.1 s … 10 s between time ticks

// Does one head's `rows` hold exactly tokens × frames floats? Throws if not.
export function checkHead(rows, shape) {
  const want = shape.nTokens * shape.nFrames;
  if (rows.length !== want) {
    throw new Error(`cross-attention: ${rows.length} floats for a head, want ${want}`);
  }
}

// The heads sent with the view ([layer, head, rows] each, rows decoded by `decode`) by
// headKey, each checked against `shape`.
export function inlineHeads(inline, shape, decode) {
  const heads = new Map();
  for (const [layer, head, rows] of inline) {
    const floats = decode(rows);
    checkHead(floats, shape);
    heads.set(headKey(layer, head), floats);
  }
  return heads;
}

export function headKey(layer, head) {
  return `${layer},${head}`;
}

// The heads one step from the view (← → the head, ↑ ↓ the layer), within the model: fetched
// ahead once the visitor has started switching, so stepping on draws at once.
export function neighbours(view, shape) {
  const { layer, head } = view;
  const near = [
    [layer, head + 1],
    [layer, head - 1],
    [layer + 1, head],
    [layer - 1, head],
  ];
  return near.filter(([l, h]) => l >= 0 && h >= 0 && l < shape.nLayers && h < shape.nHeads);
}

// The sound strip and the matrix share one time axis: both are `width` px wide and frame f
// of the span covers [frameLeft(f), frameLeft(f + 1)) in either. frameAt is its inverse for
// the pointer (-1 outside).
export function frameLeft(f, nFrames, width) {
  return (f / nFrames) * width;
}

export function frameAt(x, nFrames, width) {
  const f = Math.floor((x / width) * nFrames);
  return f >= 0 && f < nFrames ? f : -1;
}

// The strip's rows, top to bottom: the mel's bins from the highest down, so that low pitches
// sit at the bottom.
export function stripRows(nBins) {
  return [...Array(nBins).keys()].reverse();
}

// The strip's colour range: its lowest to its highest value (Whisper's log-mel spans about 2).
export function melRange(mel) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of mel) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return lo < hi ? [lo, hi] : [lo - 1, lo + 1];
}

// The strip's tooltip: “The sound at 1.24 s–1.26 s (frame 62 of the clip)”
export function stripTip(first, frame) {
  const from = secondsText(crossSeconds(first, frame));
  const to = secondsText(crossSeconds(first, frame + 1));
  return `The sound at ${from}–${to} (frame ${first + frame} of the clip)`;
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
