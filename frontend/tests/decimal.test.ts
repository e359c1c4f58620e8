import { describe, expect, it } from "vitest";
import {
  combinedOdds,
  compareDecimal,
  currencySymbol,
  div,
  dec,
  format,
  formatMoney,
  parseDec,
  parseStake,
  potentialReturn,
  quantize,
  setPageCurrency,
  sumMoney,
} from "../src/decimal";
import rulesJson from "./vectors/python_rules.json?raw";

describe("fixed-point decimals", () => {
  it("parses decimal strings exactly and refuses anything else", () => {
    expect(parseDec("2.50")).toEqual({ coef: 250n, places: 2 });
    expect(parseDec("10")).toEqual({ coef: 10n, places: 0 });
    expect(parseDec("-0.5")).toEqual({ coef: -5n, places: 1 });
    for (const bad of ["", "1e3", "NaN", "2,50", "0x10", "1.2.3", "Infinity"]) expect(parseDec(bad)).toBeNull();
  });

  it("rounds half up away from zero and down towards zero, like Python's decimal", () => {
    expect(format(quantize(dec("2.345"), 2, "half_up"))).toBe("2.35");
    expect(format(quantize(dec("2.344"), 2, "half_up"))).toBe("2.34");
    expect(format(quantize(dec("-2.345"), 2, "half_up"))).toBe("-2.35");
    expect(format(quantize(dec("2.349"), 2, "down"))).toBe("2.34");
    expect(format(quantize(dec("-2.349"), 2, "down"))).toBe("-2.34");
    expect(format(quantize(dec("7"), 2, "down"))).toBe("7.00");
  });

  it("divides to a chosen precision", () => {
    expect(format(div(dec("100"), dec("0.91"), 0, "half_up"))).toBe("110");
    expect(format(div(dec("1"), dec("3"), 4, "down"))).toBe("0.3333");
  });

  it("never goes through binary floats: 0.1 + 0.2 is 0.30", () => {
    expect(sumMoney(["0.10", "0.20"])).toBe("0.30");
    expect(potentialReturn("0.10", ["3.00"])).toBe("0.30");
    expect(combinedOdds(["1.10", "1.10", "1.10"])).toBe("1.33");
  });

  it("compares decimals of different precision", () => {
    expect(compareDecimal("2.5", "2.50")).toBe(0);
    expect(compareDecimal("2.49", "2.5")).toBe(-1);
    expect(compareDecimal("10", "9.99")).toBe(1);
  });
});

describe("slip maths agree with reducers/betting.py", () => {
  const rules = JSON.parse(rulesJson) as {
    slips: { prices: string[]; stake: string; combined_odds: string; potential_return: string }[];
  };

  it("has the vectors", () => {
    expect(rules.slips.length).toBeGreaterThanOrEqual(400);
  });

  it("computes the combined odds (product, half up to two places) of every vector", () => {
    const wrong = rules.slips.filter((s) => combinedOdds(s.prices) !== s.combined_odds);
    expect(wrong).toEqual([]);
  });

  it("computes the potential return (rounded down to the penny) of every vector", () => {
    const wrong = rules.slips.filter((s) => potentialReturn(s.stake, s.prices) !== s.potential_return);
    expect(wrong).toEqual([]);
  });

  it("rounds the return down from the exact product, not from the rounded odds", () => {
    // 2.15 × 1.33 = 2.8595: odds show 2.86, but £10 returns £28.59, never £28.60.
    expect(combinedOdds(["2.15", "1.33"])).toBe("2.86");
    expect(potentialReturn("10.00", ["2.15", "1.33"])).toBe("28.59");
  });
});

const LIMITS = { minStake: "0.10", maxStake: "10000.00" };

describe("stakes as typed", () => {
  it("normalises to pence", () => {
    expect(parseStake("5", LIMITS)).toEqual({ ok: true, value: "5.00" });
    expect(parseStake(" 2.5 ", LIMITS)).toEqual({ ok: true, value: "2.50" });
    expect(parseStake("£10", LIMITS)).toEqual({ ok: true, value: "10.00" });
  });

  it("explains what is wrong", () => {
    expect(parseStake("", LIMITS)).toMatchObject({ ok: false, message: "Enter a stake" });
    expect(parseStake("abc", LIMITS)).toMatchObject({ ok: false });
    expect(parseStake("1.234", LIMITS)).toMatchObject({ ok: false, message: "Use at most two decimal places (pence)" });
    expect(parseStake("0.05", LIMITS)).toMatchObject({ ok: false, message: "The minimum stake is £0.10" });
    expect(parseStake("10000.01", LIMITS)).toMatchObject({ ok: false, message: "The maximum stake is £10,000.00" });
    expect(parseStake("-5", LIMITS)).toMatchObject({ ok: false });
    expect(parseStake("0", LIMITS)).toMatchObject({ ok: false, message: "Enter a stake above zero" });
  });

  it("formats money for people", () => {
    expect(formatMoney("1234.5")).toBe("£1,234.50");
    expect(formatMoney("0")).toBe("£0.00");
    expect(formatMoney("-10.00")).toBe("−£10.00");
  });

  it("shows money in the wallet's currency, the page's by default", () => {
    expect(formatMoney("20", "EUR")).toBe("€20.00");
    expect(formatMoney("-1234.5", "USD")).toBe("−$1,234.50");
    expect(formatMoney("3", "CHF")).toBe("CHF 3.00");
    try {
      setPageCurrency("EUR");
      expect(formatMoney("5")).toBe("€5.00");
      expect(currencySymbol()).toBe("€");
      expect(parseStake("0.05", LIMITS)).toMatchObject({ ok: false, message: "The minimum stake is €0.10" });
      setPageCurrency("not a code");
      expect(formatMoney("5")).toBe("€5.00");
    } finally {
      setPageCurrency("GBP");
    }
  });

  it("takes a stake typed after any wallet currency's symbol", () => {
    for (const typed of ["£10", "€10", "$10", " €10 "]) expect(parseStake(typed, LIMITS)).toEqual({ ok: true, value: "10.00" });
    expect(parseStake("¥10", LIMITS)).toMatchObject({ ok: false });
  });
});
