// A sentence's numbers, fetched one layer block at a time from the server's HTTP route
// (ui/api.py) and kept for the page's lifetime, so a view switching back, or another view
// of the same sentence, never asks twice. Bounded: the oldest blocks go past BLOCK_BUDGET bytes.

const BLOCK_BUDGET = 256 * 2 ** 20;
const BLOCKS = (globalThis.__attentionBlocks ||= new Map());  // shared by every view on the page

function blockKey(src, layer, part) {
  return `${src.model}\u0000${src.text}\u0000${layer}\u0000${part}`;
}

function evictBlocks() {
  let total = 0;
  for (const entry of BLOCKS.values()) total += entry.bytes;
  for (const [key, entry] of BLOCKS) {
    if (total <= BLOCK_BUDGET) break;
    if (!entry.array) continue;  // still arriving
    BLOCKS.delete(key);
    total -= entry.bytes;
  }
}

// The block if it has arrived, else undefined (and it is requested).
function peekBlock(src, layer, part, onArrive) {
  const key = blockKey(src, layer, part);
  let entry = BLOCKS.get(key);
  if (!entry) {
    entry = { array: null, bytes: 0, error: null, waiting: [] };
    BLOCKS.set(key, entry);
    requestBlock(src, layer, part, entry);
  }
  if (entry.array) {
    BLOCKS.delete(key);  // most recently used last
    BLOCKS.set(key, entry);
    return entry.array;
  }
  if (entry.error) return entry;
  if (onArrive) entry.waiting.push(onArrive);
  return undefined;
}

async function requestBlock(src, layer, part, entry) {
  try {
    const response = await fetch(src.api, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: src.model, text: src.text, layer, part }),
    });
    if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
    entry.array = new Float32Array(await response.arrayBuffer());
    entry.bytes = entry.array.byteLength;
    evictBlocks();
  } catch (err) {
    entry.error = String(err.message || err);
    BLOCKS.delete(blockKey(src, layer, part));  // a later view may try again
  }
  const waiting = entry.waiting;
  entry.waiting = [];
  for (const callback of waiting) callback();
}

// Scores sent inside a view's own data (base64 of little-endian float32), for small views
// computed on the spot (Build your own head) rather than from a cached trace.
function decodeFloat32(base64) {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}
