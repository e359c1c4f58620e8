// A match's scoreboard in its sport's own shape, built from a match message: the same board and
// the same markup as the server's (odds/catalogue/scoreboard.py, odds/templates/odds/_scoreboard.html),
// held to one answer by the cross-language vectors. ``renderMatch(element, match)`` redraws a
// scoreboard element the server rendered (or an empty one made by ``scoreboardElement``); every
// path that brings a match state (the stream, the fallback poll, the slip, My bets) calls it.
import { h } from "./dom";
import type { MatchMessage } from "./matchclock";
import { localTimeParts } from "./times";

/** ``row`` in event lists, ``head`` on an event's page, ``line`` (one line, no names) in the slip and My bets. */
export type Layout = "row" | "head" | "line";

export interface SideRow {
  name: string;
  cells: string[];
  serving: boolean;
  red_cards: number;
}

export interface Board {
  event_id: number;
  sport: string;
  status: string;
  clock: string;
  done: string;
  columns: string[];
  kinds: string[];
  home: SideRow;
  away: SideRow;
  note: string;
  note_since: number | null;
  seq: number;
}

const FOOTBALL_HALF_S = 45 * 60;
const FINISHED: Record<string, string> = { football: "FT", basketball: "Final", tennis: "Finished" };
const LIVE = new Set(["in_play", "break"]);

// The punter's words for a suspension (reducers/suspensions.py, REASONS[].punter).
const SUSPENDED: Record<string, string> = {
  kick_off: "Going in play — back soon",
  goal: "Goal — back soon",
  red_card: "Red card — back soon",
  var: "VAR check — back soon",
  break_of_serve: "Break of serve — back soon",
  trader: "Suspended by our traders",
  feed_lost: "Waiting for the live feed",
};

/** The punter's words for a market suspended for ``reason``. */
export function suspensionText(reason: string): string {
  return SUSPENDED[reason] ?? "Suspended";
}

type Clock = NonNullable<MatchMessage["clock"]>;

/** Seconds of the period shown at ``nowMs``: a running clock advances ``rate`` a second. */
export function clockSeconds(clock: Clock, nowMs: number): number {
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

function footballMinute(period: number, seconds: number): string {
  const end = period >= 2 ? 2 * FOOTBALL_HALF_S : FOOTBALL_HALF_S;
  if (seconds >= end) return `${end / 60}+${Math.floor((seconds - end) / 60) + 1}'`;
  return `${Math.floor(seconds / 60) + 1}'`;
}

/** The clock in the sport's words at ``nowMs``: 67', 45+2', HT, Q3 04:12, End Q2, Set 2. */
export function clockText(match: Pick<MatchMessage, "status" | "sport" | "period" | "clock">, nowMs: number): string {
  if (match.status === "finished" || match.status === "scheduled") return "";
  if (match.sport === "tennis") return `Set ${Math.max(1, match.period)}`;
  if (match.status === "break") return match.sport === "football" ? "HT" : `End Q${match.period}`;
  if (match.clock === null || match.clock === undefined) return "";
  const seconds = clockSeconds(match.clock, nowMs);
  if (match.sport === "basketball") return `Q${match.period} ${mmss(seconds)}`;
  return footballMinute(match.period, seconds);
}

function pair(raw: unknown): [number, number] {
  return Array.isArray(raw) && raw.length === 2 ? [Number(raw[0]), Number(raw[1])] : [0, 0];
}

type Column = [string, string, [string, string]];

function columnsOf(sport: string, layout: Layout, score: Record<string, unknown>): Column[] {
  if (sport === "tennis") {
    const sets = pair(score.sets);
    const games = pair(score.games);
    const points = Array.isArray(score.points) ? (score.points as string[]) : ["0", "0"];
    const columns: Column[] = [["Sets", "main", [String(sets[0]), String(sets[1])]]];
    if (layout === "head") {
      const done = Array.isArray(score.set_games) ? (score.set_games as unknown[]) : [];
      done.forEach((set, index) => {
        const [home, away] = pair(set);
        columns.push([`S${index + 1}`, "period", [String(home), String(away)]]);
      });
    }
    columns.push(["Games", "games", [String(games[0]), String(games[1])]]);
    columns.push(["Points", "points", [String(points[0]), String(points[1])]]);
    return columns;
  }
  const main: Column = ["", "main", [String(Number(score.home ?? 0)), String(Number(score.away ?? 0))]];
  if (sport === "basketball" && layout === "head") {
    const quarters = (Array.isArray(score.periods) ? (score.periods as unknown[]) : []).map(pair);
    const columns: Column[] = quarters.map(([home, away], index) => [
      index < 4 ? `Q${index + 1}` : `OT${index - 3}`,
      "period",
      [String(home), String(away)],
    ]);
    return [...columns, ["T", "main", main[2]]];
  }
  return [main];
}

export interface BoardInput {
  eventId: number;
  sport: string;
  home: string;
  away: string;
  match: MatchMessage | null;
  nowMs: number;
  layout?: Layout;
  status?: string;
  homeScore?: number;
  awayScore?: number;
}

/** The board of an event: from its match state when there is one, else from the page's status
 * and score (odds.catalogue.scoreboard.board_of). */
export function boardOf(input: BoardInput): Board {
  const layout = input.layout ?? "row";
  const fallback = input.match === null;
  let sport = input.sport;
  let clock = "";
  let match: Pick<MatchMessage, "status" | "score" | "incidents" | "seq"> & { suspension?: MatchMessage["suspension"] };
  if (input.match === null) {
    const status = input.status ?? "scheduled";
    const score =
      sport === "tennis"
        ? { sets: [input.homeScore ?? 0, input.awayScore ?? 0], games: [0, 0], points: ["0", "0"] }
        : { home: input.homeScore ?? 0, away: input.awayScore ?? 0 };
    match = { status: status as MatchMessage["status"], score, incidents: [], seq: 0 };
  } else {
    sport = input.match.sport || sport;
    // The catalogue says the match is over before its last state has reached the reducers.
    const over = input.status === "finished" && input.match.status !== "finished";
    match = over ? { ...input.match, status: "finished" } : input.match;
    clock = clockText(over ? { ...input.match, status: "finished" } : input.match, input.nowMs);
  }
  const status = match.status;
  const live = LIVE.has(status);
  const score = (match.score ?? {}) as Record<string, unknown>;
  let columns = columnsOf(sport, layout, score);
  if (fallback) columns = columns.filter((c) => c[1] === "main");
  else if (sport === "tennis" && !live) columns = columns.filter((c) => c[1] === "main" || c[1] === "period");
  let redHome = 0;
  let redAway = 0;
  for (const incident of match.incidents ?? []) {
    if (incident.kind !== "red_card") continue;
    if (incident.side === "home") redHome += 1;
    if (incident.side === "away") redAway += 1;
  }
  const server = sport === "tennis" && live ? score.server : undefined;
  const suspension = live ? (match.suspension ?? null) : null;
  return {
    event_id: input.eventId,
    sport,
    status,
    clock,
    done: FINISHED[sport] ?? "FT",
    columns: columns.map((c) => c[0]),
    kinds: columns.map((c) => c[1]),
    home: { name: input.home, cells: columns.map((c) => c[2][0]), serving: server === "home", red_cards: redHome },
    away: { name: input.away, cells: columns.map((c) => c[2][1]), serving: server === "away", red_cards: redAway },
    note: suspension ? suspensionText(suspension.reason) : "",
    note_since: suspension ? suspension.since : null,
    seq: match.seq ?? 0,
  };
}

function startTime(iso: string, layout: Layout): HTMLElement {
  const parts = localTimeParts(iso);
  const node = h("time", { class: "sb-start", datetime: iso, "data-local": layout === "head" ? "long" : "short" });
  if (layout === "head") node.textContent = parts?.long ?? "";
  else node.append(h("span", { class: "day", text: parts?.day ?? "" }), " ", h("span", { class: "num", text: parts?.time ?? "" }));
  return node;
}

function sideRow(key: "home" | "away", row: SideRow, kinds: string[]): HTMLElement {
  const team = h(
    "th",
    { scope: "row", class: "sb-team" },
    row.serving ? h("span", { class: "sb-serve", title: "Serving", "aria-label": "Serving", text: "●" }) : null,
    h("span", { class: "team-name", text: row.name }),
    row.red_cards > 0
      ? h("span", {
          class: "sb-card",
          title: "Red cards",
          "aria-label": `${row.red_cards} red card${row.red_cards === 1 ? "" : "s"}`,
          text: String(row.red_cards),
        })
      : null,
  );
  const cells = row.cells.map((text, index) => {
    const kind = kinds[index] ?? "main";
    return h("td", { class: `num sb-${kind}`, "data-score": kind === "main" ? key : null, text });
  });
  return h("tr", { "data-side": key }, team, ...cells);
}

function lineNodes(board: Board): Node[] {
  const parts = board.columns.map((label, index) => {
    const kind = board.kinds[index] ?? "main";
    const serving = kind === "points" ? (board.home.serving ? "home" : board.away.serving ? "away" : "") : "";
    return h(
      "span",
      { class: `sb-part sb-${kind}` },
      label ? h("span", { class: "sb-label", text: `${label} ` }) : null,
      serving === "home" ? h("span", { class: "sb-serve", title: "Serving", "aria-label": "Serving", text: "●" }) : null,
      h("span", { "data-score": kind === "main" ? "home" : null, text: board.home.cells[index] ?? "" }),
      h("span", { "aria-hidden": "true", text: "–" }),
      h("span", { "data-score": kind === "main" ? "away" : null, text: board.away.cells[index] ?? "" }),
      serving === "away" ? h("span", { class: "sb-serve", title: "Serving", "aria-label": "Serving", text: "●" }) : null,
    );
  });
  return [h("span", { class: "sb-parts" }, ...parts)];
}

/** The scoreboard's inside for ``board`` (what odds/_scoreboard.html renders inside its root). */
export function boardNodes(board: Board, layout: Layout, startsAt: string): Node[] {
  const state = h("div", { class: "sb-state" });
  if (LIVE.has(board.status)) {
    state.append(h("span", { class: "badge live", text: "Live" }), h("span", { class: "sb-clock num", "data-clock": true, text: board.clock }));
  } else if (board.status === "finished") {
    state.append(h("span", { class: "badge done", text: board.done }));
  } else if (startsAt) {
    state.append(startTime(startsAt, layout));
  }
  if (layout === "line") {
    const nodes: Node[] = [state, ...lineNodes(board)];
    if (board.note) nodes.push(h("p", { class: "sb-note", "data-suspension": true, text: board.note }));
    return nodes;
  }
  const head = h(
    "tr",
    {},
    h("th", { scope: "col" }, h("span", { class: "visually-hidden", text: "Side" })),
    ...board.columns.map((label, index) => h("th", { scope: "col", class: `sb-${board.kinds[index] ?? "main"}`, text: label })),
  );
  const table = h(
    "table",
    { class: "sb-table" },
    h("thead", {}, head),
    h("tbody", {}, sideRow("home", board.home, board.kinds), sideRow("away", board.away, board.kinds)),
  );
  const nodes: Node[] = [state, table];
  if (board.note) nodes.push(h("p", { class: "sb-note", "data-suspension": true, text: board.note }));
  return nodes;
}

const drawn = new WeakMap<HTMLElement, string>();

function layoutOf(element: HTMLElement): Layout {
  const layout = element.dataset.layout;
  return layout === "head" || layout === "line" ? layout : "row";
}

function draw(element: HTMLElement, board: Board, layout: Layout): Board {
  const key = JSON.stringify(board);
  if (drawn.get(element) === key) return board;
  drawn.set(element, key);
  element.dataset.sport = board.sport;
  element.dataset.status = board.status;
  element.dataset.seq = String(board.seq);
  // A one-line board shows a match under way or over, never one still to come.
  if (layout === "line") element.hidden = board.status === "scheduled";
  element.replaceChildren(...boardNodes(board, layout, element.dataset.startsAt ?? ""));
  return board;
}

/** Redraw a scoreboard element (``[data-scoreboard]``) for ``match`` at ``nowMs``; nothing is
 * touched when the board is what the element already shows. Returns the board. */
export function renderMatch(element: HTMLElement, match: MatchMessage, nowMs: number = Date.now()): Board {
  const data = element.dataset;
  const layout = layoutOf(element);
  // A match the page already shows finished stays finished while its last state is on its way.
  const status = data.status === "finished" ? "finished" : undefined;
  const board = boardOf({ eventId: match.event_id, sport: match.sport, home: data.home ?? "", away: data.away ?? "", match, nowMs, layout, status });
  return draw(element, board, layout);
}

/** Redraw a scoreboard element from an event's status and score alone (no match state known). */
export function renderScore(
  element: HTMLElement,
  event: { id: number; status: string; home_score: number; away_score: number },
): Board {
  const data = element.dataset;
  const layout = layoutOf(element);
  const board = boardOf({
    eventId: event.id,
    sport: data.sport ?? "",
    home: data.home ?? "",
    away: data.away ?? "",
    match: null,
    nowMs: Date.now(),
    layout,
    status: event.status,
    homeScore: event.home_score,
    awayScore: event.away_score,
  });
  return draw(element, board, layout);
}

/** An empty one-line scoreboard of an event, shown once its match state is known (the slip, My bets). */
export function scoreboardElement(eventId: number): HTMLElement {
  return h("div", {
    class: "sb sb-line",
    "data-scoreboard": true,
    "data-layout": "line",
    "data-event-id": eventId,
    "data-status": "scheduled",
    hidden: true,
  });
}
