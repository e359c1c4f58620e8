// How far a cash-out value may move between the punter's click and the book's answer: the
// punter's setting (the select on My bets, labelled there), sent with every cash-out
// (POST /api/bets/<id>/cash-out, field "accept").
import type { CashOutRequest } from "./contract/api";
import type { KeyValueStore } from "./odds";

export type CashOutPolicy = NonNullable<CashOutRequest["accept"]>;
/** The select's options, in its order; each one the schema allows. */
export const CASH_OUT_POLICIES = ["better", "exact", "any"] as const satisfies readonly CashOutPolicy[];

const KEY = "sportsbook.cashOutAccept";

export function isCashOutPolicy(value: unknown): value is CashOutPolicy {
  return typeof value === "string" && (CASH_OUT_POLICIES as readonly string[]).includes(value);
}

/** The punter's setting, remembered in the browser; "better" (the book's default) when none is stored. */
export function storedCashOutPolicy(store: KeyValueStore | null): CashOutPolicy {
  try {
    const raw = store?.getItem(KEY);
    return isCashOutPolicy(raw) ? raw : "better";
  } catch {
    return "better";
  }
}

export function storeCashOutPolicy(store: KeyValueStore | null, policy: CashOutPolicy): void {
  try {
    store?.setItem(KEY, policy);
  } catch {
    // Storage full or refused (private mode): the setting lasts for this page only.
  }
}
