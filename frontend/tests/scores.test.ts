import { describe, expect, it } from "vitest";
import { FALLBACK_FIRST_MS, FALLBACK_MAX_MS, fallbackDelay } from "../src/scores";

describe("match states while the stream is down", () => {
  it("are fetched less often the longer the stream stays down, up to a cap", () => {
    expect([0, 1, 2, 3].map(fallbackDelay)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(fallbackDelay(0)).toBe(FALLBACK_FIRST_MS);
    expect(fallbackDelay(10)).toBe(FALLBACK_MAX_MS);
  });
});
