// The four stages of one head's pattern, recomputed in the browser from the engine's raw
// float32 scores: scores -> scaled (÷√d_k, ÷T) -> masked (causal) -> softmax, and the cell
// arithmetic of one entry; beyond them the norm-weighted pattern (softmax × each key's value
// norm) and the layer's attention rollout, drawn as the engine sent it; and a head of a
// clip's cross-attention (tokens × time) with a row's peak. Pure functions (no DOM):
// tests/js/stages.test.js runs them in node.
// The engine works in float32; where float32 rounding is large enough to show (the scaled
// logits and their distance to the row's maximum) this file rounds the same way with
// Math.fround, so its numbers equal attention_core.attention_steps to ~1e-7.

const f32 = Math.fround;
const FLOAT32_MAX = 3.4028234663852886e38;

// The number every score is divided by, rounded to float32 as the engine does.
export function divisor(dk, scale, temperature) {
  return f32((scale ? Math.sqrt(dk) : 1) * temperature);
}

// One head's n×n scores out of a layer block [h, q, k].
export function headScores(block, head, n) {
  return block.subarray(head * n * n, (head + 1) * n * n);
}

// One head's cross-attention [token, frame] out of a layer block [h, token, frame] (part
// "cross"): the decoder writing each text token, over the 20 ms frames of the audio. Throws
// when the block does not hold the header's heads × tokens × frames.
export function crossHead(block, header, head) {
  const size = header.n_tokens * header.n_frames;
  if (block.length !== header.n_heads * size) {
    throw new Error(
      `cross-attention: ${block.length} floats for a layer, want ${header.n_heads * size}`,
    );
  }
  return block.subarray(head * size, (head + 1) * size);
}

// A row's largest value: {col, value} of row `row` of `values` (`n` a row); the first wins a tie.
export function rowPeak(values, n, row) {
  let col = 0;
  for (let c = 1; c < n; c++) if (values[row * n + c] > values[row * n + col]) col = c;
  return { col, value: values[row * n + col] };
}

// Is the key hidden from the query under the causal mask (a later token)?
export function causallyHidden(causal, query, key) {
  return causal && key > query;
}

// The token ids shown: all, or all but the special ones ([CLS]/[SEP]) when they are hidden
// (and all again if nothing would be left).
export function visibleTokens(header, hide) {
  return hide ? [...header.kept_hiding_special] : [...Array(header.n_tokens).keys()];
}

// Softmax of one row in place: masked[row .. row+n) (−∞ = hidden) into pattern[...]. Hidden
// entries get exactly 0; a row with nothing visible is all 0.
function softmaxRow(masked, pattern, row, n) {
  let max = -Infinity;
  for (let k = 0; k < n; k++) if (masked[row + k] > max) max = masked[row + k];
  let total = 0;
  for (let k = 0; k < n; k++) {
    const m = masked[row + k];
    const e = m === -Infinity ? 0 : Math.exp(f32(m - max));
    pattern[row + k] = e;
    total += e;
  }
  for (let k = 0; k < n; k++) pattern[row + k] = total > 0 ? pattern[row + k] / total : 0;
}

// All four stages of one head: Float64Arrays of n×n, row = query, column = key. `sw` holds
// scale (bool), temperature (> 0) and causal (bool). Masked entries are −∞ in `masked` and
// exactly 0 in `pattern`. `reuse` (the previous result for the same n) lends its arrays: at
// 512 tokens each is 2 MB, made on every switch.
export function computeStages(scores, n, dk, sw, reuse) {
  const div = divisor(dk, sw.scale, sw.temperature);
  const fits = reuse?.pattern?.length === n * n;
  const scaled = fits ? reuse.scaled : new Float64Array(n * n);
  const masked = fits ? reuse.masked : new Float64Array(n * n);
  const pattern = fits ? reuse.pattern : new Float64Array(n * n);
  for (let q = 0; q < n; q++) {
    const row = q * n;
    for (let k = 0; k < n; k++) {
      const s = Math.max(-FLOAT32_MAX, Math.min(FLOAT32_MAX, f32(scores[row + k] / div)));
      scaled[row + k] = s; // clipped as the engine clips overflow
      masked[row + k] = causallyHidden(sw.causal, q, k) ? -Infinity : s;
    }
    softmaxRow(masked, pattern, row, n);
  }
  return { scores, scaled, masked, pattern };
}

// The largest visible entry of a masked row and the sum of exp(entry − max) over the row.
function rowTotals(masked, row, n) {
  let rowMax = -Infinity;
  for (let j = 0; j < n; j++) if (masked[row + j] > rowMax) rowMax = masked[row + j];
  if (rowMax === -Infinity) rowMax = 0;
  let rowExpSum = 0;
  for (let j = 0; j < n; j++) {
    const m = masked[row + j];
    if (m !== -Infinity) rowExpSum += Math.exp(m - rowMax);
  }
  return { rowMax, rowExpSum };
}

// How pattern[query, key] came to be, as attention_core.cell_arithmetic spells it out.
// q and k are the head's [t, e] queries and keys.
export function cellArithmetic(q, k, dk, stages, n, query, key) {
  const products = new Float64Array(dk);
  for (let e = 0; e < dk; e++) products[e] = f32(q[query * dk + e] * k[key * dk + e]);
  const row = query * n;
  return {
    products,
    score: stages.scores[row + key],
    scaled: stages.scaled[row + key],
    masked: stages.masked[row + key] === -Infinity,
    ...rowTotals(stages.masked, row, n),
    share: stages.pattern[row + key],
  };
}

// One head's queries and keys out of a "qk" layer block [2 · heads, t, e] (queries first).
export function headQueriesKeys(block, head, nHeads, n, dk) {
  const per = n * dk;
  return {
    q: block.subarray(head * per, (head + 1) * per),
    k: block.subarray((nHeads + head) * per, (nHeads + head + 1) * per),
  };
}

// Average query rows and sum key columns of a pattern over the `keep` tokens, f × f cells to a
// pixel, into side × side: a pooled row still sums to 1 (attention_core.methods.pack.pool_blocks).
export function poolPattern(pattern, n, keep, f, side) {
  const m = keep.length;
  const out = new Float64Array(side * side);
  for (let r = 0; r < m; r++) {
    const br = Math.floor(r / f);
    const rows = Math.min(f, m - br * f);
    for (let c = 0; c < m; c++) {
      out[br * side + Math.floor(c / f)] += pattern[keep[r] * n + keep[c]] / rows;
    }
  }
  return out;
}

// The layer blocks a view of `stages` draws from: the scores for the pattern's stages (the
// norm-weighted one multiplies the pattern), the value norms for "weighted", the rollout for
// "rollout" (which needs nothing else: heads and switches do not apply to it).
export function partsFor(stages) {
  const parts = [];
  if (stages.some((stage) => stage !== "rollout")) parts.push("scores");
  if (stages.includes("weighted")) parts.push("norms");
  if (stages.includes("rollout")) parts.push("rollout");
  return parts;
}

// One head's value norms (one per key) out of a "norms" layer block [h, k].
export function headNorms(block, head, n) {
  return block.subarray(head * n, (head + 1) * n);
}

// weighted[q, k] = pattern[q, k] · norms[k]: a weight times the length of what key k passes on
// (Kobayashi et al., 2020). `reuse` (the previous result for the same n) lends its array.
export function normWeighted(pattern, norms, n, reuse) {
  const out = reuse?.length === n * n ? reuse : new Float64Array(n * n);
  for (let q = 0; q < n; q++) {
    const row = q * n;
    for (let k = 0; k < n; k++) out[row + k] = pattern[row + k] * norms[k];
  }
  return out;
}

// Every stage a view shows, from the layer's `blocks` ({scores, norms, rollout}, each there
// only if the view needs it): n×n arrays by stage name, row = query, column = key.
export function stageValues(blocks, view, header, reuse) {
  const n = header.n_tokens;
  const values = {};
  if (blocks.scores) {
    const sw = { scale: view.scale, temperature: Number(view.temp), causal: view.causal };
    const head = headScores(blocks.scores, view.head, n);
    Object.assign(values, computeStages(head, n, header.d_head, sw, reuse));
  }
  if (blocks.norms) {
    const norms = headNorms(blocks.norms, view.head, n);
    values.weighted = normWeighted(values.pattern, norms, n, reuse?.weighted);
  }
  if (blocks.rollout) values.rollout = blocks.rollout;
  return values;
}

// The numbers behind one norm-weighted cell: its weight, the key's value norm, their product.
export function weightedCell(values, norms, n, query, key) {
  const at = query * n + key;
  return { weight: values.pattern[at], norm: norms[key], weighted: values.weighted[at] };
}
