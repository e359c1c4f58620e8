// Odds formats at the edge, with the same rules as odds/core/formatting.py: prices are decimal strings
// everywhere; fractional (from the traditional UK ladder) and American odds exist only on screen.
import { type Dec, compare, dec, div, format, mul, quantize, sub } from "./decimal";
import { FRACTIONAL_LADDER } from "./rules";

export type OddsFormat = "decimal" | "fractional" | "american";
export const ODDS_FORMATS: readonly OddsFormat[] = ["decimal", "fractional", "american"];

// The ladder as the platform spells it, ascending (reducers/rules.py, through rules.ts).
export { FRACTIONAL_LADDER };

interface Rung {
  text: string;
  num: bigint;
  den: bigint;
}

const RUNGS: readonly Rung[] = FRACTIONAL_LADDER.map((text) => {
  const [num = "0", den = "1"] = text.split("/");
  return { text, num: BigInt(num), den: BigInt(den) };
});

const ONE = dec("1");
const TWO = dec("2");
const HUNDRED = dec("100");

function checked(price: string): Dec {
  const value = dec(price);
  if (compare(value, ONE) <= 0) throw new Error(`decimal odds must be above 1, got ${price}`);
  return value;
}

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

/** The nearest fraction on the ladder; exactly between two rungs, the shorter one. */
export function decimalToFractional(price: string): string {
  const target = sub(checked(price), ONE); // target = coef / 10^places
  const tNum = target.coef;
  const tDen = 10n ** BigInt(target.places);
  let best: Rung | undefined;
  let bestNum = 0n;
  let bestDen = 1n;
  for (const rung of RUNGS) {
    // |num/den - tNum/tDen| = |num*tDen - tNum*den| / (den*tDen)
    const distNum = abs(rung.num * tDen - tNum * rung.den);
    const distDen = rung.den * tDen;
    // The ladder ascends, so only a strictly nearer rung replaces a shorter one.
    if (best === undefined || distNum * bestDen < bestNum * distDen) {
      best = rung;
      bestNum = distNum;
      bestDen = distDen;
    }
  }
  return (best as Rung).text;
}

/** Moneyline: "+150" from 2.00 up, "-110" below; rounded half up to a whole number. */
export function decimalToAmerican(price: string): string {
  const value = checked(price);
  if (compare(value, TWO) >= 0) {
    return `+${format(quantize(mul(sub(value, ONE), HUNDRED), 0, "half_up"))}`;
  }
  return `-${format(div(HUNDRED, sub(value, ONE), 0, "half_up"))}`;
}

/** Decimal odds with two places, the platform's own notation. */
export function decimalText(price: string): string {
  return format(quantize(checked(price), 2, "half_up"));
}

export function formatOdds(price: string, fmt: OddsFormat): string {
  if (fmt === "fractional") return decimalToFractional(price);
  if (fmt === "american") return decimalToAmerican(price);
  return decimalText(price);
}

export function isOddsFormat(value: unknown): value is OddsFormat {
  return typeof value === "string" && (ODDS_FORMATS as readonly string[]).includes(value);
}

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const FORMAT_KEY = "sportsbook.oddsFormat";

/** The punter's chosen format, remembered in the browser; decimal when nothing (valid) is stored. */
export function storedOddsFormat(store: KeyValueStore | null): OddsFormat {
  try {
    const raw = store?.getItem(FORMAT_KEY);
    return isOddsFormat(raw) ? raw : "decimal";
  } catch {
    return "decimal";
  }
}

export function storeOddsFormat(store: KeyValueStore | null, fmt: OddsFormat): void {
  try {
    store?.setItem(FORMAT_KEY, fmt);
  } catch {
    // Private mode or a full quota: the choice lasts for this page only.
  }
}
