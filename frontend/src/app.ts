// Page wiring: find the prices on the page, stream their markets, flash changes.
import { type MarketState, OddsClient } from "./protocol";

function flash(button: HTMLElement, direction: "up" | "down"): void {
  button.classList.remove("up", "down");
  // Force a reflow so the class re-triggers the highlight on consecutive moves.
  void button.offsetWidth;
  button.classList.add(direction);
  window.setTimeout(() => button.classList.remove(direction), 700);
}

function render(state: MarketState, previous: MarketState | undefined): void {
  const suspended = !state.tradable;
  for (const selection of state.selections) {
    const buttons = document.querySelectorAll<HTMLButtonElement>(`.price[data-selection="${selection.id}"]`);
    for (const button of buttons) {
      const odds = button.querySelector<HTMLElement>(".odds");
      const old = previous?.selections.find((s) => s.id === selection.id)?.price ?? button.dataset.price;
      if (odds !== null && odds.textContent !== selection.price) odds.textContent = selection.price;
      button.dataset.price = selection.price;
      const off = suspended || selection.status !== "active";
      button.disabled = off;
      button.classList.toggle("suspended", off);
      if (old !== undefined && old !== selection.price) {
        flash(button, Number(selection.price) > Number(old) ? "up" : "down");
      }
    }
  }
  const box = document.querySelector<HTMLElement>(`[data-market-box="${state.market_id}"]`);
  if (box !== null) {
    box.dataset.status = state.status;
    const label = box.querySelector<HTMLElement>(".market-status");
    if (label !== null) label.textContent = state.status === "open" ? "" : state.status;
  }
}

function boot(): void {
  const markets = new Set<number>();
  for (const el of document.querySelectorAll<HTMLElement>(".price[data-market]")) {
    markets.add(Number(el.dataset.market));
  }
  const status = document.getElementById("conn-status");
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const path = document.body.dataset.wsPath ?? "/ws/odds/";
  const client = new OddsClient({
    url: `${scheme}://${window.location.host}${path}`,
    markets: [...markets],
    onMarket: render,
    onStatus: (s) => {
      if (status !== null) {
        status.dataset.state = s;
        status.textContent = s === "live" ? "● live" : `${s}…`;
      }
    },
  });
  client.start();
  (window as unknown as { oddsClient: OddsClient }).oddsClient = client;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
