// What the model is, for the views: the query heads that share a key/value head (grouped-query
// attention). Pure functions.

// Query heads per key/value head (grouped-query attention: 3 for SmolLM2; 1 when every head
// has its own keys and values, as in MiniLM).
export function headsPerKv(nHeads, nKv) {
  return nHeads / (nKv || nHeads);
}

// "H4 · KV1": query head 4 reads key/value head 1.
export function headLabel(head, per) {
  return `H${head} · KV${Math.floor(head / per)}`;
}

// Does `head` open a new key/value group (a gap is drawn before it)?
export function startsGroup(head, per) {
  return per > 1 && head > 0 && head % per === 0;
}

// e.g. " (keys and values shared by heads 0–2)"; "" when every head has its own.
export function sharing(header, head) {
  const per = headsPerKv(header.n_heads, header.n_kv_heads);
  if (per <= 1) return "";
  const first = Math.floor(head / per) * per;
  return ` (keys and values shared by heads ${first}–${first + per - 1})`;
}

// The heading of a view: its own title, or the layer and head (the layer alone when the view
// shows only the rollout, where every head is averaged).
export function viewTitle(header, view, title, stages = []) {
  if (title) return title;
  if (stages.length && stages.every((stage) => stage === "rollout")) {
    return `layer ${view.layer}, every head averaged`;
  }
  return `layer ${view.layer}, head ${view.head}${sharing(header, view.head)}`;
}

// The head's job on this sentence, as the engine named it by its stated rule
// (attention_core.methods.roles: "previous-token 0.52", "mixed: …"): "" when the header carries
// no roles (a clip's cross-attention) or the view shows every head averaged (the rollout alone).
export function roleBadge(header, view, stages = []) {
  if (stages.length && stages.every((stage) => stage === "rollout")) return "";
  return header.roles?.[view.layer]?.[view.head] ?? "";
}
