import { describe, expect, it } from "vitest";
import pythonTests from "../../tests/unit/test_formatting.py?raw";
import {
  decimalText,
  decimalToAmerican,
  decimalToFractional,
  formatOdds,
  type KeyValueStore,
  storedOddsFormat,
  storeOddsFormat,
} from "../src/odds";
import rulesJson from "./vectors/python_rules.json?raw";

/** The ("price", "expected") vectors of the parametrized Python test named ``test``. */
function pythonVectors(test: string): [string, string][] {
  const blocks = pythonTests.split("@pytest.mark.parametrize(");
  const block = blocks.find((b) => new RegExp(`\\)\\s*def ${test}\\(`).test(b));
  if (block === undefined) throw new Error(`no parametrized test ${test} in tests/unit/test_formatting.py`);
  const pairs = [...block.matchAll(/\(\s*"([^"]+)",\s*"([^"]+)"\s*\)/g)].map((m) => [m[1], m[2]] as [string, string]);
  return pairs.filter(([price]) => price !== "price");
}

const fractional = pythonVectors("test_decimal_prices_show_as_the_nearest_fraction_on_the_ladder");
const american = pythonVectors("test_decimal_prices_show_as_american_moneyline");

describe("odds formats share the Python test vectors", () => {
  it("finds the vectors in tests/unit/test_formatting.py", () => {
    expect(fractional.length).toBeGreaterThanOrEqual(13);
    expect(american.length).toBeGreaterThanOrEqual(6);
  });

  it.each(fractional)("decimal %s shows as the fraction %s on the ladder", (price, expected) => {
    expect(decimalToFractional(price)).toBe(expected);
  });

  it.each(american)("decimal %s shows as the moneyline %s", (price, expected) => {
    expect(decimalToAmerican(price)).toBe(expected);
  });

  it("shows a price exactly between two rungs at the shorter fraction", () => {
    expect(pythonTests).toContain('decimal_to_fractional(Decimal("2.05")) == "1/1"');
    expect(decimalToFractional("2.05")).toBe("1/1");
  });

  it("dispatches on the chosen format", () => {
    expect(pythonTests).toContain('== ["2.50", "6/4", "+150"]');
    expect([formatOdds("2.5", "decimal"), formatOdds("2.5", "fractional"), formatOdds("2.5", "american")]).toEqual([
      "2.50",
      "6/4",
      "+150",
    ]);
  });

  it.each(["1.00", "0.5", "NaN"])("rejects %s, which is not odds", (bad) => {
    expect(() => decimalToFractional(bad)).toThrow();
    expect(() => decimalToAmerican(bad)).toThrow();
  });
});

describe("odds formats agree with odds/core/formatting.py on every price of the ladder range", () => {
  const rules = JSON.parse(rulesJson) as { formats: [string, string, string, string][] };

  it("covers 1.01 to 1000", () => {
    expect(rules.formats.length).toBeGreaterThan(2500);
  });

  it("matches decimal, fractional and American text for each price", () => {
    const mismatches = rules.formats.filter(
      ([price, dec, frac, us]) =>
        decimalText(price) !== dec || decimalToFractional(price) !== frac || decimalToAmerican(price) !== us,
    );
    expect(mismatches).toEqual([]);
  });
});

class MemoryStore implements KeyValueStore {
  readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

describe("the chosen format is remembered", () => {
  it("round-trips through the store and falls back to decimal", () => {
    const store = new MemoryStore();
    expect(storedOddsFormat(store)).toBe("decimal");
    storeOddsFormat(store, "fractional");
    expect(storedOddsFormat(store)).toBe("fractional");
    store.setItem("sportsbook.oddsFormat", "<script>");
    expect(storedOddsFormat(store)).toBe("decimal");
    expect(storedOddsFormat(null)).toBe("decimal");
  });
});
