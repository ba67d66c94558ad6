// The four stages of one head's pattern, recomputed in the browser from the engine's raw
// float32 scores: scores -> scaled (÷√d_k, ÷T) -> masked (causal) -> softmax.
// The engine works in float32; where float32 rounding is large enough to show (the scaled
// logits and their distance to the row's maximum) this file rounds the same way with
// Math.fround, so its numbers equal attention_core.attention_steps to ~1e-7.

const f32 = Math.fround;

// The number every score is divided by, rounded to float32 as the engine does.
function divisor(dk, scale, temperature) {
  return f32((scale ? Math.sqrt(dk) : 1) * temperature);
}

// One head's n×n scores out of a layer block [h, q, k].
function headScores(block, head, n) {
  return block.subarray(head * n * n, (head + 1) * n * n);
}

// All four stages of one head: Float64Arrays of n×n, row = query, column = key.
// Masked entries are -Infinity in `masked` and exactly 0 in `pattern`. `reuse` (the previous
// result for the same n) lends its arrays: at 512 tokens each is 2 MB, made on every switch.
function computeStages(scores, n, dk, sw, reuse) {
  const div = divisor(dk, sw.scale, sw.temperature);
  const fits = reuse && reuse.pattern.length === n * n;
  const scaled = fits ? reuse.scaled : new Float64Array(n * n);
  const masked = fits ? reuse.masked : new Float64Array(n * n);
  const pattern = fits ? reuse.pattern : new Float64Array(n * n);
  const big = 3.4028234663852886e38;
  for (let q = 0; q < n; q++) {
    const row = q * n;
    let max = -Infinity;
    for (let k = 0; k < n; k++) {
      let s = f32(scores[row + k] / div);
      if (s > big) s = big; else if (s < -big) s = -big;  // as the engine clips overflow
      scaled[row + k] = s;
      const hidden = sw.causal && k > q;
      masked[row + k] = hidden ? -Infinity : s;
      if (!hidden && s > max) max = s;
    }
    let total = 0;
    for (let k = 0; k < n; k++) {
      const m = masked[row + k];
      const e = m === -Infinity ? 0 : Math.exp(f32(m - max));
      pattern[row + k] = e;
      total += e;
    }
    for (let k = 0; k < n; k++) pattern[row + k] = total > 0 ? pattern[row + k] / total : 0;
  }
  return { scores, scaled, masked, pattern };
}

// How pattern[query, key] came to be, as attention_core.cell_arithmetic spells it out.
// q and k are the head's [t, e] queries and keys.
function cellArithmetic(q, k, dk, stages, n, query, key) {
  const products = new Float64Array(dk);
  for (let e = 0; e < dk; e++) products[e] = f32(q[query * dk + e] * k[key * dk + e]);
  const row = query * n;
  let rowMax = -Infinity;
  for (let j = 0; j < n; j++) {
    const m = stages.masked[row + j];
    if (m !== -Infinity && m > rowMax) rowMax = m;
  }
  if (rowMax === -Infinity) rowMax = 0;
  let rowExpSum = 0;
  for (let j = 0; j < n; j++) {
    const m = stages.masked[row + j];
    if (m !== -Infinity) rowExpSum += Math.exp(m - rowMax);
  }
  return {
    products,
    score: stages.scores[row + key],
    scaled: stages.scaled[row + key],
    masked: stages.masked[row + key] === -Infinity,
    rowMax,
    rowExpSum,
    share: stages.pattern[row + key],
  };
}
