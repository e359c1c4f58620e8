// Exact decimal arithmetic for prices and money: a value is an integer coefficient (BigInt)
// and a number of decimal places. Binary floats never touch a price or an amount of money.
// Rounding follows Python's decimal module as used by reducers/betting.py and odds/core/formatting.py.
import { CURRENCY_SYMBOLS, STAKE_PLACES } from "./rules";

export interface Dec {
  readonly coef: bigint;
  readonly places: number;
}

export type Rounding = "half_up" | "down";

const DECIMAL_RE = /^([+-])?(\d+)(?:\.(\d*))?$/;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Parse a decimal string ("2.50", "10", "-0.5"); null when it is not a plain decimal. */
export function parseDec(text: string): Dec | null {
  const match = DECIMAL_RE.exec(text.trim());
  if (match === null) return null;
  const [, sign, whole = "0", fraction = ""] = match;
  const coef = BigInt(whole + fraction);
  return { coef: sign === "-" ? -coef : coef, places: fraction.length };
}

/** Parse or throw: for values that come from the server and must be decimals. */
export function dec(text: string): Dec {
  const value = parseDec(text);
  if (value === null) throw new Error(`not a decimal: ${JSON.stringify(text)}`);
  return value;
}

export function decFromInt(n: number | bigint): Dec {
  return { coef: BigInt(n), places: 0 };
}

function rescaleExact(value: Dec, places: number): bigint {
  return value.coef * pow10(places - value.places);
}

/** Division of integers rounded to an integer: half away from zero, or towards zero. */
function divRound(numerator: bigint, denominator: bigint, mode: Rounding): bigint {
  if (denominator === 0n) throw new Error("division by zero");
  if (denominator < 0n) {
    numerator = -numerator;
    denominator = -denominator;
  }
  const negative = numerator < 0n;
  const n = negative ? -numerator : numerator;
  let q = n / denominator;
  const r = n % denominator;
  if (mode === "half_up" && r * 2n >= denominator) q += 1n;
  return negative ? -q : q;
}

/** The value rounded to ``places`` decimal places. */
export function quantize(value: Dec, places: number, mode: Rounding): Dec {
  if (value.places <= places) return { coef: rescaleExact(value, places), places };
  return { coef: divRound(value.coef, pow10(value.places - places), mode), places };
}

export function mul(a: Dec, b: Dec): Dec {
  return { coef: a.coef * b.coef, places: a.places + b.places };
}

export function add(a: Dec, b: Dec): Dec {
  const places = Math.max(a.places, b.places);
  return { coef: rescaleExact(a, places) + rescaleExact(b, places), places };
}

export function sub(a: Dec, b: Dec): Dec {
  return add(a, { coef: -b.coef, places: b.places });
}

/** a / b rounded to ``places`` decimal places. */
export function div(a: Dec, b: Dec, places: number, mode: Rounding): Dec {
  // a/b = (a.coef / 10^a.places) / (b.coef / 10^b.places); scale the numerator so the integer
  // quotient has exactly ``places`` decimals.
  const shift = places + b.places - a.places;
  const numerator = shift >= 0 ? a.coef * pow10(shift) : a.coef;
  const denominator = shift >= 0 ? b.coef : b.coef * pow10(-shift);
  return { coef: divRound(numerator, denominator, mode), places };
}

export function compare(a: Dec, b: Dec): -1 | 0 | 1 {
  const places = Math.max(a.places, b.places);
  const x = rescaleExact(a, places);
  const y = rescaleExact(b, places);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Fixed notation with exactly ``value.places`` decimals: {coef: 250n, places: 2} → "2.50". */
export function format(value: Dec): string {
  const negative = value.coef < 0n;
  const digits = (negative ? -value.coef : value.coef).toString().padStart(value.places + 1, "0");
  const whole = value.places === 0 ? digits : digits.slice(0, -value.places);
  const fraction = value.places === 0 ? "" : `.${digits.slice(-value.places)}`;
  return `${negative ? "-" : ""}${whole}${fraction}`;
}

// --- bet maths (the same rules as reducers/betting.py) ---

const ONE: Dec = { coef: 1n, places: 0 };

/** Accumulator odds: the product of the legs' decimal prices, half up to two places. */
export function combinedOdds(prices: readonly string[]): string {
  const product = prices.reduce<Dec>((acc, price) => mul(acc, dec(price)), ONE);
  return format(quantize(product, 2, "half_up"));
}

/** Stake times the product of the prices, rounded down to the penny (never overpay). */
export function potentialReturn(stake: string, prices: readonly string[]): string {
  const product = prices.reduce<Dec>((acc, price) => mul(acc, dec(price)), dec(stake));
  return format(quantize(product, 2, "down"));
}

/** The sum of amounts of money, to the penny. */
export function sumMoney(amounts: readonly string[]): string {
  const total = amounts.reduce<Dec>((acc, amount) => add(acc, dec(amount)), { coef: 0n, places: 2 });
  return format(quantize(total, 2, "down"));
}

export function compareDecimal(a: string, b: string): -1 | 0 | 1 {
  return compare(dec(a), dec(b));
}

export type StakeParse = { ok: true; value: string } | { ok: false; message: string };

/** The book's stake limits (``LIMITS`` of rules.ts; see slip.ts ``SlipLimits``). */
export interface StakeLimits {
  minStake: string;
  maxStake: string;
}

/** ``text`` without a currency symbol typed before it ("£10", "€10", "$10" → "10"). */
function withoutSymbol(text: string): string {
  const symbol = Object.values(CURRENCY_SYMBOLS).find((s) => text.startsWith(s));
  return symbol === undefined ? text : text.slice(symbol.length);
}

/** A stake as typed ("5", "2.5", "£10", "€10") to pence, or the reason it cannot be placed. */
export function parseStake(text: string, limits: StakeLimits): StakeParse {
  const trimmed = withoutSymbol(text.trim());
  if (trimmed === "") return { ok: false, message: "Enter a stake" };
  const value = parseDec(trimmed);
  if (value === null || value.coef < 0n) return { ok: false, message: "Enter an amount such as 5.00" };
  if (value.places > STAKE_PLACES) return { ok: false, message: "Use at most two decimal places (pence)" };
  const money = quantize(value, STAKE_PLACES, "down");
  if (money.coef === 0n) return { ok: false, message: "Enter a stake above zero" };
  if (compare(money, dec(limits.minStake)) < 0) {
    return { ok: false, message: `The minimum stake is ${formatMoney(limits.minStake)}` };
  }
  if (compare(money, dec(limits.maxStake)) > 0) {
    return { ok: false, message: `The maximum stake is ${formatMoney(limits.maxStake)}` };
  }
  return { ok: true, value: format(money) };
}

// The currency amounts are shown in when a caller names none: the punter's wallet currency,
// which the page names (``data-currency`` on its body, set once by ``setPageCurrency``).
let pageCurrency = "GBP";

/** Show amounts in ``currency`` from now on where no other is named (the page's wallet currency). */
export function setPageCurrency(currency: string): void {
  if (/^[A-Z]{3}$/.test(currency)) pageCurrency = currency;
}

/** The symbol amounts in ``currency`` carry: "£", "€", "$", or the code and a space. */
export function currencySymbol(currency: string = pageCurrency): string {
  return CURRENCY_SYMBOLS[currency] ?? `${currency} `;
}

/** "1234.5" → "£1,234.50": amounts shown to the punter, in their wallet's currency. */
export function formatMoney(amount: string, currency: string = pageCurrency): string {
  const value = quantize(dec(amount), 2, "half_up");
  const text = format({ coef: value.coef < 0n ? -value.coef : value.coef, places: 2 });
  const [whole = "0", fraction = "00"] = text.split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${value.coef < 0n ? "−" : ""}${currencySymbol(currency)}${grouped}.${fraction}`;
}
