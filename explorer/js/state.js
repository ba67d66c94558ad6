// The one owner of a view's state: the view fields (layer, head, switches, the picked cell),
// read with get(), changed only through set(), which clamps them, tells every subscriber what
// changed and does nothing when nothing did (so a change that comes back, as a widget's own
// trait change or a server's rerun, redraws nothing). Also the zoom window (zoom(), changed by
// zoomTo(), fitZoom() and unzoom()), a long sentence's pooling (pooling(), "mean" or "max",
// changed by setPooling(): map.js) and a draw counter (countDrawn()), which belong to the view
// but are not part of what is shared with the server or the kernel: changing them tells no
// subscriber (the caller redraws). The state object itself is frozen: nothing else writes it.

// Clamp the integer fields that have an upper bound (layer, head) into [0, bound].
function clamp(view, limits) {
  const out = { ...view };
  for (const [name, top] of Object.entries(limits)) {
    if (name in out) out[name] = Math.max(0, Math.min(top, Math.trunc(Number(out[name]) || 0)));
  }
  return out;
}

// [lo, hi) clamped into `count` positions: at least one position wide when `count` allows.
function clampSpan(lo, hi, count) {
  return [Math.max(0, Math.min(lo, count - 1)), Math.max(1, Math.min(hi, count))];
}

export function createState(initial, limits = {}) {
  let view = clamp(initial, limits);
  let zoom = null; // {r0, r1, c0, c1}: positions among the shown tokens, or null for all
  let drawn = 0;
  let pooling = "mean"; // what a map's cell shows of its block of tokens
  const subscribers = new Set();
  return Object.freeze({
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
    // The zoom window (frozen), or null when every shown token is in view.
    zoom: () => zoom,
    // Zoom to rows [r0, r1) × columns [c0, c1) (queries × keys) among `count` shown tokens,
    // clamped into them: the whole square is no zoom, an empty window changes nothing.
    zoomTo({ r0, r1, c0, c1 }, count) {
      [r0, r1] = clampSpan(r0, r1, count);
      [c0, c1] = clampSpan(c0, c1, count);
      if (r1 - r0 >= count && c1 - c0 >= count) zoom = null;
      else if (r1 > r0 && c1 > c0) zoom = Object.freeze({ r0, r1, c0, c1 });
      return zoom;
    },
    // The window again for `count` shown tokens: dropped when it no longer fits them (a
    // switch hid tokens, or a new sentence is shorter). Returns the window kept, or null.
    fitZoom(count) {
      if (zoom && (zoom.r1 > count || zoom.c1 > count)) zoom = null;
      return zoom;
    },
    unzoom() {
      zoom = null;
    },
    pooling: () => pooling,
    // "mean" or "max" (anything else is ignored); returns the pooling kept.
    setPooling(name) {
      if (name === "mean" || name === "max") pooling = name;
      return pooling;
    },
    // One more drawing of the view; returns how many so far (it counts on across reruns:
    // benchmarks and tests wait on it).
    countDrawn() {
      drawn += 1;
      return drawn;
    },
  });
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
