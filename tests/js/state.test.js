// The one owner of the view (explorer/js/state.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { createState, forgetKept, keptState } from "../../explorer/js/state.js";

const VIEW = { layer: 1, head: 2, causal: false, temp: 1, q: -1, k: -1 };
const LIMITS = { layer: 5, head: 11 };

test("set clamps layer and head, reports what changed and tells the subscribers", () => {
  const state = createState(VIEW, LIMITS);
  const heard = [];
  const stop = state.subscribe((view, changed) => heard.push([view.head, changed]));
  assert.deepEqual(state.set({ head: 99 }), ["head"]);
  assert.equal(state.get().head, 11);
  assert.deepEqual(state.set({ layer: -3, causal: true }), ["layer", "causal"]);
  assert.equal(state.get().layer, 0);
  assert.deepEqual(heard, [
    [11, ["head"]],
    [11, ["layer", "causal"]],
  ]);
  stop();
  state.set({ head: 0 });
  assert.equal(heard.length, 2);
});

test("a change that changes nothing redraws nothing", () => {
  const state = createState(VIEW, LIMITS);
  let calls = 0;
  state.subscribe(() => calls++);
  assert.deepEqual(state.set({ ...VIEW }), []);
  assert.deepEqual(state.set({ head: 2 }), []);
  assert.equal(calls, 0);
  const before = state.get();
  state.set({ temp: 0.35 });
  assert.notEqual(state.get(), before); // a new object: the old one stays as it was
  assert.equal(before.temp, 1);
});

test("a mount keeps its view across reruns and takes the server's view when it moves", () => {
  forgetKept();
  const first = keptState("k", "minilm\u0000a b", VIEW, LIMITS);
  first.set({ head: 5 });
  first.zoomTo({ r0: 0, r1: 2, c0: 0, c1: 2 }, 4);
  const again = keptState("k", "minilm\u0000a b", VIEW, LIMITS); // handed the same view
  assert.equal(again, first);
  assert.equal(again.get().head, 5);
  const moved = keptState("k", "minilm\u0000a b", { ...VIEW, layer: 3 }, LIMITS);
  assert.equal(moved.get().layer, 3);
  assert.deepEqual(moved.zoom(), { r0: 0, r1: 2, c0: 0, c1: 2 });
  const other = keptState("k", "minilm\u0000other", VIEW, LIMITS); // a new sentence
  assert.notEqual(other, first);
  assert.equal(other.get().head, 2);
  assert.equal(other.zoom(), null);
  assert.notEqual(keptState("k2", "minilm\u0000other", VIEW, LIMITS), other);
});

test("zoomTo clamps the window into the shown tokens; the whole square is no zoom", () => {
  const state = createState(VIEW, LIMITS);
  assert.equal(state.zoom(), null);
  assert.deepEqual(state.zoomTo({ r0: 2, r1: 5, c0: 0, c1: 3 }, 10), {
    r0: 2,
    r1: 5,
    c0: 0,
    c1: 3,
  });
  assert.deepEqual(state.zoom(), { r0: 2, r1: 5, c0: 0, c1: 3 });
  // past the ends: clamped into [0, 10), at least one position wide
  assert.deepEqual(state.zoomTo({ r0: -4, r1: 3, c0: 8, c1: 40 }, 10), {
    r0: 0,
    r1: 3,
    c0: 8,
    c1: 10,
  });
  assert.deepEqual(state.zoomTo({ r0: 12, r1: 15, c0: -3, c1: -1 }, 10), {
    r0: 9,
    r1: 10,
    c0: 0,
    c1: 1,
  });
  // every token in view both ways: no zoom
  assert.equal(state.zoomTo({ r0: -1, r1: 11, c0: 0, c1: 10 }, 10), null);
  assert.equal(state.zoom(), null);
});

test("an empty window changes nothing, and a zoom tells no subscriber", () => {
  const state = createState(VIEW, LIMITS);
  let calls = 0;
  state.subscribe(() => calls++);
  state.zoomTo({ r0: 1, r1: 4, c0: 1, c1: 4 }, 10);
  assert.deepEqual(state.zoomTo({ r0: 5, r1: 5, c0: 1, c1: 3 }, 10), {
    r0: 1,
    r1: 4,
    c0: 1,
    c1: 4,
  });
  assert.deepEqual(state.zoomTo({ r0: 1, r1: 3, c0: 6, c1: 2 }, 10), {
    r0: 1,
    r1: 4,
    c0: 1,
    c1: 4,
  });
  state.unzoom();
  assert.equal(state.zoom(), null);
  assert.equal(calls, 0);
});

test("fitZoom keeps a window that fits the shown tokens and drops one that does not", () => {
  const state = createState(VIEW, LIMITS);
  assert.equal(state.fitZoom(10), null);
  state.zoomTo({ r0: 2, r1: 6, c0: 0, c1: 8 }, 10);
  assert.deepEqual(state.fitZoom(8), { r0: 2, r1: 6, c0: 0, c1: 8 }); // ends at the last token
  assert.equal(state.fitZoom(7), null); // a switch hid tokens: the window ends past them
  assert.equal(state.zoom(), null);
  assert.equal(state.fitZoom(10), null); // gone for good, not back when the tokens come back
});

test("the zoom window and the state itself change only through the state's functions", () => {
  const state = createState(VIEW, LIMITS);
  const zoom = state.zoomTo({ r0: 0, r1: 2, c0: 0, c1: 2 }, 10);
  assert.throws(() => {
    zoom.r1 = 9;
  }, TypeError);
  assert.throws(() => {
    state.zoom = null;
  }, TypeError);
  assert.throws(() => {
    state.drawn = 5;
  }, TypeError);
  assert.deepEqual(state.zoom(), { r0: 0, r1: 2, c0: 0, c1: 2 });
});

test("countDrawn counts every drawing of a kept state, across reruns", () => {
  forgetKept();
  const state = keptState("k", "minilm\u0000a b", VIEW, LIMITS);
  assert.equal(state.countDrawn(), 1);
  assert.equal(state.countDrawn(), 2);
  assert.equal(keptState("k", "minilm\u0000a b", VIEW, LIMITS).countDrawn(), 3);
  assert.equal(createState(VIEW, LIMITS).countDrawn(), 1); // a state of its own counts from 0
  forgetKept();
});
