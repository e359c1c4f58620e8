import { describe, expect, it } from "vitest";
import { settledText } from "../src/notices";
import type { BetSettled } from "../src/protocol";

function settled(status: BetSettled["bet"]["status"], payout: string): BetSettled {
  return {
    type: "bet.settled",
    v: 1,
    bet: { id: 7, status, title: "Home 1 v Away 1", stake: "5.00", payout },
    wallet: { currency: "GBP", balance: "105.00" },
  };
}

describe("notices of a punter's closed bets", () => {
  it("says what a won bet paid", () => {
    expect(settledText(settled("won", "12.50"))).toBe("Your bet on Home 1 v Away 1 won £12.50");
  });

  it("says a lost bet lost, with no amount", () => {
    expect(settledText(settled("lost", "0.00"))).toBe("Your bet on Home 1 v Away 1 lost");
  });

  it("says a void bet's stake is back in the balance", () => {
    expect(settledText(settled("void", "5.00"))).toBe(
      "Your bet on Home 1 v Away 1 was void: £5.00 is back in your balance",
    );
  });

  it("says what a cashed-out bet was cashed out for", () => {
    expect(settledText(settled("cashed_out", "7.20"))).toBe("Your bet on Home 1 v Away 1 was cashed out for £7.20");
  });
});
