import { describe, expect, it } from "vitest";
import { BetSlip, type NewLeg, type SlipLimits } from "../src/slip";

function leg(selectionId: number, price: string, eventId = selectionId, marketId = selectionId * 10): NewLeg {
  return {
    selectionId,
    marketId,
    eventId,
    selection: `Selection ${selectionId}`,
    market: "Match result",
    event: `Event ${eventId}`,
    price,
  };
}

const LIMITS: SlipLimits = { minStake: "0.10", maxStake: "10000.00", maxReturn: "250000.00", maxLegs: 20 };

let keys = 0;
const newKey = () => `key-${++keys}`;

describe("adding and removing selections", () => {
  it("toggles a selection in and out", () => {
    const slip = new BetSlip(LIMITS);
    expect(slip.toggle(leg(1, "2.10"))).toBe(true);
    expect(slip.has(1)).toBe(true);
    expect(slip.toggle(leg(1, "2.10"))).toBe(false);
    expect(slip.legs).toEqual([]);
  });

  it("builds an accumulator from a second selection of another event", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    expect(slip.mode).toBe("singles");
    slip.toggle(leg(2, "1.85"));
    expect(slip.mode).toBe("accumulator");
    expect(slip.combinedOdds()).toBe("3.89"); // 2.10 × 1.85 = 3.885, half up
    slip.accaStake = "10";
    expect(slip.accumulatorReturn()).toBe("38.85");
  });

  it("keeps singles when two selections share an event, and says why there is no accumulator", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10", 7));
    slip.toggle(leg(2, "3.40", 7));
    expect(slip.mode).toBe("singles");
    expect(slip.accumulatorAllowed()).toBe(false);
    slip.setMode("accumulator");
    expect(slip.mode).toBe("singles");
  });

  it("falls back to singles when a leg is removed from a double", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.toggle(leg(2, "1.85"));
    slip.remove(2);
    expect(slip.mode).toBe("singles");
  });
});

describe("returns", () => {
  it("sums singles' stakes and returns with exact decimals", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.toggle(leg(2, "1.91", 2));
    slip.setMode("singles");
    slip.legs[0]!.stake = "0.10";
    slip.legs[1]!.stake = "0.20";
    expect(slip.totalStake()).toBe("0.30");
    expect(slip.singleReturn(slip.legs[0]!)).toBe("0.21");
    expect(slip.singleReturn(slip.legs[1]!)).toBe("0.38"); // 0.382 rounded down
    expect(slip.totalReturn()).toBe("0.59");
  });

  it("shows no return for a stake that is not one", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.legs[0]!.stake = "1.234";
    expect(slip.singleReturn(slip.legs[0]!)).toBeNull();
    expect(slip.blockers().map((b) => b.code)).toEqual(["stake"]);
  });
});

describe("price changes and the accept policy", () => {
  function single(policy: "none" | "any" | "better"): BetSlip {
    const slip = new BetSlip(LIMITS);
    slip.policy = policy;
    slip.toggle(leg(1, "2.50"));
    slip.legs[0]!.stake = "5";
    return slip;
  }

  it("asks the punter to accept any change under 'none'", () => {
    const slip = single("none");
    expect(slip.livePrice(1, "2.40", false)).toBe("down");
    expect(slip.changedLegs()).toHaveLength(1);
    expect(slip.blockers().map((b) => b.code)).toEqual(["price_changed"]);
    slip.acceptChanges();
    expect(slip.blockers()).toEqual([]);
    expect(slip.requests(newKey)[0]!.body.selections).toEqual([{ selection_id: 1, price: "2.40" }]);
  });

  it("takes a higher price at once under 'better' but asks about a lower one", () => {
    const slip = single("better");
    expect(slip.livePrice(1, "2.75", false)).toBe("up");
    expect(slip.changedLegs()).toEqual([]);
    expect(slip.legs[0]!.seen).toBe("2.75");
    slip.livePrice(1, "2.60", false);
    expect(slip.changedLegs()).toHaveLength(1);
    expect(slip.legs[0]!.seen).toBe("2.75");
  });

  it("takes every change at once under 'any'", () => {
    const slip = single("any");
    slip.livePrice(1, "2.20", false);
    expect(slip.changedLegs()).toEqual([]);
    expect(slip.requests(newKey)[0]!.body).toMatchObject({ price_policy: "any", selections: [{ price: "2.20" }] });
  });

  it("applies a newly chosen policy to the changes already showing", () => {
    const slip = single("none");
    slip.livePrice(1, "2.20", false);
    slip.setPolicy("any");
    expect(slip.changedLegs()).toEqual([]);
  });

  it("shows the server's new price after a price_changed refusal", () => {
    const slip = single("none");
    slip.priceRejected([{ selection_id: 1, price_seen: "2.50", price: "2.30" }]);
    expect(slip.legs[0]).toMatchObject({ price: "2.30", seen: "2.50" });
    expect(slip.blockers().map((b) => b.code)).toEqual(["price_changed"]);
  });

  it("blocks placement while a leg is suspended", () => {
    const slip = single("any");
    slip.livePrice(1, null, true);
    expect(slip.blockers().map((b) => b.code)).toEqual(["suspended"]);
    slip.livePrice(1, "2.50", false);
    expect(slip.blockers()).toEqual([]);
  });
});

describe("placement requests", () => {
  it("sends one accumulator with the prices seen and a fresh idempotency key", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.toggle(leg(2, "1.85"));
    slip.accaStake = "2.5";
    const [first] = slip.requests(newKey);
    const [second] = slip.requests(newKey);
    expect(first!.body).toMatchObject({
      v: 1,
      stake: "2.50",
      price_policy: "none",
      selections: [
        { selection_id: 1, price: "2.10" },
        { selection_id: 2, price: "1.85" },
      ],
    });
    expect(first!.body.idempotency_key).not.toBe(second!.body.idempotency_key);
  });

  it("sends one single per staked leg", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10", 1));
    slip.toggle(leg(2, "1.85", 1));
    slip.legs[1]!.stake = "3";
    const requests = slip.requests(newKey);
    expect(requests.map((r) => r.legs)).toEqual([[2]]);
    expect(requests[0]!.body.stake).toBe("3.00");
  });
});

describe("persistence", () => {
  it("survives a round trip through JSON and rejects tampered legs", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.toggle(leg(2, "1.85"));
    slip.accaStake = "4";
    slip.policy = "better";
    const back = BetSlip.fromJSON(JSON.parse(JSON.stringify(slip)), LIMITS);
    expect(back.legs).toEqual(slip.legs);
    expect(back.mode).toBe("accumulator");
    expect(back.policy).toBe("better");
    const bad = JSON.parse(JSON.stringify(slip)) as { legs: Record<string, unknown>[] };
    bad.legs[0]!.price = "<img src=x>";
    expect(BetSlip.fromJSON(bad, LIMITS).legs).toHaveLength(1);
    expect(BetSlip.fromJSON("nonsense", LIMITS).legs).toEqual([]);
  });
});

describe("the reason next to each stake", () => {
  it.each([
    ["abc", "Enter an amount such as 5.00"],
    ["0", "Enter a stake above zero"],
    ["0.05", "The minimum stake is £0.10"],
    ["10000.01", "The maximum stake is £10,000.00"],
    ["1.234", "Use at most two decimal places (pence)"],
  ])("explains %s", (typed, reason) => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.leg(1)!.stake = typed;
    expect(slip.stakeError(1)).toBe(reason);
    expect(slip.blockers()).toContainEqual({ code: "stake", message: reason, selectionId: 1 });
  });

  it("says nothing until a stake is typed, and nothing for a valid one", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    expect(slip.stakeError(1)).toBeNull();
    slip.leg(1)!.stake = "5";
    expect(slip.stakeError(1)).toBeNull();
  });

  it("takes the limits it was given, not its own", () => {
    const slip = new BetSlip({ ...LIMITS, minStake: "1.00", maxStake: "50.00" });
    slip.toggle(leg(1, "2.10"));
    slip.leg(1)!.stake = "0.50";
    expect(slip.stakeError(1)).toBe("The minimum stake is £1.00");
    slip.leg(1)!.stake = "60";
    expect(slip.stakeError(1)).toBe("The maximum stake is £50.00");
  });

  it("explains the accumulator stake too", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.toggle(leg(2, "3.00"));
    slip.accaStake = "0";
    expect(slip.stakeError(null)).toBe("Enter a stake above zero");
  });

  it("keeps an invalid stake among the blockers while prices have changed", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.leg(1)!.stake = "0.01";
    slip.livePrice(1, "2.30", false);
    const codes = slip.blockers().map((b) => b.code);
    expect(codes).toContain("price_changed");
    expect(codes).toContain("stake");
  });
});

describe("the stream going down", () => {
  it("blocks placing with a reason, and recovery lifts it", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.leg(1)!.stake = "5";
    expect(slip.blockers()).toEqual([]);
    slip.streamDown = true;
    expect(slip.blockers()[0]).toMatchObject({ code: "offline" });
    slip.streamDown = false;
    expect(slip.blockers()).toEqual([]);
  });
});

describe("keeping the selections after placing", () => {
  it("empties placed singles by default", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10", 1));
    slip.toggle(leg(2, "3.00", 1));
    slip.placed([1]);
    expect(slip.legs.map((l) => l.selectionId)).toEqual([2]);
  });

  it("keeps the selections and clears only their stakes when asked", () => {
    const slip = new BetSlip(LIMITS);
    slip.keepSelections = true;
    slip.toggle(leg(1, "2.10"));
    slip.toggle(leg(2, "3.00"));
    slip.accaStake = "5";
    slip.placed([1, 2]);
    expect(slip.legs).toHaveLength(2);
    expect(slip.accaStake).toBe("");
    expect(BetSlip.fromJSON(JSON.parse(JSON.stringify(slip)), LIMITS).keepSelections).toBe(true);
  });
});

describe("the slip knows the match", () => {
  it("takes out the selections of a finished event and says which", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10", 7));
    slip.toggle(leg(2, "1.85", 8));
    const gone = slip.dropFinished({ eventId: 7 });
    expect(gone.map((l) => l.selectionId)).toEqual([1]);
    expect(slip.legs.map((l) => l.selectionId)).toEqual([2]);
    expect(slip.mode).toBe("singles");
  });

  it("takes out the selections of a resulted market", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10", 7, 70));
    expect(slip.dropFinished({ marketId: 70 }).length).toBe(1);
    expect(slip.legs).toEqual([]);
  });

  it("puts back a refused bet's selections with the new price to accept", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.legs[0]!.stake = "5";
    const placed = slip.legs.map((l) => ({ ...l }));
    slip.placed([1]);
    expect(slip.legs).toEqual([]);
    const back = slip.restore(placed, "singles", "", new Map([[1, "1.90"]]));
    expect(back.length).toBe(1);
    expect(slip.legs[0]).toMatchObject({ selectionId: 1, price: "1.90", seen: "2.10", stake: "5" });
    expect(slip.changedLegs().length).toBe(1);
    expect(slip.blockers().map((b) => b.code)).toContain("price_changed");
    slip.acceptChanges();
    expect(slip.blockers()).toEqual([]);
  });

  it("puts back a refused accumulator as an accumulator with its stake", () => {
    const slip = new BetSlip(LIMITS);
    slip.toggle(leg(1, "2.10"));
    slip.toggle(leg(2, "1.85"));
    slip.accaStake = "4";
    const placed = slip.legs.map((l) => ({ ...l }));
    slip.placed([1, 2]);
    slip.restore(placed, "accumulator", "4");
    expect([slip.mode, slip.accaStake, slip.legs.length]).toEqual(["accumulator", "4", 2]);
  });
});
