// The match message (docs/protocol.md, "match"): an event's match state as the reducers keep it and
// send it to the channels showing its markets. Its clock and scoreboard are drawn by scoreboard.ts.
export { clockSeconds, clockText } from "./scoreboard";

export interface MatchClock {
  running: boolean;
  elapsed_s: number;
  at: number;
  direction: "up" | "down";
  limit_s: number | null;
  rate?: number;
}

export interface MatchScore {
  home?: number;
  away?: number;
  periods?: number[][];
  sets?: number[];
  games?: number[];
  points?: string[];
  set_games?: number[][];
  server?: "home" | "away";
}

export interface MatchMessage {
  type: "match";
  v: number;
  event_id: number;
  seq: number;
  sport: string;
  status: "scheduled" | "in_play" | "break" | "finished";
  period: number;
  score: MatchScore;
  clock: MatchClock | null;
  incidents: { kind: string; side: string; period: number; at: number }[];
  suspension?: { reason: string; since: number } | null;
}
