// Odds formats at the edge, with the same rules as odds/formatting.py: prices are decimal strings
// everywhere; fractional (from the traditional UK ladder) and American odds exist only on screen.
import { type Dec, compare, dec, div, format, mul, quantize, sub } from "./decimal";

export type OddsFormat = "decimal" | "fractional" | "american";
export const ODDS_FORMATS: readonly OddsFormat[] = ["decimal", "fractional", "american"];

// The ladder as the platform spells it, ascending (6/4 rather than 3/2, 85/40 rather than 17/8).
export const FRACTIONAL_LADDER: readonly string[] = [
  "1/100", "1/66", "1/50", "1/40", "1/33", "1/25", "1/20", "1/16", "1/14", "1/12", "1/10", "1/9",
  "1/8", "2/15", "1/7", "2/13", "1/6", "2/11", "1/5", "2/9", "1/4", "2/7", "3/10", "1/3",
  "4/11", "2/5", "4/9", "1/2", "8/15", "4/7", "8/13", "4/6", "8/11", "4/5", "5/6", "10/11",
  "1/1", "11/10", "6/5", "5/4", "11/8", "6/4", "13/8", "7/4", "15/8", "2/1", "85/40", "9/4",
  "5/2", "11/4", "3/1", "10/3", "7/2", "4/1", "9/2", "5/1", "11/2", "6/1", "13/2", "7/1",
  "15/2", "8/1", "17/2", "9/1", "10/1", "11/1", "12/1", "14/1", "16/1", "18/1", "20/1", "22/1",
  "25/1", "28/1", "33/1", "40/1", "50/1", "66/1", "80/1", "100/1", "125/1", "150/1", "200/1",
  "250/1", "300/1", "400/1", "500/1", "750/1", "999/1",
];

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
