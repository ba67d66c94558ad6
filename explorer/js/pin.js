// A pinned token in the all-heads grid: each head's tile shows only that token's row (what it
// attends to) or column (who attends to it), taken from a head's full pattern (sentences the
// grid draws from scores) or from its pooled thumbnail (longer ones, f tokens to a pixel), and
// the sentence its tooltip says. Pure functions (no DOM): tests/js/pin.test.js runs them.

import { fmt } from "./words.js";

// The pinned token's row or column of an n×n pattern, over the shown tokens `keep` (ids).
export function pinStrip(pattern, n, keep, pin, along) {
  const out = new Float64Array(keep.length);
  for (const [i, t] of keep.entries()) {
    out[i] = along === "column" ? pattern[t * n + pin] : pattern[pin * n + t];
  }
  return out;
}

// Which pixel of a pooled thumbnail holds token `pin` (f shown tokens to a pixel), or -1.
export function pooledIndex(keep, pin, f) {
  const at = keep.indexOf(pin);
  return at < 0 ? -1 : Math.floor(at / f);
}

// Row or column `at` of a side × side pooled thumbnail.
export function pooledStrip(thumb, side, at, along) {
  const out = new Float64Array(side);
  for (let i = 0; i < side; i++) {
    out[i] = along === "column" ? thumb[i * side + at] : thumb[at * side + i];
  }
  return out;
}

// The largest entry of a strip (the first if several tie): {index, value}.
export function strongest(strip) {
  let index = 0;
  for (let i = 1; i < strip.length; i++) if (strip[i] > strip[index]) index = i;
  return { index, value: strip[index] };
}

// The shown tokens in pixel `b` of a pooled strip: the first and last token ids.
export function blockSpan(keep, b, f) {
  return [keep[b * f], keep[Math.min(keep.length, (b + 1) * f) - 1]];
}

const quote = (tokens, t) => `“${tokens[t]}” (${t})`;

function spanText(tokens, [first, last]) {
  return first === last
    ? quote(tokens, first)
    : `tokens ${first}–${last} (${quote(tokens, first)} … ${quote(tokens, last)})`;
}

// The tooltip line of a pinned tile: which token the pinned one gives most weight to (row), or
// gets most weight from (column), with the number. `f` > 1: a pixel is a block of f tokens.
export function pinText({ tokens, keep, pin, along, f }, top) {
  const value = fmt(top.value, 3);
  if (f <= 1) {
    const other = quote(tokens, keep[top.index]);
    return along === "column"
      ? `${quote(tokens, pin)} gets most weight from ${other}: ${value}`
      : `${quote(tokens, pin)} gives most weight to ${other}: ${value}`;
  }
  const own = spanText(tokens, blockSpan(keep, pooledIndex(keep, pin, f), f));
  const other = spanText(tokens, blockSpan(keep, top.index, f));
  const pixel = `A pixel here is a block of ${f} tokens: ${quote(tokens, pin)} is in ${own}.`;
  return along === "column"
    ? `${pixel}\nIts block gets most weight from ${other}: ${value} ` +
        "(that block's queries averaged, this block's keys summed)."
    : `${pixel}\nIts block gives most weight to ${other}: ${value} ` +
        "(its queries averaged, that block's keys summed).";
}
