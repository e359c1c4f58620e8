import { describe, expect, it } from "vitest";
import type { MatchMessage } from "../src/matchclock";
import { type Board, boardOf, type Layout } from "../src/scoreboard";
import rulesJson from "./vectors/python_rules.json?raw";

interface BoardVector {
  match: MatchMessage | null;
  now: number;
  layout: Layout;
  fallback: { sport?: string; status?: string; home_score?: number; away_score?: number };
  board: Board;
}

const boards = (JSON.parse(rulesJson) as { boards: BoardVector[] }).boards;

describe("scoreboards share the server's (odds/catalogue/scoreboard.py)", () => {
  it("has the vectors", () => {
    expect(boards.length).toBeGreaterThanOrEqual(15);
  });

  it.each(boards.map((v) => [`${v.match?.sport ?? v.fallback.sport} ${v.match?.status ?? "no state"} ${v.layout}`, v]))(
    "%s draws the same board",
    (_, vector) => {
      const v = vector as BoardVector;
      const board = boardOf({
        eventId: 7,
        sport: v.match?.sport ?? v.fallback.sport ?? "",
        home: "Home Side",
        away: "Away Side",
        match: v.match,
        nowMs: v.now,
        layout: v.layout,
        status: v.fallback.status,
        homeScore: v.fallback.home_score,
        awayScore: v.fallback.away_score,
      });
      expect(board).toEqual(v.board);
    },
  );
});
