// The trading desk's staff frames (docs/protocol.md, "Trading desk") and the pure logic of the
// risk view and the ticker: ordering, filtering, formatting pence. No DOM here (tests/desk.test.ts).

// The frames' types are generated from reducers/frames.py (src/contract/frames.ts).
import type {
  DeskBetFrame,
  DeskFollowedFrame,
  DeskLiabilityFrame,
  DeskMarketBook,
  DeskMoversFrame,
} from "./contract/frames";
import { compareDecimal, currencySymbol, formatMoney } from "./decimal";

export type {
  DeskBetFrame,
  DeskBetLeg,
  DeskFollowedFrame,
  DeskLiabilityFrame,
  DeskMarketBook,
  DeskMoversFrame,
  DeskOutcome,
} from "./contract/frames";

export type DeskFrame = DeskBetFrame | DeskLiabilityFrame | DeskMoversFrame | DeskFollowedFrame;

/** How often, at most, the movers page reads its table afresh however often windows move (ms). */
export const MOVERS_REFRESH_MS = 2000;

/**
 * When the movers page should read its table next, given when it last did (``last``, ms), now,
 * and whether a read is already waiting: null when the waiting one covers this frame too.
 */
export function moversRefreshDelay(last: number, now: number, waiting: boolean, interval = MOVERS_REFRESH_MS): number | null {
  if (waiting) return null;
  return Math.max(0, last + interval - now);
}

/** The referrals page reads its table at most this often (a bet referred or decided). */
export const REFERRALS_REFRESH_MS = 1000;

/** The ticker kinds that change the referrals queue. */
export const REFERRAL_KINDS: ReadonlySet<string> = new Set(["referred", "offered", "placed", "rejected"]);
/** The ticker kinds whose ``reason`` is shown as it is: why a bet was refused, a trader's offer,
 * what a corrected result did to a bet (docs/resettlement.md). */
export const TICKER_REASON_KINDS: ReadonlySet<string> = new Set(["rejected", "offered", "resettled", "reopened"]);

/** What a referred bet's deadline says, seconds left by the client's clock: "in 42 s", or "now". */
export function referralLeft(dueMs: number, nowMs: number): string {
  const left = Math.ceil((dueMs - nowMs) / 1000);
  return left > 0 ? `in ${left} s` : "now";
}

// The book's currency, which every figure of the desk's books is in: the page names it
// (``data-book-currency`` on its body) and each ``desk.liability`` frame carries it.
let bookCurrency = "GBP";

/** Show the books' figures in ``currency`` from now on (the book's currency). */
export function setBookCurrency(currency: string): void {
  if (/^[A-Z]{3}$/.test(currency)) bookCurrency = currency;
}

/** Integer pence of the book's currency with a sign and thousands separators: -123456 → "−£1,234.56". */
export function formatPence(pence: number, currency: string = bookCurrency): string {
  const abs = Math.abs(pence);
  const whole = Math.floor(abs / 100).toLocaleString("en-GB");
  const text = `${currencySymbol(currency)}${whole}.${String(abs % 100).padStart(2, "0")}`;
  return pence < 0 ? `−${text}` : text;
}

/** A bet's amount in its own currency and, when that is not the book's, in the book's too:
 * "€10.00 (£8.50)"; "£10.00". */
export function betAmount(amount: string, currency: string, inBook: string): string {
  const own = formatMoney(amount, currency);
  return currency === bookCurrency ? own : `${own} (${formatMoney(inBook, bookCurrency)})`;
}

/** An event of the risk view: its markets' books and its worst case. */
export interface RiskEvent {
  event_id: number;
  sport: string;
  event: string;
  in_play: boolean;
  worst: number;
  staked: number;
  markets: Map<number, DeskMarketBook>;
}

export type RiskSort = "exposure" | "staked" | "name";

/** The risk view's state: events by id, built from the page's first image and every
 * ``desk.liability`` frame after it (each carries a market's whole figures). */
export class RiskBook {
  readonly events = new Map<number, RiskEvent>();

  apply(book: DeskMarketBook): void {
    let event = this.events.get(book.event_id);
    if (event === undefined) {
      event = { event_id: book.event_id, sport: book.sport, event: book.event, in_play: book.in_play, worst: 0, staked: 0, markets: new Map() };
      this.events.set(book.event_id, event);
    }
    if (book.bets > 0) event.markets.set(book.market_id, book);
    else event.markets.delete(book.market_id);
    if (event.markets.size === 0) {
      this.events.delete(book.event_id);
      return;
    }
    event.worst = book.event_worst;
    event.in_play = book.in_play || event.in_play;
    if (book.event) event.event = book.event;
    if (book.sport) event.sport = book.sport;
    event.staked = [...event.markets.values()].reduce((sum, m) => sum + m.staked, 0);
  }

  /** Events in the chosen order: largest exposure (most negative worst case) first, most staked
   * first, or by name. */
  sorted(by: RiskSort): RiskEvent[] {
    const events = [...this.events.values()];
    const byName = (a: RiskEvent, b: RiskEvent) => a.event.localeCompare(b.event) || a.event_id - b.event_id;
    if (by === "name") return events.sort(byName);
    if (by === "staked") return events.sort((a, b) => b.staked - a.staked || byName(a, b));
    return events.sort((a, b) => a.worst - b.worst || byName(a, b));
  }
}

export interface TickerFilter {
  sport: string;
  stakeOver: string;
  customer: string;
  inPlay: boolean;
  /** What happened to the bet (a ``desk.bet`` frame's ``kind``); empty for every kind. */
  kind?: string;
}

/** Whether a ticker bet passes the filters (empty filters pass everything); the stake is
 * compared in the book's currency. */
export function tickerShows(bet: DeskBetFrame, filter: TickerFilter): boolean {
  if (filter.sport && !bet.legs.some((leg) => leg.sport === filter.sport)) return false;
  const over = filter.stakeOver.trim();
  if (/^\d+(\.\d+)?$/.test(over) && compareDecimal(bet.book_stake, over) <= 0) return false;
  if (filter.customer && String(bet.user_id) !== filter.customer.trim()) return false;
  if (filter.inPlay && !bet.legs.some((leg) => leg.in_play)) return false;
  if (filter.kind && bet.kind !== filter.kind) return false;
  return true;
}

/** The ticker's rows, newest first, each bet event once, at most ``limit``. */
export class Ticker {
  private readonly seen = new Set<string>();
  readonly bets: DeskBetFrame[] = [];

  constructor(private readonly limit = 200) {}

  /** Add a bet event (a duplicate is ignored); true when it was new. */
  add(bet: DeskBetFrame): boolean {
    if (this.seen.has(bet.id)) return false;
    this.seen.add(bet.id);
    this.bets.unshift(bet);
    this.bets.sort((a, b) => b.reducer_ts - a.reducer_ts);
    while (this.bets.length > this.limit) {
      const gone = this.bets.pop();
      if (gone) this.seen.delete(gone.id);
    }
    return true;
  }
}
