// The match message (docs/protocol.md, "match"): an event's match state as the reducers keep it and
// send it to the channels showing its markets. Its clock and scoreboard are drawn by scoreboard.ts.
export { clockSeconds, clockText } from "./scoreboard";

import type { ClockState, MatchMessage as MatchFrame } from "./contract/frames";

// The generated types (reducers/frames.py) carry these as the reducers' validated text and score
// object; the browser reads them by their values, so it states the values reducers/schemas.py
// allows (MATCH_STATUSES, CLOCK_DIRECTIONS, match_score_from_json).
export type MatchClock = Omit<ClockState, "direction"> & { direction: "up" | "down" };

/** A score in its sport's terms (reducers/schemas.py, ``match_score_from_json``). */
export type MatchScore = {
  home?: number;
  away?: number;
  periods?: number[][];
  sets?: number[];
  games?: number[];
  points?: string[];
  set_games?: number[][];
  server?: "home" | "away";
};

export type MatchMessage = Omit<MatchFrame, "status" | "score" | "clock"> & {
  status: "scheduled" | "in_play" | "break" | "finished";
  score: MatchScore;
  clock: MatchClock | null;
};
