// How token labels fit and how the panels are laid out (explorer/js/labels.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  LABEL_FONT,
  labelFit,
  labelNote,
  labelStep,
  panelLayout,
} from "../../explorer/js/labels.js";

// Labels `count` of `size` px: the centres of the shown ones and their extent across the axis.
function boxes(count, size) {
  const fit = labelFit(count, size);
  const cell = size / count;
  const out = [];
  for (let p = 0; p < count; p += fit.step) {
    const mid = (p + 0.5) * cell;
    out.push([mid - fit.font / 2, mid + fit.font / 2]);
  }
  return { fit, out };
}

test("every label fits at a smaller font before any is left out", () => {
  assert.deepEqual(labelFit(10, 460), { font: 11, step: 1, shown: 10, hidden: 0 });
  assert.deepEqual(labelFit(40, 460), { font: 10, step: 1, shown: 40, hidden: 0 });
  assert.deepEqual(labelFit(41, 451), { font: 10, step: 1, shown: 41, hidden: 0 }); // 11 px each
  assert.equal(labelFit(42, 451).step, 2); // 10.7 px each: no room for 10 px and a gap
  assert.equal(labelStep(40, 460), 1);
});

test("thinned labels: the smallest font, every step-th, the count left out", () => {
  const fit = labelFit(128, 460);
  assert.deepEqual(fit, { font: 10, step: 4, shown: 32, hidden: 96 });
  assert.equal(fit.shown + fit.hidden, 128);
  assert.equal(labelFit(512, 330).hidden, 512 - Math.ceil(512 / labelFit(512, 330).step));
});

test("shown labels never overlap and are never under the smallest font", () => {
  for (let count = 1; count <= 600; count += 7) {
    for (const size of [100, 272, 460, 640]) {
      const { fit, out } = boxes(count, size);
      assert.ok(fit.font >= LABEL_FONT.least, `${count} in ${size}`);
      for (let i = 1; i < out.length; i++) {
        assert.ok(out[i][0] - out[i - 1][1] >= 1 - 1e-9, `${count} in ${size}: ${i}`);
      }
      assert.equal(out.length, fit.shown);
    }
  }
});

test("four stages of 40 tokens at a 1280-px window (an 820-px view): one to a row", () => {
  const { across, size } = panelLayout(820, 4, 40);
  assert.equal(across, 1);
  assert.equal(labelFit(40, size).hidden, 0);
  assert.ok(size <= 820 - 140);
  // short sentences stay two to a row, as before
  assert.deepEqual(panelLayout(820, 4, 10), { across: 2, size: 270 });
  // a single stage at the usual side; larger only when that makes every label fit
  assert.deepEqual(panelLayout(820, 1, 40), { across: 1, size: 460 });
  assert.deepEqual(panelLayout(820, 1, 50), { across: 1, size: 550 });
  assert.deepEqual(panelLayout(820, 1, 300), { across: 1, size: 640 });
  assert.deepEqual(panelLayout(500, 1, 300), { across: 1, size: 360 });
});

test("when labels are thinned either way, the stages stay two to a row", () => {
  const { across, size } = panelLayout(820, 4, 128);
  assert.deepEqual([across, size], [2, 270]);
  assert.equal(labelFit(128, size).hidden, 128 - 22); // every 6th of 2.1 px cells
  // a wide view holds more, two to a row
  assert.deepEqual(panelLayout(1600, 4, 50), { across: 2, size: 550 });
});

test("the note says how many labels were left out", () => {
  const none = labelFit(10, 460);
  assert.equal(labelNote(none, none), "");
  const fit = labelFit(128, 270);
  assert.equal(
    labelNote(fit, fit),
    "106 of 128 labels hidden on the rows and on the columns; hover a cell for its tokens.",
  );
  assert.equal(
    labelNote(labelFit(120, 270), labelFit(20, 270)),
    "Labels hidden: 96 of 120 rows, 0 of 20 columns; hover a cell for its tokens.",
  );
});
