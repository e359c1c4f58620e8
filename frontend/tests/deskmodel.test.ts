import { afterEach, describe, expect, it } from "vitest";
import {
  betAmount,
  type DeskBetFrame,
  type DeskMarketBook,
  formatPence,
  MOVERS_REFRESH_MS,
  moversRefreshDelay,
  RiskBook,
  setBookCurrency,
  referralLeft,
  Ticker,
  tickerShows,
} from "../src/deskmodel";

function book(market_id: number, event_id: number, worst: number, event_worst: number, bets = 1, staked = 1000): DeskMarketBook {
  return {
    market_id,
    event_id,
    sport: "football",
    event: `Event ${event_id}`,
    market: "Match result",
    in_play: false,
    staked,
    bets,
    outcomes: [],
    worst,
    worst_selection: null,
    event_worst,
  };
}

function bet(
  id: string,
  stake: string,
  user_id = 3,
  sport = "football",
  in_play = false,
  reducer_ts = 1,
  currency = "GBP",
  book_stake = stake,
  kind = "placed",
): DeskBetFrame {
  return {
    type: "desk.bet",
    v: 1,
    id,
    bet_id: 1,
    kind,
    user_id,
    currency,
    stake,
    potential_return: "1.00",
    book_stake,
    book_potential_return: "1.00",
    legs: [{ market_id: 1, selection_id: 1, event_id: 1, price: "2.00", sport, event: "A v B", market: "M", selection: "A", in_play }],
    reason: "",
    until: null,
    ts: 1,
    reducer_ts,
  };
}

afterEach(() => setBookCurrency("GBP"));

describe("formatPence", () => {
  it("writes the book's currency with a real minus sign and separators", () => {
    expect(formatPence(-123456)).toBe("−£1,234.56");
    expect(formatPence(5)).toBe("£0.05");
  });

  it("names the book's currency the page or frame gave, never a fixed pound", () => {
    setBookCurrency("EUR");
    expect(formatPence(-123456)).toBe("−€1,234.56");
    expect(formatPence(100, "USD")).toBe("$1.00");
  });

  it("ignores a currency that is not a code", () => {
    setBookCurrency("");
    expect(formatPence(100)).toBe("£1.00");
  });
});

describe("betAmount", () => {
  it("shows a bet in the book's currency as it is", () => {
    expect(betAmount("1234.50", "GBP", "1234.50")).toBe("£1,234.50");
  });

  it("shows a bet in another currency with its figure in the book's", () => {
    expect(betAmount("10.00", "EUR", "8.50")).toBe("€10.00 (£8.50)");
    expect(betAmount("2000", "USD", "1580")).toBe("$2,000.00 (£1,580.00)");
  });
});

describe("RiskBook", () => {
  it("orders events by largest exposure, and drops a market whose last bet closed", () => {
    const risk = new RiskBook();
    risk.apply(book(1, 10, -500, -500));
    risk.apply(book(2, 20, -9000, -9000));
    expect(risk.sorted("exposure").map((e) => e.event_id)).toEqual([20, 10]);
    risk.apply(book(2, 20, 0, 0, 0));
    expect(risk.sorted("exposure").map((e) => e.event_id)).toEqual([10]);
  });

  it("sorts by staked across an event's markets", () => {
    const risk = new RiskBook();
    risk.apply(book(1, 10, -500, -500, 1, 1000));
    risk.apply(book(3, 10, -100, -600, 1, 5000));
    risk.apply(book(2, 20, -9000, -9000, 1, 2000));
    expect(risk.sorted("staked").map((e) => [e.event_id, e.staked])).toEqual([
      [10, 6000],
      [20, 2000],
    ]);
  });
});

describe("ticker", () => {
  it("keeps each bet event once, newest first", () => {
    const ticker = new Ticker(2);
    expect(ticker.add(bet("1:placed", "1.00", 3, "football", false, 1))).toBe(true);
    expect(ticker.add(bet("1:placed", "1.00", 3, "football", false, 1))).toBe(false);
    ticker.add(bet("2:placed", "1.00", 3, "football", false, 3));
    ticker.add(bet("3:placed", "1.00", 3, "football", false, 2));
    expect(ticker.bets.map((b) => b.id)).toEqual(["2:placed", "3:placed"]);
  });

  it("filters by sport, stake over, customer and in play", () => {
    const none = { sport: "", stakeOver: "", customer: "", inPlay: false };
    expect(tickerShows(bet("a", "5.00"), none)).toBe(true);
    expect(tickerShows(bet("a", "5.00"), { ...none, sport: "tennis" })).toBe(false);
    expect(tickerShows(bet("a", "5.00"), { ...none, stakeOver: "5" })).toBe(false);
    expect(tickerShows(bet("a", "5.01"), { ...none, stakeOver: "5" })).toBe(true);
    expect(tickerShows(bet("a", "5.00", 3), { ...none, customer: "4" })).toBe(false);
    expect(tickerShows(bet("a", "5.00", 3, "football", true), { ...none, inPlay: true })).toBe(true);
    expect(tickerShows(bet("a", "5.00"), { ...none, inPlay: true })).toBe(false);
  });

  it("filters by what happened to the bet", () => {
    const rejected = { sport: "", stakeOver: "", customer: "", inPlay: false, kind: "rejected" };
    expect(tickerShows(bet("a", "5.00", 3, "football", false, 1, "GBP", "5.00", "rejected"), rejected)).toBe(true);
    expect(tickerShows(bet("a", "5.00", 3, "football", false, 1, "GBP", "5.00", "placed"), rejected)).toBe(false);
    expect(tickerShows(bet("a", "5.00", 3, "football", false, 1, "GBP", "5.00", "pending"), { ...rejected, kind: "" })).toBe(true);
  });

  it("compares the stake over in the book's currency", () => {
    const over = { sport: "", stakeOver: "9", customer: "", inPlay: false };
    expect(tickerShows(bet("a", "10.00", 3, "football", false, 1, "EUR", "8.50"), over)).toBe(false);
    expect(tickerShows(bet("a", "10.00", 3, "football", false, 1, "USD", "9.01"), over)).toBe(true);
    expect(tickerShows(bet("a", "10.00", 3, "football", false, 1, "EUR", "8.50"), { ...over, stakeOver: "£9" })).toBe(true);
  });
});

describe("referralLeft", () => {
  it("counts the whole seconds left, then says now", () => {
    expect(referralLeft(60_000, 18_200)).toBe("in 42 s");
    expect(referralLeft(60_000, 59_999)).toBe("in 1 s");
    expect(referralLeft(60_000, 60_000)).toBe("now");
    expect(referralLeft(60_000, 75_000)).toBe("now");
  });
});

describe("moversRefreshDelay", () => {
  it("waits out another interval when given one", () => {
    expect(moversRefreshDelay(10_000, 10_500, false, 1000)).toBe(500);
  });

  it("reads the table at once when it was last read long enough ago", () => {
    expect(moversRefreshDelay(0, 10_000, false)).toBe(0);
  });

  it("waits out the rest of the interval after a recent read", () => {
    expect(moversRefreshDelay(10_000, 10_500, false)).toBe(MOVERS_REFRESH_MS - 500);
  });

  it("adds nothing while a read is already waiting", () => {
    expect(moversRefreshDelay(10_000, 10_500, true)).toBeNull();
  });
});
