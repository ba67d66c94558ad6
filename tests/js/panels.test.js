// The panels' shown tokens (explorer/js/panels.js) under the state's zoom window (state.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { paintedState, shownTokens } from "../../explorer/js/panels.js";
import { createState } from "../../explorer/js/state.js";

// Six tokens, [CLS] and [SEP] at the ends: four stay when the special ones are hidden.
const HEADER = { n_tokens: 6, kept_hiding_special: [1, 2, 3, 4] };
const VIEW = { layer: 0, head: 0, hide_special: false };

test("every token is shown until a zoom window picks rows and columns", () => {
  const state = createState(VIEW);
  assert.deepEqual(shownTokens(state, HEADER), {
    keep: [0, 1, 2, 3, 4, 5],
    rows: [0, 1, 2, 3, 4, 5],
    cols: [0, 1, 2, 3, 4, 5],
  });
  state.zoomTo({ r0: 1, r1: 3, c0: 2, c1: 6 }, 6);
  assert.deepEqual(shownTokens(state, HEADER), {
    keep: [0, 1, 2, 3, 4, 5],
    rows: [1, 2],
    cols: [2, 3, 4, 5],
  });
});

test("the window counts positions among the visible tokens, and goes when it no longer fits", () => {
  const state = createState({ ...VIEW, hide_special: true });
  state.zoomTo({ r0: 0, r1: 2, c0: 1, c1: 4 }, 4);
  assert.deepEqual(shownTokens(state, HEADER).rows, [1, 2]);
  assert.deepEqual(shownTokens(state, HEADER).cols, [2, 3, 4]);
  state.set({ hide_special: false }); // six visible: positions 1..3 are tokens 1..3 now
  assert.deepEqual(shownTokens(state, HEADER).cols, [1, 2, 3]);
  state.zoomTo({ r0: 0, r1: 6, c0: 3, c1: 6 }, 6);
  state.set({ hide_special: true }); // four visible: a window ending at 6 does not fit
  const shown = shownTokens(state, HEADER);
  assert.deepEqual(shown.rows, [1, 2, 3, 4]);
  assert.deepEqual(shown.cols, [1, 2, 3, 4]);
  assert.equal(state.zoom(), null); // dropped by the state, not only ignored
});

test("what the panels painted starts empty, one object per view", () => {
  const one = paintedState();
  assert.deepEqual(one, { shown: null, ranges: null, blank: null });
  assert.notEqual(paintedState(), one);
});
