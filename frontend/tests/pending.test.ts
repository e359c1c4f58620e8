import { describe, expect, it } from "vitest";
import type { Bet } from "../src/api";
import { GRACE_MS, HeldBets, withDecision } from "../src/pending";

function bet(overrides: Partial<Bet> = {}): Bet {
  return {
    id: 7,
    idempotency_key: "k",
    kind: "single",
    status: "pending",
    price_policy: "none",
    stake: "10.00",
    odds: "2.10",
    odds_display: "2.10",
    potential_return: "21.00",
    payout: "0.00",
    placed_at: 1_000_000,
    accept_at: 1_007_000,
    settled_at: null,
    legs: [],
    ...overrides,
  };
}

describe("held bets", () => {
  it("count down the delay the server gave, from when the answer arrived", () => {
    let now = 50_000; // the client's clock, far from the server's
    const held = new HeldBets(() => now);
    held.hold(bet());
    expect(held.secondsLeft(7)).toBe(7);
    now += 2_500;
    expect(held.secondsLeft(7)).toBe(5);
    now += 10_000;
    expect(held.secondsLeft(7)).toBe(0);
  });

  it("ignore bets that are not held", () => {
    const held = new HeldBets(() => 0);
    held.hold(bet({ status: "accepted", accept_at: undefined }));
    expect(held.size).toBe(0);
    expect(held.secondsLeft(7)).toBeNull();
  });

  it("name a bet overdue only after the grace period, and forget a decided one", () => {
    let now = 0;
    const held = new HeldBets(() => now);
    held.hold(bet());
    now = 7_000 + GRACE_MS;
    expect(held.overdue()).toEqual([]);
    now += 1;
    expect(held.overdue()).toEqual([7]);
    held.decided(7);
    expect(held.overdue()).toEqual([]);
    expect(held.size).toBe(0);
  });

  it("apply a decision: a rejection carries its reason, an acceptance none", () => {
    const rejected = withDecision(bet(), {
      id: 7,
      status: "rejected",
      reject: { code: "market_suspended", message: "the market was suspended during the in-play delay" },
    });
    expect([rejected.status, rejected.reject?.code]).toEqual(["rejected", "market_suspended"]);
    const accepted = withDecision(bet(), { id: 7, status: "accepted", reject: null });
    expect([accepted.status, accepted.reject]).toEqual(["accepted", undefined]);
  });
});
