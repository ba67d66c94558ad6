// The block cache and the two sources (explorer/js/source.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  BlockCache,
  createSource,
  fetchFloats,
  httpSource,
  messageSource,
  TOKEN_HEADER,
} from "../../explorer/js/source.js";
import { rolesFrom } from "../../explorer/js/protocol.js";

const floats = (n, v = 1) => new Float32Array(n).fill(v);

test("the cache asks once per block and evicts the least recently used past its budget", async () => {
  const cache = new BlockCache(3 * 400); // room for three blocks of 100 floats
  const asked = [];
  const load = (key) => () => {
    asked.push(key);
    return Promise.resolve(floats(100));
  };
  await Promise.all([cache.load("a", load("a")), cache.load("a", load("a"))]);
  assert.deepEqual(asked, ["a"]);
  await cache.load("b", load("b"));
  await cache.load("c", load("c"));
  assert.ok(cache.peek("a").array); // "a" is now the most recently used
  await cache.load("d", load("d"));
  assert.deepEqual([...cache.entries.keys()], ["c", "a", "d"]);
  assert.equal(cache.bytes(), 1200);
  await cache.load("b", load("b"));
  assert.deepEqual(asked, ["a", "b", "c", "d", "b"]);
  assert.deepEqual([...cache.entries.keys()], ["a", "d", "b"]);
});

test("a failed block is kept as an error until errors are dropped, then asked again", async () => {
  const cache = new BlockCache();
  let calls = 0;
  const load = () =>
    ++calls === 1 ? Promise.reject(new Error("500: boom")) : Promise.resolve(floats(2));
  const source = createSource("s", (layer, part) => load(layer, part), cache);
  assert.equal(source.peek(0, "scores"), undefined);
  await assert.rejects(source.block(0, "scores"), /boom/);
  assert.deepEqual(source.peek(0, "scores"), { error: "500: boom" });
  const again = createSource("s", () => load(), cache); // a new view drops the errors
  assert.equal(again.peek(0, "scores"), undefined);
  assert.deepEqual(await again.block(0, "scores"), floats(2));
  assert.deepEqual(again.peek(0, "scores"), floats(2));
  assert.equal(calls, 2);
});

// A stand-in for anywidget's model: on/off/send, and the kernel's reply delivered by hand.
function fakeModel() {
  const listeners = new Set();
  return {
    sent: [],
    on: (name, f) => name === "msg:custom" && listeners.add(f),
    off: (name, f) => listeners.delete(f),
    send(msg) {
      this.sent.push(msg);
    },
    reply: (msg, buffers) => listeners.forEach((f) => f(msg, buffers)),
    listening: () => listeners.size,
  };
}

test("the widget's source asks by message and reads the reply's buffer", async () => {
  const model = fakeModel();
  const source = messageSource(model, `t${Math.random()}`);
  const asked = source.block(2, "qk");
  const [{ id, ...sent }] = model.sent;
  assert.deepEqual(sent, { type: "block", layer: 2, part: "qk" });
  const bytes = new Uint8Array(9);
  bytes.set(new Uint8Array(new Float32Array([0.5, 4]).buffer), 1);
  const reply = (layer, part, request, extra = {}) =>
    model.reply({ type: "block", layer, part, id: request, ...extra }, [
      new DataView(bytes.buffer, 1, 8),
    ]);
  reply(1, "qk", id + 1000); // not asked
  reply(2, "qk", id);
  assert.deepEqual(Array.from(await asked), [0.5, 4]);
  const failed = source.block(3, "scores");
  const failedId = model.sent.at(-1).id;
  model.reply(
    { type: "block", layer: 3, part: "scores", id: failedId, error: "no such layer" },
    [],
  );
  await assert.rejects(failed, /no such layer/);
  const pending = source.block(4, "scores");
  source.close();
  await assert.rejects(pending, /closed/);
  assert.equal(model.listening(), 0);
});

test("a reply to the sentence before is not taken for the new one's same block", async () => {
  const model = fakeModel();
  const before = messageSource(model, `before${Math.random()}`);
  before.block(0, "scores").catch(() => {}); // rejected when closed
  const oldId = model.sent.at(-1).id;
  before.close(); // the kernel set a new text: the view mounts a new source
  const after = messageSource(model, `after${Math.random()}`);
  const asked = after.block(0, "scores");
  const newId = model.sent.at(-1).id;
  assert.notEqual(oldId, newId);
  const old = [new DataView(new Float32Array([1, 1]).buffer)];
  const fresh = [new DataView(new Float32Array([2, 3]).buffer)];
  model.reply({ type: "block", layer: 0, part: "scores", id: oldId }, old);
  model.reply({ type: "block", layer: 0, part: "scores", id: newId }, fresh);
  assert.deepEqual(Array.from(await asked), [2, 3]);
});

// fetch stood in for by `answer(url, init)` -> a Response, restored after `run`.
async function withFetch(answer, run) {
  const real = globalThis.fetch;
  globalThis.fetch = async (url, init) => answer(url, init);
  try {
    await run();
  } finally {
    globalThis.fetch = real;
  }
}

const json = (status, body) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

test("the app's source sends the page token and shows a refusal's plain sentence", async () => {
  const seen = [];
  await withFetch(
    (url, init) => {
      seen.push([url, init.headers[TOKEN_HEADER], JSON.parse(init.body)]);
      return init.headers[TOKEN_HEADER] === "tok"
        ? new Response(floats(3, 2).buffer, { status: 200 })
        : json(403, { error: "This request has no valid page token: reload the page." });
    },
    async () => {
      const cache = new BlockCache();
      const good = httpSource({ api: "api/b", model: "m", text: "t", token: "tok" });
      assert.deepEqual(await good.block(1, "scores"), floats(3, 2));
      const bad = createSource(
        "x",
        (layer, part) => fetchFloats("api/b", "", JSON.stringify({ layer, part })),
        cache,
      );
      await assert.rejects(bad.block(0, "qk"), /no valid page token: reload the page\.$/);
      assert.deepEqual(bad.peek(0, "qk"), {
        error: "This request has no valid page token: reload the page.",
      });
    },
  );
  assert.deepEqual(seen[0], ["api/b", "tok", { model: "m", text: "t", layer: 1, part: "scores" }]);
});

test("a refusal that is not JSON says its status", async () => {
  await withFetch(
    () => new Response("<html>Bad Gateway</html>", { status: 502 }),
    async () => {
      await assert.rejects(fetchFloats("api/b", "t", "{}"), /^Error: the server answered 502$/);
    },
  );
});

test("a request the server dropped (409) is forgotten, never shown as an error", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let calls = 0;
  await withFetch(
    () =>
      ++calls === 1
        ? json(409, { error: "A newer request replaced this one." })
        : new Response(floats(2, 5).buffer, { status: 200 }),
    async () => {
      const cache = new BlockCache();
      const source = createSource("s", () => fetchFloats("api/b", "t", "{}"), cache);
      const first = source.block(0, "scores");
      await new Promise((resolve) => setImmediate(resolve)); // the answer has come: it waits
      t.mock.timers.tick(1000);
      const err = await first.catch((e) => e);
      assert.equal(err.dropped, true);
      assert.equal(source.peek(0, "scores"), undefined); // no error kept: asked again if wanted
      assert.deepEqual(await source.block(0, "scores"), floats(2, 5));
    },
  );
  assert.equal(calls, 2);
});

test("a head's map or tile is asked with its fields, once; the roles come as bytes", async () => {
  const seen = [];
  await withFetch(
    (url, init) => {
      const body = JSON.parse(init.body);
      seen.push(body);
      const bytes =
        body.part === "roles"
          ? new TextEncoder().encode('[["previous-token 0.52"]]')
          : new Float32Array([0.25, 0.75]);
      return new Response(bytes, { status: 200 });
    },
    async () => {
      const source = httpSource({ api: "api/b", model: "m", text: `t${Math.random()}` });
      const fields = { part: "tile", layer: 1, head: 2, stage: "pattern", window: [0, 1, 0, 2] };
      assert.equal(source.peekHead(fields), undefined);
      const [a, b] = await Promise.all([source.head(fields), source.head({ ...fields })]);
      assert.deepEqual(Array.from(a), [0.25, 0.75]);
      assert.equal(a, b);
      assert.equal(source.peekHead(fields), a);
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0], { ...fields, model: "m", text: seen[0].text });
      const roles = await source.block(0, "roles");
      assert.ok(roles instanceof Uint8Array);
      assert.deepEqual(rolesFrom(roles), [["previous-token 0.52"]]);
    },
  );
});
