// What the model is, for the views: a decoder's own causal mask (on an encoder the mask is a
// what-if) and the query heads that share a key/value head (grouped-query attention).

// A decoder (header.causal) was trained with its mask, so the switch is shown on and fixed; on
// an encoder the mask is a what-if. Without [CLS]/[SEP] the switch that hides them goes.
function describeModel(root, header) {
  const box = root.querySelector('[data-name="causal"]');
  if (header.causal) {
    box.disabled = true;
    root.querySelector(".ax-causal").textContent = "Causal mask (the model's own)";
  } else {
    root.querySelector(".ax-causal").textContent = "Causal mask (what-if)";
  }
  if (!header.special.some(Boolean)) root.querySelector(".ax-special").hidden = true;
}

function maskCaption(header, causal) {
  if (header.causal) {
    return "The model's own mask: it was trained to guess the next token, so each token sees "
      + "only itself and the tokens before it. Later tokens (blank) become −∞ and get exactly 0.";
  }
  return causal
    ? "What-if: a causal mask on a model trained without one. Each query now sees only itself "
      + "and earlier tokens; hidden cells (blank) become −∞, so softmax gives them exactly 0."
    : "No mask is on: every token may look at every token.";
}

// Query heads per key/value head (grouped-query attention: 3 for SmolLM2; 1 when every head
// has its own keys and values, as in MiniLM).
function headsPerKv(nHeads, nKv) {
  return nHeads / (nKv || nHeads);
}

// "H4 · KV1": query head 4 reads key/value head 1.
function headLabel(head, per) {
  return `H${head} · KV${Math.floor(head / per)}`;
}

// Does `head` open a new key/value group (a gap is drawn before it)?
function startsGroup(head, per) {
  return per > 1 && head > 0 && head % per === 0;
}

// e.g. " (keys and values shared by heads 0–2)"; "" when every head has its own.
function sharing(header, head) {
  const per = headsPerKv(header.n_heads, header.n_kv_heads);
  if (per <= 1) return "";
  const first = Math.floor(head / per) * per;
  return ` (keys and values shared by heads ${first}–${first + per - 1})`;
}

