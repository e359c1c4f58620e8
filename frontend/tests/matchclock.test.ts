import { describe, expect, it } from "vitest";
import { clockSeconds, clockText, type MatchMessage } from "../src/matchclock";
import { boardOf } from "../src/scoreboard";

const AT = 1_700_000_000_000;

function football(overrides: Partial<MatchMessage> = {}): MatchMessage {
  return {
    type: "match",
    v: 1,
    event_id: 1,
    seq: 1,
    sport: "football",
    status: "in_play",
    period: 1,
    score: { home: 1, away: 0 },
    clock: { running: true, elapsed_s: 600, at: AT, direction: "up", limit_s: null, rate: 1 },
    incidents: [],
    ts: { event: 1, produce: 1, kafka: 1, reducer: 1 },
    ...overrides,
  };
}

describe("match clock", () => {
  it("advances a running clock from the state's timestamp without a new message", () => {
    expect(clockText(football(), AT)).toBe("11'");
    expect(clockText(football(), AT + 90_000)).toBe("12'");
  });

  it("stands still when the state says it is stopped", () => {
    const stopped = football({ clock: { running: false, elapsed_s: 600, at: AT, direction: "up", limit_s: null, rate: 1 } });
    expect(clockSeconds(stopped.clock!, AT + 60_000)).toBe(600);
  });

  it("shows half time in a break", () => {
    expect(clockText(football({ status: "break" }), AT + 60_000)).toBe("HT");
  });

  it("shows added time past the end of a half", () => {
    const clock = { running: true, elapsed_s: 45 * 60 + 70, at: AT, direction: "up" as const, limit_s: null, rate: 1 };
    expect(clockText(football({ clock }), AT)).toBe("45+2'");
    expect(clockText(football({ period: 2, clock: { ...clock, elapsed_s: 90 * 60 + 5 } }), AT)).toBe("90+1'");
  });

  it("ticks at the demo's rate", () => {
    const clock = { running: true, elapsed_s: 0, at: AT, direction: "up" as const, limit_s: null, rate: 60 };
    expect(clockText(football({ clock }), AT + 2_000)).toBe("3'");
  });

  it("counts a basketball quarter down", () => {
    const match = football({
      sport: "basketball",
      period: 3,
      score: { home: 61, away: 58 },
      clock: { running: true, elapsed_s: 30, at: AT, direction: "down", limit_s: 720, rate: 1 },
    });
    expect(clockText(match, AT)).toBe("Q3 11:30");
    expect(clockText(match, AT + 5_000)).toBe("Q3 11:25");
    expect(clockText(match, AT + 10_000_000)).toBe("Q3 00:00");
  });

  it("shows tennis in sets and games, with no minute clock", () => {
    const match = football({
      sport: "tennis",
      period: 2,
      score: { sets: [1, 0], games: [3, 2], points: ["15", "40"] },
      clock: null,
    });
    expect(clockText(match, AT + 60_000)).toBe("Set 2");
    const board = boardOf({ eventId: 1, sport: "tennis", home: "A", away: "B", match, nowMs: AT });
    expect(board.columns).toEqual(["Sets", "Games", "Points"]);
    expect([board.home.cells, board.away.cells]).toEqual([["1", "3", "15"], ["0", "2", "40"]]);
  });

  it("says finished in the sport's own word, with no clock", () => {
    const done = (sport: string) =>
      boardOf({ eventId: 1, sport, home: "A", away: "B", match: football({ sport, status: "finished" }), nowMs: AT });
    expect(clockText(football({ status: "finished" }), AT)).toBe("");
    expect(["football", "basketball", "tennis"].map((sport) => done(sport).done)).toEqual(["FT", "Final", "Finished"]);
  });
});
