import { describe, expect, it } from "vitest";
import { parseAmount } from "../src/walletPage";

describe("parseAmount", () => {
  it("takes pounds and pence as the API's decimal string", () => {
    expect(parseAmount("20")).toEqual({ amount: "20" });
    expect(parseAmount(" £1,250.5 ")).toEqual({ amount: "1250.5" });
    expect(parseAmount("0.01")).toEqual({ amount: "0.01" });
  });

  it("takes an amount typed with the symbol of any wallet's currency", () => {
    expect(parseAmount("€20")).toEqual({ amount: "20" });
    expect(parseAmount("$1,000")).toEqual({ amount: "1000" });
  });

  it("says in words what is wrong", () => {
    expect(parseAmount("")).toEqual({ error: "Enter an amount." });
    expect(parseAmount("ten")).toEqual({ error: "Enter the amount as a number, such as 20.00." });
    expect(parseAmount("-5")).toEqual({ error: "Enter the amount as a number, such as 20.00." });
    expect(parseAmount("1.234")).toEqual({ error: "Enter the amount with at most two decimal places." });
    expect(parseAmount("0.00")).toEqual({ error: "Enter an amount above zero." });
  });
});
