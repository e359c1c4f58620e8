// Notices to the punter about their own bets (a bet won, lost, void, cashed out): shown in a
// polite live region at the corner of every page, each until dismissed or for a while.
import { formatMoney } from "./decimal";
import { h } from "./dom";
import type { BetSettled } from "./protocol";

const SHOW_MS = 15_000;

/** The sentence for a closed bet. */
export function settledText(message: BetSettled): string {
  const { bet } = message;
  const on = `Your bet on ${bet.title}`;
  switch (bet.status) {
    case "won":
      return `${on} won ${formatMoney(bet.payout)}`;
    case "lost":
      return `${on} lost`;
    case "void":
      return `${on} was void: ${formatMoney(bet.payout)} is back in your balance`;
    case "cashed_out":
      return `${on} was cashed out for ${formatMoney(bet.payout)}`;
  }
}

export function showNotice(text: string, kind: string): void {
  const region = document.getElementById("notices");
  if (region === null) return;
  const close = h("button", { type: "button", class: "icon-button notice-close", "aria-label": "Dismiss", text: "×" });
  const notice = h("div", { class: "notice", "data-kind": kind }, h("p", { text }), close);
  close.addEventListener("click", () => notice.remove());
  region.append(notice);
  window.setTimeout(() => notice.remove(), SHOW_MS);
}
