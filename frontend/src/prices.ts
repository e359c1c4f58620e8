// Prices on the page: every .price button shows its selection's live price in the chosen format,
// flashes when it moves, and is disabled while its market or selection cannot be backed.
import { compareDecimal } from "./decimal";
import { setText } from "./dom";
import { formatOdds, type OddsFormat } from "./odds";
import type { MarketState } from "./protocol";
import { suspensionText } from "./scoreboard";
import { matchOf } from "./scores";

const FLASH_MS = 900;
const timers = new WeakMap<Element, number>();

export function displayOdds(price: string, fmt: OddsFormat): string {
  try {
    return formatOdds(price, fmt);
  } catch {
    return price;
  }
}

function flash(node: HTMLElement, direction: "up" | "down"): void {
  node.classList.remove("up", "down");
  // A reflow restarts the highlight on consecutive moves.
  void node.offsetWidth;
  node.classList.add(direction);
  const previous = timers.get(node);
  if (previous !== undefined) window.clearTimeout(previous);
  timers.set(
    node,
    window.setTimeout(() => node.classList.remove(direction), FLASH_MS),
  );
}

export function priceButtons(root: ParentNode = document): HTMLButtonElement[] {
  return [...root.querySelectorAll<HTMLButtonElement>(".price[data-selection]")];
}

export function pageMarkets(): number[] {
  return [...new Set(priceButtons().map((b) => Number(b.dataset.market)))].filter((id) => id > 0);
}

/** Show every price on the page in ``fmt``. */
export function formatPage(fmt: OddsFormat): void {
  for (const button of priceButtons()) {
    const price = button.dataset.price;
    if (price !== undefined) setText(button.querySelector(".odds"), displayOdds(price, fmt));
  }
}

const STATUS_TEXT: Record<string, string> = { open: "", suspended: "Suspended", closed: "Closed" };

/** A market's new state: prices, flashes, suspended selections, the market's status label. */
export function renderMarket(state: MarketState, fmt: OddsFormat): void {
  const marketOpen = state.tradable && state.status === "open";
  const turned: { name: string; off: boolean; where: string }[] = [];
  for (const selection of state.selections) {
    const buttons = document.querySelectorAll<HTMLButtonElement>(`.price[data-selection="${selection.id}"]`);
    for (const button of buttons) {
      const old = button.dataset.price;
      button.dataset.price = selection.price;
      setText(button.querySelector(".odds"), displayOdds(selection.price, fmt));
      const off = !marketOpen || selection.status !== "active";
      if (button.classList.contains("suspended") !== off && turned.every((t) => t.name !== button.dataset.selectionName)) {
        turned.push({ name: button.dataset.selectionName ?? "", off, where: button.dataset.eventName ?? "" });
      }
      button.disabled = off;
      setText(button.querySelector(".mark-text"), state.status === "closed" || state.status === "settled" ? "Closed" : "Suspended");
      button.classList.toggle("suspended", off);
      if (old !== undefined && old !== selection.price) {
        flash(button, compareDecimal(selection.price, old) > 0 ? "up" : "down");
      }
    }
  }
  for (const box of document.querySelectorAll<HTMLElement>(`[data-market-box="${state.market_id}"]`)) {
    const was = box.dataset.status;
    box.dataset.status = marketOpen ? "open" : state.status === "open" ? "suspended" : state.status;
    box.dataset.seq = String(state.seq);
    setText(box.querySelector(".market-status"), statusText(box, was));
  }
  if (turned.length > 0) announce(turned);
}

/** A market box's status in words: a suspension says why when the event's match state does (a
 * goal, a VAR check), and keeps the reason the page was served with while it lasts. */
function statusText(box: HTMLElement, was: string | undefined): string {
  const status = box.dataset.status ?? "";
  if (status !== "suspended") return STATUS_TEXT[status] ?? status;
  const reason = matchOf(Number(box.dataset.event ?? 0))?.suspension?.reason;
  if (reason) return suspensionText(reason);
  const shown = box.querySelector(".market-status")?.textContent ?? "";
  return was === "suspended" && shown ? shown : (STATUS_TEXT.suspended ?? "Suspended");
}

/** Say which selections were suspended or reopened (not their price ticks): a polite live region. */
function announce(turned: { name: string; off: boolean; where: string }[]): void {
  const region = document.getElementById("price-announcer");
  if (region === null) return;
  const lines = (["suspended", "open again"] as const).flatMap((what) => {
    const names = turned.filter((t) => t.off === (what === "suspended")).map((t) => t.name);
    const where = turned[0]?.where ? ` (${turned[0].where})` : "";
    return names.length > 0 ? [`${names.join(", ")}${where}: ${what}.`] : [];
  });
  region.textContent = lines.join(" ");
}

/** Mark the buttons of the selections in the slip. */
export function markSelected(selected: Set<number>): void {
  for (const button of priceButtons()) {
    const on = selected.has(Number(button.dataset.selection));
    button.classList.toggle("selected", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }
}
