import { describe, expect, it } from "vitest";
import { storeCashOutPolicy, storedCashOutPolicy } from "../src/cashout";

function memory(): { getItem(key: string): string | null; setItem(key: string, value: string): void } {
  const items = new Map<string, string>();
  return { getItem: (key) => items.get(key) ?? null, setItem: (key, value) => void items.set(key, value) };
}

describe("cash-out setting", () => {
  it("is the book's default, better, when nothing is stored", () => {
    expect(storedCashOutPolicy(memory())).toBe("better");
    expect(storedCashOutPolicy(null)).toBe("better");
  });

  it("remembers the punter's choice", () => {
    const store = memory();
    storeCashOutPolicy(store, "exact");
    expect(storedCashOutPolicy(store)).toBe("exact");
  });

  it("ignores a stored value the book does not know", () => {
    const store = memory();
    store.setItem("sportsbook.cashOutAccept", "whatever");
    expect(storedCashOutPolicy(store)).toBe("better");
  });
});
