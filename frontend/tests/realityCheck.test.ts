import { describe, expect, it } from "vitest";
import type { PlaySessionOut } from "../src/contract/api";
import { netText, nextWakeMs, playedText } from "../src/realityCheck";

function session(overrides: Partial<PlaySessionOut>): PlaySessionOut {
  return {
    started_at: 0,
    played_s: 0,
    time_limit_s: null,
    ends_at: null,
    time_left_s: null,
    reality_check_s: null,
    check_due_at: null,
    check_due_in_s: null,
    check_pending: false,
    currency: "GBP",
    staked: "0.00",
    returned: "0.00",
    net_result: "0.00",
    ...overrides,
  };
}

describe("reality check", () => {
  it("says the time played in hours and minutes", () => {
    expect(playedText(0)).toBe("0 minutes");
    expect(playedText(59)).toBe("0 minutes");
    expect(playedText(60)).toBe("1 minute");
    expect(playedText(3600)).toBe("1 hour");
    expect(playedText(3600 + 5 * 60)).toBe("1 hour 5 minutes");
    expect(playedText(2 * 3600 + 30 * 60)).toBe("2 hours 30 minutes");
  });

  it("signs the net result in the wallet's currency", () => {
    expect(netText("12.50", "GBP")).toBe("+£12.50");
    expect(netText("-10.00", "GBP")).toBe("−£10.00");
    expect(netText("0.00", "GBP")).toBe("£0.00");
    expect(netText("-3.00", "EUR")).toBe("−€3.00");
    expect(netText("2.50", "CHF")).toBe("+CHF 2.50");
  });

  it("wakes at the sooner of the next check and the time limit, and not at all without either", () => {
    expect(nextWakeMs(session({}))).toBeNull();
    expect(nextWakeMs(session({ check_due_in_s: 900 }))).toBe(900_500);
    expect(nextWakeMs(session({ check_due_in_s: 900, time_left_s: 60 }))).toBe(60_500);
  });
});
