// The one owner of a view's state: the view fields (layer, head, switches, the picked cell),
// read with get(), changed only through set(), which clamps them, tells every subscriber what
// changed and does nothing when nothing did (so a change that comes back, as a widget's own
// trait change or a server's rerun, redraws nothing). Also the zoom window and a draw counter,
// which belong to the view but are not part of what is shared with the server or the kernel.

// Clamp the integer fields that have an upper bound (layer, head) into [0, bound].
function clamp(view, limits) {
  const out = { ...view };
  for (const [name, top] of Object.entries(limits)) {
    if (name in out) out[name] = Math.max(0, Math.min(top, Math.trunc(Number(out[name]) || 0)));
  }
  return out;
}

export function createState(initial, limits = {}) {
  let view = clamp(initial, limits);
  const subscribers = new Set();
  return {
    zoom: null, // {r0, r1, c0, c1}: positions among the shown tokens, or null for all
    drawn: 0,
    get: () => view,
    // Apply `changes`; returns the names of the fields that changed (none: nothing happens).
    set(changes) {
      const next = clamp({ ...view, ...changes }, limits);
      const changed = Object.keys(next).filter((name) => next[name] !== view[name]);
      if (!changed.length) return changed;
      view = next;
      for (const callback of [...subscribers]) callback(view, changed);
      return changed;
    },
    subscribe(callback) {
      subscribers.add(callback);
      return () => subscribers.delete(callback);
    },
  };
}

const KEPT = new Map(); // a Streamlit mount's state by component key, across reruns

// The state of the mount `key` showing `sentence`: kept across reruns while the sentence stays,
// so the visitor's view (and zoom) survive the server hearing of it. The server's `given` view
// is taken when it differs from the one it gave last time (a sidebar slider or a link moved it);
// a rerun that hands the same view again leaves the visitor's view alone.
export function keptState(key, sentence, given, limits = {}) {
  const wire = JSON.stringify(given);
  let kept = KEPT.get(key);
  if (!kept || kept.sentence !== sentence) {
    kept = { sentence, given: wire, state: createState(given, limits) };
    KEPT.set(key, kept);
  } else if (wire !== kept.given) {
    kept.given = wire;
    kept.state.set(given);
  }
  return kept.state;
}

// For tests: forget every kept state.
export function forgetKept() {
  KEPT.clear();
}
