// Where a view's numbers come from: a `source` with block(layer, part) -> Promise<Float32Array>
// (and peek(layer, part), the block at once if it has arrived), over one cache of blocks kept
// for the page's lifetime, so a view switching back, or another view of the same sentence,
// never asks twice. Bounded: past `budget` bytes the least recently used blocks go.
// Two ways to ask: HTTP from the app's routes (server/api.py, with the page's token; a refusal
// is JSON {error}), for a sentence's blocks or a stored clip's (Whisper's cross-attention), and
// messages to the notebook's widget. A view asks for the layer it draws (askOnce) and, once
// drawn, for the others when they are small (prefetchLayers). A long sentence (map.js) asks
// for one head's map or tiles instead (head, peekHead: the request's fields name the block),
// and for its roles (part "roles": UTF-8 JSON bytes, not floats).

import { blockMessage, blockReplyKey, blockRequest, clipRequest, float32From } from "./protocol.js";

export const BLOCK_BUDGET = 256 * 2 ** 20;

export class BlockCache {
  constructor(budget = BLOCK_BUDGET) {
    this.budget = budget;
    this.entries = new Map(); // key -> {array, error, promise}; least recently used first
  }

  // The entry for `key` (an arrived one becomes the most recently used), or undefined.
  peek(key) {
    const entry = this.entries.get(key);
    if (entry?.array) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  // The block for `key`, asking `load()` (a Promise of a Float32Array) only if nobody has yet.
  load(key, load) {
    const known = this.peek(key);
    if (known && !known.error) return known.promise;
    const entry = { array: null, error: null, promise: null };
    entry.promise = load().then(
      (array) => {
        entry.array = array;
        this.evict();
        return array;
      },
      (err) => {
        // A dropped request (a newer one of the page replaced it) is no failure: forgotten,
        // so the view asks again if it still wants the block.
        if (err?.dropped) {
          if (this.entries.get(key) === entry) this.entries.delete(key);
        } else entry.error = String(err?.message || err);
        throw err;
      },
    );
    entry.promise.catch(() => {}); // the error is kept on the entry; callers see it too
    this.entries.set(key, entry);
    return entry.promise;
  }

  // Hold `array` as the arrived block for `key` (a block carried with the page).
  put(key, array) {
    this.entries.set(key, { array, error: null, promise: Promise.resolve(array) });
    this.evict();
  }

  bytes() {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.array?.byteLength || 0;
    return total;
  }

  evict() {
    let total = this.bytes();
    for (const [key, entry] of this.entries) {
      if (total <= this.budget) break;
      if (!entry.array) continue; // still arriving
      this.entries.delete(key);
      total -= entry.array.byteLength;
    }
  }

  // Forget failed blocks, so that a later view asks again.
  dropErrors() {
    for (const [key, entry] of this.entries) if (entry.error) this.entries.delete(key);
  }
}

const CACHE = new BlockCache(); // one per page (module instance), shared by every view

// A source of one sentence's blocks: `id` names the sentence, `load(layer, part, more)` fetches
// one (`more`: a head request's fields).
export function createSource(id, load, cache = CACHE) {
  cache.dropErrors();
  const key = (layer, part) => `${id}\u0000${layer}\u0000${part}`;
  const headKey = (fields) => `${id}\u0000head\u0000${JSON.stringify(fields)}`;
  return {
    // One head's map or tile (map.js headFields), asked once; as peek() for peekHead().
    head(fields) {
      return cache.load(headKey(fields), () => load(fields.layer, fields.part, fields));
    },
    peekHead(fields) {
      const entry = cache.peek(headKey(fields));
      if (entry?.array) return entry.array;
      return entry?.error ? { error: entry.error } : undefined;
    },
    // The block if it has arrived, {error} if it failed, else undefined (nothing is asked).
    peek(layer, part) {
      const entry = cache.peek(key(layer, part));
      if (entry?.array) return entry.array;
      return entry?.error ? { error: entry.error } : undefined;
    },
    block(layer, part) {
      return cache.load(key(layer, part), () => load(layer, part));
    },
    // Take a block that came with the view (its opening layer) as if it had been fetched.
    seed(layer, part, array) {
      cache.put(key(layer, part), array);
    },
  };
}

export const TOKEN_HEADER = "X-Attention-Token"; // explorer/page_token.py's HEADER
const DROPPED = 409; // the server dropped the request: the page asked for something newer
const AGAIN_MS = 1000; // a dropped block is forgotten this long after, then asked again if wanted

// The sentence of a refusal: the route's JSON {error}, else its status.
export async function refusal(response) {
  try {
    const body = await response.json();
    if (typeof body?.error === "string" && body.error) return body.error;
  } catch {
    // not JSON (a proxy's page): the status says enough
  }
  return `the server answered ${response.status}`;
}

// POST `body` to the route `api` with the page's token; the answer's bytes as float32 (as
// bytes when `asBytes`). A dropped request rejects with an error marked `dropped` (after
// AGAIN_MS, so a view still wanting the block asks again without racing the request that
// replaced it).
export async function fetchFloats(api, token, body, asBytes = false) {
  const headers = { "Content-Type": "application/json", [TOKEN_HEADER]: token || "" };
  const response = await fetch(api, { method: "POST", headers, body });
  if (response.status === DROPPED) {
    await new Promise((resolve) => setTimeout(resolve, AGAIN_MS));
    throw Object.assign(new Error("replaced by a newer request"), { dropped: true });
  }
  if (!response.ok) throw new Error(await refusal(response));
  const buffer = await response.arrayBuffer();
  return asBytes ? new Uint8Array(buffer) : new Float32Array(buffer);
}

// The app's source: POST {model, text, layer, part} to the route `api`; the body is the block.
export function httpSource({ api, model, text, token }) {
  return createSource(`${model}\u0000${text}`, (layer, part, more) =>
    fetchFloats(api, token, blockRequest(model, text, layer, part, more), part === "roles"),
  );
}

// A stored clip's source: POST {model, clip, layer, part, frames} to the same route; the body
// is the layer's block (part "cross": [heads, text tokens, frames], pack.cross_block).
export function clipSource({ api, model, clip, frames, token }) {
  return createSource(`${model}\u0000${clip}\u0000${frames.join("-")}`, (layer, part) =>
    fetchFloats(api, token, clipRequest(model, clip, layer, part, frames)),
  );
}

// Ask `source` for one block unless the view's `asked` (a Set) says it is on its way; `then`
// runs once when it arrives or fails.
export function askOnce(source, asked, layer, part, then) {
  const key = `${layer}:${part}`;
  if (asked.has(key)) return;
  asked.add(key);
  const done = () => {
    asked.delete(key);
    then();
  };
  source.block(layer, part).then(done, done);
}

// The floats of one layer's block of each part, for a view's header.
const PART_FLOATS = {
  scores: (h) => h.n_heads * h.n_tokens * h.n_tokens,
  norms: (h) => h.n_heads * h.n_tokens,
  rollout: (h) => h.n_tokens * h.n_tokens,
  cross: (h) => h.n_heads * h.n_tokens * h.n_frames,
};

export function layerFloats(header, parts) {
  return parts.reduce((sum, part) => sum + PART_FLOATS[part](header), 0);
}

// Once a view's first layer is drawn, ask for the other layers' blocks too (`parts` of each)
// when all of them come to this many bytes or fewer (scores: 170 tokens on MiniLM, 88 on
// SmolLM2; cross-attention: 50 tokens over 30 s of audio), so a layer switch never waits.
export const PREFETCH_BYTES = 8 * 2 ** 20;

export function prefetchLayers(source, header, first, parts) {
  if (4 * header.n_layers * layerFloats(header, parts) > PREFETCH_BYTES) return;
  const all = (layer) => Promise.all(parts.map((part) => source.block(layer, part)));
  const rest = async () => {
    for (let layer = 0; layer < header.n_layers; layer++) {
      if (layer !== first) await all(layer);
    }
  };
  all(first)
    .then(rest)
    .catch(() => {});
}

// The widget's source: a custom message per block; the widget's kernel side answers with the
// bytes as the message's first buffer, or with an error and no buffer. close() stops listening.
let lastRequest = 0; // ids of block messages, unique on the page

// A buffer as it arrives (a DataView, an ArrayBuffer) as a Uint8Array of its bytes.
function bytesFrom(data) {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export function messageSource(model, id) {
  const pending = new Map(); // request id -> {resolve, reject, part}
  const onMessage = (msg, buffers) => {
    const key = blockReplyKey(msg);
    const waiter = key && pending.get(key);
    if (!waiter) return;
    pending.delete(key);
    if (msg.error || !buffers?.length) waiter.reject(new Error(msg.error || "no bytes came"));
    else if (waiter.part === "roles") waiter.resolve(bytesFrom(buffers[0]));
    else waiter.resolve(float32From(buffers[0]));
  };
  model.on("msg:custom", onMessage);
  const source = createSource(`${id}`, (layer, part, more) => {
    const request = ++lastRequest;
    const asked = new Promise((resolve, reject) => {
      pending.set(request, { resolve, reject, part });
    });
    model.send(blockMessage(layer, part, request, more));
    return asked;
  });
  source.close = () => {
    model.off("msg:custom", onMessage);
    for (const waiter of pending.values()) waiter.reject(new Error("the view was closed"));
    pending.clear();
  };
  return source;
}
