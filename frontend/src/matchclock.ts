// Each sport's score and clock in its own terms, from a match state (docs/protocol.md, "match").
// A running clock is ticked here between messages: what it shows is computed from the state's
// timestamp, so it never stands still while a match is live and stops when the state says so.

export interface MatchClock {
  running: boolean;
  elapsed_s: number;
  at: number;
  direction: "up" | "down";
  limit_s: number | null;
  rate?: number;
}

export interface MatchMessage {
  type: "match";
  v: number;
  event_id: number;
  seq: number;
  sport: string;
  status: "scheduled" | "in_play" | "break" | "finished";
  period: number;
  score: { home?: number; away?: number; sets?: number[]; games?: number[]; points?: string[] };
  clock: MatchClock | null;
  incidents: { kind: string; side: string; period: number; at: number }[];
}

const FOOTBALL_HALF_S = 45 * 60;

/** Seconds of the period shown at ``nowMs``: elapsed seconds advance while the clock runs. */
export function clockSeconds(clock: MatchClock, nowMs: number): number {
  const ticked = clock.running ? Math.max(0, nowMs - clock.at) / 1000 : 0;
  const elapsed = clock.elapsed_s + ticked * (clock.rate ?? 1);
  if (clock.direction === "down") return Math.max(0, (clock.limit_s ?? 0) - elapsed);
  return elapsed;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function mmss(seconds: number): string {
  const whole = Math.floor(seconds);
  return `${pad(Math.floor(whole / 60))}:${pad(whole % 60)}`;
}

/** Football's minute, with added time past the end of a half: 12', 45+2', 67'. */
function footballMinute(match: MatchMessage, seconds: number): string {
  const end = match.period >= 2 ? 2 * FOOTBALL_HALF_S : FOOTBALL_HALF_S;
  if (seconds >= end) return `${end / 60}+${Math.floor((seconds - end) / 60) + 1}'`;
  return `${Math.floor(seconds / 60) + 1}'`;
}

/** The clock text of a match at ``nowMs``; tennis shows the set instead of a clock. */
export function clockText(match: MatchMessage, nowMs: number): string {
  if (match.status === "finished") return "FT";
  if (match.status === "scheduled") return "";
  if (match.sport === "tennis") return `Set ${Math.max(1, match.period)}`;
  if (match.status === "break") return match.sport === "football" ? "HT" : `End Q${match.period}`;
  if (match.clock === null) return "";
  const seconds = clockSeconds(match.clock, nowMs);
  if (match.sport === "basketball") return `Q${match.period} ${mmss(seconds)}`;
  return footballMinute(match, seconds);
}

/** Home and away as shown beside the team names: goals, points, or tennis sets. */
export function scoreParts(match: MatchMessage): { home: string; away: string; detail: string } {
  const score = match.score;
  if (match.sport === "tennis") {
    const sets = score.sets ?? [0, 0];
    const games = score.games ?? [0, 0];
    const points = score.points ?? ["0", "0"];
    return {
      home: String(sets[0]),
      away: String(sets[1]),
      detail: `Games ${games[0]}-${games[1]}, points ${points[0]}-${points[1]}`,
    };
  }
  return { home: String(score.home ?? 0), away: String(score.away ?? 0), detail: "" };
}
