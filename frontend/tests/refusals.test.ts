import { describe, expect, it } from "vitest";
import { GENERIC_REFUSAL, KNOWN_REFUSALS, refusalText } from "../src/refusals";

const LIMITS = { minStake: "0.10", maxStake: "10000.00", maxReturn: "250000.00", maxLegs: 20 };

// Every refusal code the API documents for placing a bet or cashing out (odds/api/openapi.py).
const API_CODES = [
  "market_suspended", "market_closed", "selection_unavailable", "price_changed", "insufficient_funds",
  "stake_too_low", "stake_too_high", "return_too_high", "unknown_selection", "same_event",
  "idempotency_key_reused", "rate_limited", "not_authenticated", "csrf_failed", "bad_json", "invalid",
  "required", "number_out_of_range", "body_too_large", "database_unavailable", "quote_changed",
  "cash_out_unavailable", "not_found",
];

describe("refusals in words", () => {
  it.each(API_CODES)("puts %s into a sentence of its own, never the server's text", (code) => {
    expect(KNOWN_REFUSALS).toContain(code);
    const text = refusalText(code, "raw server text", LIMITS);
    expect(text).not.toContain("raw server text");
    expect(text).toMatch(/^[A-Z].*\.$/);
  });

  it("states the limits it was given", () => {
    expect(refusalText("stake_too_low", "the minimum stake is 0.10", { ...LIMITS, minStake: "1.00" })).toBe(
      "The minimum stake is £1.00.",
    );
  });

  it("shows an unknown refusal's message when it is a sentence meant for punters", () => {
    expect(refusalText("timed_out", "You are taking a break until 20:00.", LIMITS)).toBe(
      "You are taking a break until 20:00.",
    );
  });

  it.each(["over_loss_limit", "over_wager_limit"])("shows the server's sentence for %s: the limit and when it frees up", (code) => {
    const sentence =
      "This bet is over your daily loss limit of €50.00: you can stake €10.00 more now, and the limit frees up from 29 Nov 2026, 18:40 UTC.";
    expect(refusalText(code, sentence, LIMITS)).toBe(sentence);
  });

  it("gives a general sentence for an unknown refusal with developer text", () => {
    expect(refusalText("weird_code", "field x: expected int", LIMITS)).toBe(GENERIC_REFUSAL);
  });
});
