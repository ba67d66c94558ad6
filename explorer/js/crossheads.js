// Where the cross-attention view's heads come from: the ones sent with the view (the opening
// head; every head when the server could not hold the clip), and the others fetched once each
// from the server's route (server/cross_blocks.py: POST {id, layer, head} with the page's token,
// the body is that head's float32 rows, a refusal JSON {error}) into the page's block cache
// (source.js), so switching back to a head, or a rerun mounting the same clip again, never asks
// twice.

import { headKey, inlineHeads } from "./crossdata.js";
import { decodeFloat32 } from "./protocol.js";
import { createSource, fetchFloats } from "./source.js";

// The route's body for one head.
export function headRequest(id, layer, head) {
  return JSON.stringify({ id, layer, head });
}

function httpHeads(api, id, token) {
  return createSource(`cross\u0000${id}`, (layer, head) =>
    fetchFloats(api, token, headRequest(id, layer, head)),
  );
}

// The heads of `data` (cross_data's: inline, store, api, token) for `shape`: peek(layer, head) gives
// the rows at once if they are here, {error} if fetching them failed, else undefined;
// load(layer, head) a Promise of them (asking the server only if nobody has yet).
export function crossHeads(data, shape) {
  const inline = inlineHeads(data.inline || [], shape, decodeFloat32);
  const remote = data.store ? httpHeads(data.api, data.store, data.token) : null;
  const missing = "This head was not sent with the view, and the server holds none.";
  return {
    peek(layer, head) {
      return inline.get(headKey(layer, head)) || remote?.peek(layer, head);
    },
    load(layer, head) {
      const here = inline.get(headKey(layer, head));
      if (here) return Promise.resolve(here);
      return remote ? remote.block(layer, head) : Promise.reject(new Error(missing));
    },
    // Ask for these [layer, head] pairs now, if nobody has yet (a failure is kept, not thrown).
    prefetch(pairs) {
      for (const [layer, head] of pairs) {
        if (!this.peek(layer, head)) this.load(layer, head).catch(() => {});
      }
    },
  };
}
