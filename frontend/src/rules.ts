// The book's rules in the browser: bet limits, stake precision and the fractional ladder, read
// from rules.json, which `make rules` generates from reducers/rules.py (make test fails when the
// two differ). Money stays a decimal string.
import rules from "./rules.json";

/** The book's limits on a bet. */
export const LIMITS: { minStake: string; maxStake: string; maxReturn: string; maxLegs: number } = rules.limits;

/** Decimal places of a stake (pence). */
export const STAKE_PLACES: number = rules.stakePlaces;

/** The fractional ladder as the platform spells it, ascending. */
export const FRACTIONAL_LADDER: readonly string[] = rules.fractionalLadder;

/** The symbol of each currency a wallet may hold; another is shown by its code and a space. */
export const CURRENCY_SYMBOLS: Readonly<Record<string, string>> = rules.currencySymbols;
