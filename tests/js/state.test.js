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
  first.zoom = { r0: 0, r1: 2, c0: 0, c1: 2 };
  const again = keptState("k", "minilm\u0000a b", VIEW, LIMITS); // handed the same view
  assert.equal(again, first);
  assert.equal(again.get().head, 5);
  const moved = keptState("k", "minilm\u0000a b", { ...VIEW, layer: 3 }, LIMITS);
  assert.equal(moved.get().layer, 3);
  assert.deepEqual(moved.zoom, { r0: 0, r1: 2, c0: 0, c1: 2 });
  const other = keptState("k", "minilm\u0000other", VIEW, LIMITS); // a new sentence
  assert.notEqual(other, first);
  assert.equal(other.get().head, 2);
  assert.equal(other.zoom, null);
  assert.notEqual(keptState("k2", "minilm\u0000other", VIEW, LIMITS), other);
});
