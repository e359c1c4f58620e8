import { describe, expect, it } from "vitest";
import { localTimeParts } from "../src/times";

describe("times in the punter's zone", () => {
  it("writes one instant in each zone's own clock", () => {
    const iso = "2026-11-22T19:45:00+00:00";
    expect(localTimeParts(iso, "Europe/London")).toMatchObject({ day: "Sun 22 Nov", time: "19:45" });
    expect(localTimeParts(iso, "Asia/Tokyo")).toMatchObject({ day: "Mon 23 Nov", time: "04:45" });
    expect(localTimeParts(iso, "America/New_York")?.long).toBe("Sunday 22 November, 14:45");
  });

  it("leaves a bad timestamp alone", () => {
    expect(localTimeParts("not a time")).toBeNull();
  });
});
