import { describe, expect, it } from "vitest";
import template from "../../odds/templates/odds/my_bets.html?raw";
import betting from "../../reducers/betting.py?raw";
import { CASH_OUT_POLICIES, storeCashOutPolicy, storedCashOutPolicy } from "../src/cashout";

/** The tolerances the book takes and its default, from reducers/betting.py. */
function bookTolerances(): { names: string[]; fallback: string } {
  const names = /^CASH_OUT_POLICIES = \((.*)\)$/m.exec(betting)?.[1];
  const fallback = /^CASH_OUT_POLICY_DEFAULT = "(\w+)"$/m.exec(betting)?.[1];
  if (names === undefined || fallback === undefined) throw new Error("no cash-out tolerances in reducers/betting.py");
  return { names: [...names.matchAll(/"(\w+)"/g)].map((m) => m[1] ?? ""), fallback };
}

/** The option values of the My bets page's tolerance select, in order. */
function pageOptions(): string[] {
  const select = /<select id="cash-out-accept"[^>]*>([\s\S]*?)<\/select>/.exec(template)?.[1];
  if (select === undefined) throw new Error("no cash-out-accept select in my_bets.html");
  return [...select.matchAll(/<option value="(\w+)"/g)].map((m) => m[1] ?? "");
}

function memory(): { getItem(key: string): string | null; setItem(key: string, value: string): void } {
  const items = new Map<string, string>();
  return { getItem: (key) => items.get(key) ?? null, setItem: (key, value) => void items.set(key, value) };
}

describe("cash-out setting", () => {
  it("offers the tolerances the book takes, in the script and on the page, its default first", () => {
    const book = bookTolerances();
    expect([...CASH_OUT_POLICIES].sort()).toEqual([...book.names].sort());
    expect(pageOptions()).toEqual([...CASH_OUT_POLICIES]);
    expect([CASH_OUT_POLICIES[0], storedCashOutPolicy(null)]).toEqual([book.fallback, book.fallback]);
  });

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
