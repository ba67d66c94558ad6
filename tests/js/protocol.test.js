// Packing and unpacking the explorer's numbers (explorer/js/protocol.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  blockMessage,
  blockReplyKey,
  blockRequest,
  decodeFloat32,
  encodeFloat32,
  float32From,
} from "../../explorer/js/protocol.js";

const VALUES = [1, -2.5, 0.1, 3.4028234663852886e38, -Infinity];

test("base64 of little-endian float32 decodes to the same numbers", () => {
  // What Python sends: base64.b64encode(np.asarray(VALUES, "<f4").tobytes())
  const bytes = Buffer.alloc(4 * VALUES.length);
  VALUES.forEach((v, i) => bytes.writeFloatLE(v, 4 * i));
  const got = decodeFloat32(bytes.toString("base64"));
  assert.deepEqual(Array.from(got), VALUES.map(Math.fround));
});

test("encoding and decoding round-trip, also past one chunk of 32 kB", () => {
  const big = new Float32Array(20000).map((_, i) => Math.fround(Math.sin(i) * 100));
  assert.deepEqual(decodeFloat32(encodeFloat32(big)), big);
  assert.equal(
    encodeFloat32(new Float32Array([1])),
    Buffer.from([0, 0, 128, 63]).toString("base64"),
  );
});

test("bytes from an ArrayBuffer, an aligned or a misaligned DataView", () => {
  const floats = new Float32Array([1.5, -2, 7]);
  assert.deepEqual(float32From(floats.buffer), floats);
  assert.deepEqual(float32From(new DataView(floats.buffer)), floats);
  const shifted = new Uint8Array(13);
  shifted.set(new Uint8Array(floats.buffer), 1); // starts at byte 1: not a multiple of 4
  const got = float32From(new DataView(shifted.buffer, 1, 12));
  assert.deepEqual(got, floats);
  assert.equal(got.byteOffset, 0);
  assert.throws(() => float32From(new DataView(shifted.buffer, 1, 10)), /whole number/);
});

test("a block request and the widget's messages", () => {
  assert.deepEqual(JSON.parse(blockRequest("minilm", "a b", 2, "qk")), {
    model: "minilm",
    text: "a b",
    layer: 2,
    part: "qk",
  });
  assert.deepEqual(blockMessage(3, "scores", 7), {
    type: "block",
    layer: 3,
    part: "scores",
    id: 7,
  });
  assert.equal(blockReplyKey({ type: "block", layer: 3, part: "scores", id: 7 }), 7);
  assert.equal(blockReplyKey({ type: "block", layer: 3, part: "scores" }), null); // no id: not ours
  assert.equal(blockReplyKey({ type: "other" }), null);
  assert.equal(blockReplyKey(undefined), null);
});
