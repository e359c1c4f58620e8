// The trading desk's live pages: the risk view (/trading/risk/), the bet ticker
// (/trading/ticker/), the referred bets (/trading/referrals/) and the price movers. Each starts from the image the page was built with (a json_script) and
// follows the desk's staff channels over the odds websocket (`desk`, docs/protocol.md).
import { h, setText } from "./dom";
import {
  type DeskBetFrame,
  type DeskFrame,
  type DeskMarketBook,
  betAmount,
  formatPence,
  MOVERS_REFRESH_MS,
  moversRefreshDelay,
  REFERRAL_KINDS,
  TICKER_REASON_KINDS,
  REFERRALS_REFRESH_MS,
  RiskBook,
  type RiskEvent,
  type RiskSort,
  referralLeft,
  setBookCurrency,
  Ticker,
  type TickerFilter,
  tickerShows,
} from "./deskmodel";
import { type ConnectionStatus, OddsClient } from "./protocol";

function image<T>(id: string): T[] {
  const node = document.getElementById(id);
  if (node === null) return [];
  try {
    return JSON.parse(node.textContent ?? "[]") as T[];
  } catch {
    return [];
  }
}

function connection(status: ConnectionStatus): void {
  const node = document.getElementById("desk-conn");
  if (node === null) return;
  node.dataset.state = status;
  node.textContent = status === "live" ? "Live" : status === "offline" ? "Offline" : "Connecting…";
}

/** A page's address for an id, from the one Django reversed with 0 (its last "/0/"). */
function urlWithId(template: string, id: number): string {
  const at = template.lastIndexOf("/0/");
  return at < 0 ? template : `${template.slice(0, at)}/${id}/${template.slice(at + 3)}`;
}

function plCell(pence: number, worst: boolean): HTMLTableCellElement {
  const cls = `num ${pence < 0 ? "pl-loss" : "pl-win"}${worst ? " pl-worst" : ""}`;
  return h("td", { class: cls, "data-label": "P/L" }, formatPence(pence));
}

function marketTable(book: DeskMarketBook): HTMLTableElement {
  const caption = h(
    "caption",
    {},
    book.market || `Market ${book.market_id}`,
    " ",
    h("span", { class: "hint" }, `· staked ${formatPence(book.staked)} · ${book.bets} open bet${book.bets === 1 ? "" : "s"}`),
  );
  const rows = book.outcomes.map((o) =>
    h(
      "tr",
      { "data-selection": o.selection_id, class: o.selection_id === book.worst_selection ? "worst" : null },
      h("th", { scope: "row" }, o.name || `Selection ${o.selection_id}`, o.selection_id === book.worst_selection ? h("span", { class: "badge status-closed" }, "worst") : null),
      plCell(o.pl, o.selection_id === book.worst_selection),
    ),
  );
  return h(
    "table",
    { class: "grid risk-market", "data-market": book.market_id },
    caption,
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Outcome"), h("th", { scope: "col", class: "num" }, "Book P/L"))),
    h("tbody", {}, ...rows),
  );
}

function eventSection(event: RiskEvent, eventUrl: string, moved: Set<number>): HTMLElement {
  const markets = [...event.markets.values()].sort((a, b) => a.worst - b.worst || a.market_id - b.market_id);
  const section = h(
    "section",
    { class: "panel risk-event", "data-event": event.event_id, "aria-label": event.event || `Event ${event.event_id}` },
    h(
      "header",
      { class: "risk-head" },
      h("h2", {}, h("a", { href: urlWithId(eventUrl, event.event_id) }, event.event || `Event ${event.event_id}`)),
      h("span", { class: "badge" }, event.sport || "—"),
      event.in_play ? h("span", { class: "badge status-open" }, "in play") : null,
      h("span", { class: "risk-figure" }, "Worst case ", h("strong", { class: event.worst < 0 ? "pl-loss" : "pl-win", "data-role": "event-worst" }, formatPence(event.worst))),
      h("span", { class: "risk-figure" }, "Staked ", h("strong", {}, formatPence(event.staked))),
    ),
    h("div", { class: "risk-markets" }, ...markets.map(marketTable)),
  );
  if (markets.some((m) => moved.has(m.market_id))) section.classList.add("flash-change");
  return section;
}

function riskPage(host: HTMLElement): void {
  const book = new RiskBook();
  for (const market of image<DeskMarketBook>("risk-image")) book.apply(market);
  const sortPicker = document.getElementById("risk-sort") as HTMLSelectElement | null;
  const eventUrl = host.dataset.eventUrl ?? "/trading/event/0/";
  let moved = new Set<number>();
  let scheduled = false;
  const render = () => {
    scheduled = false;
    const events = book.sorted((sortPicker?.value ?? "exposure") as RiskSort);
    host.replaceChildren(
      ...(events.length ? events.map((e) => eventSection(e, eventUrl, moved)) : [h("p", { class: "panel" }, "No open bets: nothing at risk.")]),
    );
    setText(document.getElementById("risk-count"), `${events.length} event${events.length === 1 ? "" : "s"} with open bets`);
    moved = new Set();
  };
  const later = () => {
    if (scheduled) return;
    scheduled = true;
    window.requestAnimationFrame(render);
  };
  sortPicker?.addEventListener("change", render);
  render();
  follow((frame) => {
    if (frame.type !== "desk.liability") return;
    setBookCurrency(frame.currency);
    for (const market of frame.markets) {
      book.apply(market);
      moved.add(market.market_id);
    }
    later();
  });
}

/** The ticker's names of what happened to a bet: the kind filter's options (from the server). */
function kindLabels(form: HTMLFormElement | null): Map<string, string> {
  const labels = new Map<string, string>();
  for (const option of form?.querySelectorAll<HTMLOptionElement>('select[name="kind"] option') ?? []) {
    if (option.value) labels.set(option.value, option.textContent ?? option.value);
  }
  return labels;
}

/** What a pending, referred or rejected bet says under its kind: when it is decided, why it went to
 * a trader, or why it was refused; what a trader offered back, and what a corrected result did. */
function tickerNote(bet: DeskBetFrame, referralsUrl: string): HTMLElement | null {
  if (TICKER_REASON_KINDS.has(bet.kind) && bet.reason) return h("div", { class: "hint ticker-reason" }, bet.reason);
  if (bet.kind === "pending" && bet.until) {
    const until = new Date(bet.until);
    return h("div", { class: "hint" }, "in-play delay, decided at ", h("time", { datetime: until.toISOString() }, until.toLocaleTimeString("en-GB")));
  }
  if (bet.kind === "referred") {
    const until = bet.until ? new Date(bet.until) : null;
    return h(
      "div",
      { class: "hint" },
      bet.reason,
      until ? " · answer by " : null,
      until ? h("time", { datetime: until.toISOString() }, until.toLocaleTimeString("en-GB")) : null,
      referralsUrl ? " · " : null,
      referralsUrl ? h("a", { href: referralsUrl }, "decide") : null,
    );
  }
  return null;
}

interface TickerLinks {
  event: string;
  customer: string;
  referrals: string;
  labels: Map<string, string>;
}

function tickerRow(bet: DeskBetFrame, links: TickerLinks): HTMLTableRowElement {
  const { event: eventUrl, customer: customerUrl, labels } = links;
  const when = new Date(bet.ts);
  const legs = bet.legs.map((leg) =>
    h(
      "div",
      { class: "ticker-leg" },
      h("a", { href: `${urlWithId(eventUrl, leg.event_id)}#market-${leg.market_id}` }, leg.selection || `Selection ${leg.selection_id}`),
      ` @ ${leg.price} · `,
      h("span", { class: "hint" }, [leg.market, leg.event, leg.sport].filter(Boolean).join(" · ") || `market ${leg.market_id}`),
      leg.in_play ? h("span", { class: "badge status-open" }, "in play") : null,
    ),
  );
  return h(
    "tr",
    { "data-bet": bet.bet_id, "data-kind": bet.kind, class: `ticker-${bet.kind}` },
    h("td", { "data-label": "When" }, h("time", { datetime: when.toISOString() }, when.toLocaleTimeString("en-GB"))),
    h(
      "td",
      { "data-label": "What" },
      h("span", { class: "badge" }, labels.get(bet.kind) ?? bet.kind),
      ` #${bet.bet_id}`,
      bet.legs.length > 1 ? ` (${bet.legs.length}-fold)` : "",
      tickerNote(bet, links.referrals),
    ),
    h("td", { "data-label": "Customer" }, h("a", { href: urlWithId(customerUrl, bet.user_id) }, `#${bet.user_id}`)),
    h("td", { "data-label": "Selections" }, ...legs),
    h("td", { class: "num", "data-label": "Stake" }, betAmount(bet.stake, bet.currency, bet.book_stake)),
    h("td", { class: "num", "data-label": "Returns" }, betAmount(bet.potential_return, bet.currency, bet.book_potential_return)),
  );
}

function tickerPage(table: HTMLTableElement): void {
  const ticker = new Ticker();
  for (const bet of image<DeskBetFrame>("ticker-image").reverse()) ticker.add(bet);
  const form = document.getElementById("ticker-filters") as HTMLFormElement | null;
  const body = table.tBodies[0] ?? table.createTBody();
  const eventUrl = table.dataset.eventUrl ?? "/trading/event/0/";
  const customerUrl = table.dataset.customerUrl ?? "/trading/customers/0/";
  const links: TickerLinks = { event: eventUrl, customer: customerUrl, referrals: table.dataset.referralsUrl ?? "", labels: kindLabels(form) };
  const filter = (): TickerFilter => {
    const data = form ? new FormData(form) : new FormData();
    return {
      sport: String(data.get("sport") ?? ""),
      stakeOver: String(data.get("stake_over") ?? ""),
      customer: String(data.get("customer") ?? ""),
      inPlay: data.get("in_play") !== null,
      kind: String(data.get("kind") ?? ""),
    };
  };
  const render = () => {
    const chosen = filter();
    const shown = ticker.bets.filter((bet) => tickerShows(bet, chosen));
    body.replaceChildren(
      ...(shown.length ? shown.map((bet) => tickerRow(bet, links)) : [h("tr", {}, h("td", { colspan: 6 }, "No bet matches."))]),
    );
    setText(document.getElementById("ticker-count"), `${shown.length} of the latest ${ticker.bets.length} bets`);
  };
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    render();
  });
  form?.addEventListener("input", () => {
    const query = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (String(value)) query.set(key, String(value));
    window.history.replaceState(null, "", query.size ? `?${query}` : window.location.pathname);
    render();
  });
  render();
  follow((frame) => {
    if (frame.type !== "desk.bet" || !ticker.add(frame)) return;
    const chosen = filter();
    if (!tickerShows(frame, chosen)) return;
    render();
    body.rows[0]?.classList.add("flash-change");
  });
}

/**
 * A page whose table the server renders (names from the catalogue, forms with their tokens): a
 * frame that ``wants`` says it changed, and the table is read again (``?fragment=table``), at
 * most every ``interval`` ms however often frames come. What a trader typed in the table and
 * where the focus was survive the redraw (by each field's name and its row's ``data-bet``).
 */
function fragmentPage(host: HTMLElement, wants: (frame: DeskFrame) => boolean, interval: number, redrawn?: () => void): void {
  let last = 0;
  let waiting = false;
  const refresh = async (): Promise<void> => {
    waiting = false;
    last = Date.now();
    const url = new URL(window.location.href);
    url.searchParams.set("fragment", "table");
    try {
      const response = await fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (!response.ok) return;
      const html = await response.text();
      const typed = new Map<string, string>();
      for (const field of host.querySelectorAll<HTMLInputElement>("input[name]:not([type=hidden])")) {
        if (field.value) typed.set(fieldKey(field), field.value);
      }
      const focused = document.activeElement instanceof HTMLElement && host.contains(document.activeElement) ? fieldKey(document.activeElement) : null;
      host.innerHTML = html;
      for (const field of host.querySelectorAll<HTMLInputElement>("input[name]:not([type=hidden])")) {
        const value = typed.get(fieldKey(field));
        if (value !== undefined) field.value = value;
      }
      if (focused !== null) {
        for (const node of host.querySelectorAll<HTMLElement>("input[name], button[name]")) {
          if (fieldKey(node) === focused) node.focus();
        }
      }
      redrawn?.();
    } catch {
      // Offline for a moment: the next frame reads it again.
    }
  };
  follow((frame) => {
    if (!wants(frame)) return;
    const delay = moversRefreshDelay(last, Date.now(), waiting, interval);
    if (delay === null) return;
    waiting = true;
    window.setTimeout(() => void refresh(), delay);
  });
}

/** A form field by its row and name (and value, for the buttons of one name). */
function fieldKey(node: Element): string {
  const row = node.closest<HTMLElement>("[data-bet]")?.dataset.bet ?? "";
  const name = node.getAttribute("name") ?? "";
  return node instanceof HTMLButtonElement ? `${row}:${name}:${node.value}` : `${row}:${name}`;
}

/** The referred bets: the table again when a bet is referred or decided, and each deadline's
 * seconds left, every second. */
function referralsPage(host: HTMLElement): void {
  const tick = () => {
    for (const due of host.querySelectorAll<HTMLTimeElement>("time.referral-due")) {
      const at = Date.parse(due.dateTime);
      if (Number.isNaN(at)) continue;
      due.textContent = `${new Date(at).toLocaleTimeString("en-GB")} (${referralLeft(at, Date.now())})`;
    }
  };
  tick();
  window.setInterval(tick, 1000);
  fragmentPage(host, (frame) => frame.type === "desk.bet" && REFERRAL_KINDS.has(frame.kind), REFERRALS_REFRESH_MS, tick);
}

function follow(onDesk: (frame: DeskFrame) => void): void {
  const scheme = window.location.protocol === "https:" ? "wss" : "ws";
  const client = new OddsClient({
    url: `${scheme}://${window.location.host}/ws/odds/`,
    markets: [],
    onMarket: () => undefined,
    onStatus: (status) => connection(status),
    onDesk: (frame) => {
      if (frame.type === "desk.followed") connection("live");
      else onDesk(frame);
    },
    onError: (code, message) => {
      const node = document.getElementById("desk-conn");
      if (node !== null && (code === "staff_only" || code === "second_factor_required")) node.textContent = message;
    },
  });
  window.addEventListener("offline", () => client.stop());
  window.addEventListener("online", () => client.start());
  client.start();
}

function boot(): void {
  setBookCurrency(document.body.dataset.bookCurrency ?? "");
  const risk = document.getElementById("risk");
  if (risk !== null) riskPage(risk);
  const ticker = document.getElementById("ticker");
  if (ticker instanceof HTMLTableElement) tickerPage(ticker);
  const movers = document.getElementById("movers");
  if (movers !== null) fragmentPage(movers, (frame) => frame.type === "desk.movers", MOVERS_REFRESH_MS);
  const referrals = document.getElementById("referrals");
  if (referrals !== null) referralsPage(referrals);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
else boot();
