// Trader pages: the prices and statuses of the markets on the page follow the same stream the
// punters' pages get, and market actions (suspend, resume, set price) are sent with fetch and
// answered with the market's row, replaced in place, so the trader keeps their place. Without
// script the same forms post and come back to the same market.
import { api } from "./api";
import { compareDecimal } from "./decimal";
import { setText } from "./dom";
import { decimalText } from "./odds";
import { type ConnectionStatus, type MarketState, OddsClient } from "./protocol";
import { matchOf, matchState, startScores } from "./scores";

const FLASH_MS = 1200;
const TICK_MS = 1000;
// The trader's word for each suspension reason (reducers/suspensions.py, REASONS[].label).
const REASON_LABEL: Record<string, string> = {
  kick_off: "Kick-off",
  goal: "Goal",
  red_card: "Red card",
  var: "VAR check",
  break_of_serve: "Break of serve",
  trader: "Trader",
  feed_lost: "Feed lost",
};
const LONG_SUSPENSION_S = 600;

/** How long, in the trading pages' words: 45 s, 3 min, 1 h 20 min (reducers.suspensions.duration_text). */
export function durationText(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The market ids listed by the page's live region(s). */
export function tradingMarkets(root: ParentNode = document): number[] {
  const ids = new Set<number>();
  for (const node of root.querySelectorAll<HTMLElement>(".trading-live[data-markets]")) {
    for (const part of (node.dataset.markets ?? "").split(",")) {
      const id = Number(part);
      if (Number.isInteger(id) && id > 0) ids.add(id);
    }
  }
  return [...ids];
}

/** The status a trader sees: a market the stream marks untradable while open is suspended. */
export function shownStatus(state: Pick<MarketState, "status" | "tradable">): string {
  if (state.status === "open" && !state.tradable) return "suspended";
  return state.status;
}

function flash(node: HTMLElement): void {
  node.classList.remove("flash-change");
  void node.offsetWidth;
  node.classList.add("flash-change");
  window.setTimeout(() => node.classList.remove("flash-change"), FLASH_MS);
}

/** Apply a market's streamed state to its row: prices (with a highlight when they move) and status. */
export function renderTradingMarket(state: MarketState, root: ParentNode = document): void {
  const row = root.querySelector<HTMLElement>(`.market-row[data-market="${state.market_id}"]`);
  if (row === null) return;
  for (const selection of state.selections) {
    const cell = row.querySelector<HTMLElement>(`tr[data-selection="${selection.id}"] [data-price]`);
    if (cell === null) continue;
    const text = decimalText(selection.price);
    const old = cell.dataset.live ?? cell.textContent?.trim() ?? "";
    cell.dataset.live = selection.price;
    if (old !== "" && compareDecimal(selection.price, old) !== 0) {
      setText(cell, text);
      flash(cell);
    } else {
      setText(cell, text);
    }
  }
  const status = shownStatus(state);
  const badge = row.querySelector<HTMLElement>("[data-market-status]");
  if (badge !== null && badge.textContent !== status) {
    badge.textContent = status;
    badge.className = `badge status-${status}`;
    flash(badge);
  }
  row.dataset.live = status;
  suspensionNote(row, status);
}

/** A suspended market says why, who did it and for how long; the note goes when it reopens. A
 * suspension the stream brings is named from the event's match state when the feed set it. */
function suspensionNote(row: HTMLElement, status: string): void {
  const note = row.querySelector<HTMLElement>("[data-suspension]");
  if (status !== "suspended") {
    note?.remove();
    return;
  }
  if (note !== null) return;
  const eventId = Number(row.closest<HTMLElement>("[data-event]")?.dataset.event ?? 0);
  const reason = matchOf(eventId)?.suspension ?? null;
  const since = reason?.since ?? Date.now();
  const label = reason ? `${REASON_LABEL[reason.reason] ?? reason.reason} · by feed` : "Suspended";
  const fresh = document.createElement("span");
  fresh.className = "suspension";
  fresh.dataset.suspension = "";
  fresh.dataset.since = new Date(since).toISOString();
  fresh.dataset.longAfter = String(LONG_SUSPENSION_S);
  const duration = document.createElement("span");
  duration.dataset.duration = "";
  duration.textContent = durationText((Date.now() - since) / 1000);
  fresh.append(`${label} · for `, duration);
  row.querySelector("[data-market-status]")?.after(" ", fresh);
}

/** Advance every suspension's duration, and flag it once it is long. */
function tickSuspensions(now: number): void {
  for (const note of document.querySelectorAll<HTMLElement>("[data-suspension][data-since]")) {
    const since = Date.parse(note.dataset.since ?? "");
    if (Number.isNaN(since)) continue;
    const seconds = (now - since) / 1000;
    setText(note.querySelector("[data-duration]"), durationText(seconds));
    const long = seconds >= Number(note.dataset.longAfter ?? LONG_SUSPENSION_S);
    if (long && !note.classList.contains("long")) {
      note.classList.add("long");
      note.prepend(Object.assign(document.createElement("strong"), { textContent: "Long:" }), " ");
    }
  }
}

function messageNear(form: HTMLFormElement, text: string, ok: boolean): void {
  let note = form.querySelector<HTMLElement>(".action-message");
  if (note === null) {
    note = document.createElement("span");
    note.className = "action-message";
    form.append(note);
  }
  note.setAttribute("role", ok ? "status" : "alert");
  note.className = `action-message ${ok ? "success" : "error"}`;
  note.textContent = text;
  const price = form.querySelector<HTMLInputElement>('input[name="price"]');
  if (price !== null) {
    if (ok) price.removeAttribute("aria-invalid");
    else price.setAttribute("aria-invalid", "true");
  }
}

/** A message for the whole row (its controls changed, e.g. Suspend became Resume). */
function rowMessage(row: HTMLElement, text: string, ok: boolean): void {
  const note = row.querySelector<HTMLElement>(".market-head > .action-message");
  if (note === null) return;
  note.className = `action-message ${ok ? "success" : "error"}`;
  note.textContent = text;
}

interface ActionAnswer {
  ok: boolean;
  message: string;
  row?: string;
}

function isAnswer(value: unknown): value is ActionAnswer {
  return typeof value === "object" && value !== null && typeof (value as ActionAnswer).message === "string";
}

/** Which control of a row a form is, to put the focus back on it in the new row. */
function formKey(form: HTMLFormElement): string {
  const selection = form.querySelector<HTMLInputElement>('input[name="selection_id"]')?.value ?? "";
  return `${form.getAttribute("action") ?? ""}|${selection}`;
}

async function send(form: HTMLFormElement): Promise<void> {
  const row = form.closest<HTMLElement>(".market-row");
  row?.classList.add("busy");
  let answer: ActionAnswer;
  try {
    const response = await fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    const body: unknown = await response.json().catch(() => null);
    answer = isAnswer(body)
      ? body
      : { ok: false, message: `The server could not do this (HTTP ${response.status}); try again.` };
  } catch {
    answer = { ok: false, message: "No connection to the server; nothing was changed. Try again." };
  } finally {
    row?.classList.remove("busy");
  }
  if (answer.row !== undefined && row !== null) {
    const key = formKey(form);
    const template = document.createElement("template");
    template.innerHTML = answer.row.trim();
    const fresh = template.content.firstElementChild as HTMLElement | null;
    if (fresh !== null) {
      row.replaceWith(fresh);
      const same = [...fresh.querySelectorAll<HTMLFormElement>("form")].find((f) => formKey(f) === key);
      if (same !== undefined) messageNear(same, answer.message, answer.ok);
      else rowMessage(fresh, answer.message, answer.ok);
      const focus = same?.querySelector<HTMLElement>("input[name=price], button") ?? fresh.querySelector<HTMLElement>(".market-head button");
      focus?.focus({ preventScroll: true });
      return;
    }
  }
  messageNear(form, answer.message, answer.ok);
}

function connection(status: ConnectionStatus): void {
  const node = document.getElementById("trading-conn");
  if (node === null) return;
  node.dataset.state = status;
  node.textContent = status === "live" ? "Live prices" : status === "offline" ? "Offline" : "Connecting…";
}

function boot(): void {
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-fetch")) return;
    event.preventDefault();
    void send(form);
  });
  startScores();
  window.setInterval(() => tickSuspensions(Date.now()), TICK_MS);
  const markets = tradingMarkets();
  if (markets.length === 0) return;
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const client = new OddsClient({
    url: `${scheme}://${window.location.host}/ws/odds/`,
    markets,
    onMarket: (state) => renderTradingMarket(state),
    onStatus: connection,
    onMatch: matchState,
    control: { begin: async (channel, resync, since) => void (await api.begin(channel, resync, since)) },
  });
  window.addEventListener("offline", () => client.stop());
  window.addEventListener("online", () => client.start());
  client.start();
  window.oddsClient = client;
}

declare global {
  interface Window {
    oddsClient?: OddsClient;
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
