// Refusals in words: every code the API answers a bet or a cash-out with (docs/protocol.md, the
// OpenAPI document) as a sentence for the punter. The server's own text is for developers; it is
// shown only when it is already a sentence (a capital first, a full stop last), and otherwise an
// unknown code gets a general sentence. Refusals for the punter's account are worded by the
// server, which alone knows what they say: until when a break runs (`excluded`), which loss or
// wager limit a stake is over, what is left of it and when it frees up (`over_loss_limit`,
// `over_wager_limit`), in the wallet's currency.
import { formatMoney } from "./decimal";
import type { SlipLimits } from "./slip";

export const GENERIC_REFUSAL = "Your bet could not be placed. Try again in a moment.";

const REFUSALS: Record<string, (limits: SlipLimits) => string> = {
  price_changed: () => "The price has changed. Accept the new price to place your bet.",
  market_suspended: () => "The market was suspended, so the bet was not accepted.",
  market_closed: () => "The market has closed, so the bet was not accepted.",
  selection_unavailable: () => "This selection is no longer available. Remove it from your slip.",
  unknown_selection: () => "A selection in your slip no longer exists. Remove it and try again.",
  insufficient_funds: () => "Your balance is too low for this stake.",
  stake_too_low: (l) => `The minimum stake is ${formatMoney(l.minStake)}.`,
  stake_too_high: (l) => `The maximum stake is ${formatMoney(l.maxStake)}.`,
  return_too_high: (l) => `The potential return is above the maximum of ${formatMoney(l.maxReturn)}. Lower the stake.`,
  same_event: () => "An accumulator takes one selection per event. Place these as singles.",
  idempotency_key_reused: () => "This bet was changed while it was being placed. Try again.",
  rate_limited: () => "You are placing bets very quickly. Wait a moment and try again.",
  not_authenticated: () => "You are logged out. Log in again to place bets.",
  csrf_failed: () => "This page is out of date. Reload it and try again.",
  network: () => "The connection failed. Check your network and try again.",
  database_unavailable: () => "We cannot take bets for a moment. Try again shortly.",
  bad_json: () => GENERIC_REFUSAL,
  invalid: () => "Something in your slip is not valid. Check the stakes and try again.",
  required: () => "Something in your slip is missing. Check the stakes and try again.",
  number_out_of_range: () => "A number in your slip is out of range. Check the stakes and try again.",
  body_too_large: () => "Your slip is too large to place at once. Remove some selections.",
  quote_changed: () => "The cash-out value changed.",
  cash_out_unavailable: () => "Cash out is not available on this bet right now.",
  not_found: () => "This bet could not be found. Reload the page.",
};

/** The codes this page puts into words. */
export const KNOWN_REFUSALS: readonly string[] = Object.keys(REFUSALS);

/** A sentence meant for people: starts with a capital letter and ends with a full stop. */
export function isSentence(text: string): boolean {
  return /^[A-Z].*[.!?]$/s.test(text.trim());
}

/** The punter's sentence for a refusal ``code`` with the server's ``message``. */
export function refusalText(code: string, message: string, limits: SlipLimits): string {
  const known = REFUSALS[code];
  if (known !== undefined) return known(limits);
  return isSentence(message) ? message.trim() : GENERIC_REFUSAL;
}
