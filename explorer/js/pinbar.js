// The bar above the all-heads grid that pins a token: the sentence's shown tokens as buttons
// (their text set as textContent, never as HTML) and a row/column switch. A click, Enter or
// Space on a token pins it and again unpins it; Escape in the bar unpins. Changes go through
// the pin's own state (state.js): {pin: token id or -1, along: "row" | "column"}.

const BAR = `
<span class="ax-pin-label">Pin a token:</span>
<span class="ax-pin-along" role="group" aria-label="what a pinned token's tiles show">
  <button type="button" data-along="row">its row: what it attends to</button>
  <button type="button" data-along="column">its column: who attends to it</button>
</span>
<div class="ax-pin-tokens" role="group" aria-label="the sentence's tokens"></div>
<p class="ax-pin-note" aria-live="polite"></p>`;

// Fill `bar` with the switch and one button per shown token (`keep`: token ids).
export function buildPinBar(bar, tokens, keep) {
  bar.innerHTML = BAR; // fixed markup only: the tokens go in below as textContent
  const holder = bar.querySelector(".ax-pin-tokens");
  for (const t of keep) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "ax-pin-token";
    button.dataset.token = String(t);
    button.textContent = tokens[t];
    button.title = `${t}: ${tokens[t]}`;
    holder.appendChild(button);
  }
}

// Show the pin and the direction as pressed buttons, and say what the tiles now show.
export function syncPinBar(bar, { pin, along }, note) {
  for (const b of bar.querySelectorAll("[data-token]")) {
    b.setAttribute("aria-pressed", String(Number(b.dataset.token) === pin));
  }
  for (const b of bar.querySelectorAll("[data-along]")) {
    b.setAttribute("aria-pressed", String(b.dataset.along === along));
  }
  bar.querySelector(".ax-pin-note").textContent = note;
}

// Clicks (and Enter or Space, which click a focused button) pin, unpin and switch direction.
export function wirePinBar(bar, state) {
  bar.addEventListener("click", (e) => {
    const button = e.target.closest && e.target.closest("button");
    if (!button) return;
    if (button.dataset.along) state.set({ along: button.dataset.along });
    if (button.dataset.token) {
      const token = Number(button.dataset.token);
      state.set({ pin: state.get().pin === token ? -1 : token });
    }
  });
  bar.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && state.get().pin >= 0) {
      e.preventDefault();
      state.set({ pin: -1 });
    }
  });
}
