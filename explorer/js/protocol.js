// How numbers travel to the explorer: float32 little-endian bytes, either as a layer block
// (HTTP body or a widget message's buffer) or as base64 inside a view's own data. Pure.

// Base64 of little-endian float32 (attention_core.methods.pack.float32_bytes) to a Float32Array.
export function decodeFloat32(base64) {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

// A Float32Array's bytes as base64 (the inverse of decodeFloat32).
export function encodeFloat32(floats) {
  const bytes = new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength);
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(raw);
}

// Bytes as they arrive (an ArrayBuffer, a DataView as anywidget hands buffers over, or any
// typed array) as a Float32Array. A view that does not start on a multiple of 4 bytes is
// copied first: a Float32Array cannot be laid over it.
export function float32From(data) {
  if (data instanceof ArrayBuffer) return new Float32Array(data);
  const { buffer, byteOffset, byteLength } = data;
  if (byteLength % 4) throw new Error(`${byteLength} bytes are not a whole number of floats`);
  if (byteOffset % 4 === 0) return new Float32Array(buffer, byteOffset, byteLength / 4);
  return new Float32Array(buffer.slice(byteOffset, byteOffset + byteLength));
}

// The body of an HTTP request for one layer block (server/api.py answers with its bytes);
// `more`: a map or a tile's head, stage, settings and window (map.js headFields).
export function blockRequest(model, text, layer, part, more = {}) {
  return JSON.stringify({ ...more, model, text, layer, part });
}

// The body of an HTTP request for one layer block of a stored clip (part "cross": a transcribed
// clip's cross-attention over `frames`, [first, end) in 20 ms frames), to the same route.
export function clipRequest(model, clip, layer, part, frames) {
  return JSON.stringify({ model, clip, layer, part, frames });
}

// The widget's message asking for one layer block (explorer/notebook.py answers it); `more`
// as for blockRequest.
export function blockMessage(layer, part, id, more = {}) {
  return { ...more, type: "block", layer, part, id };
}

// The bytes of part "roles" (UTF-8 JSON: every head's badge, [layer][head]) as its value.
export function rolesFrom(bytes) {
  return JSON.parse(new TextDecoder().decode(bytes));
}

// Is `msg` the answer to a block message? Returns the request's id, or null. The id, not the
// layer and part, matches a reply to its request: a reply for the sentence before a new one
// (same layer, same part) must not be taken for the new sentence's.
export function blockReplyKey(msg) {
  if (!msg || msg.type !== "block" || !Number.isInteger(msg.id)) return null;
  return msg.id;
}
