// Scores and the match clock of the events on the page, in each sport's own terms. The server
// renders each scoreboard from the match state the reducers hold; match states then arrive over
// the page's websocket: the events the page shows are followed (``matches``, then each ``match``),
// and its channels carry those of their markets (``view.match``). Only while the socket is down
// are they fetched from /live/events, less often the longer it stays down; a running clock ticks
// here between them. Every board is drawn by scoreboard.ts (``renderMatch``).
import type { MatchMessage } from "./matchclock";
import { renderMatch, renderScore, scoreboardElement } from "./scoreboard";

/** While the stream is down: the first fetch after this long, then each wait doubled, up to the cap. */
export const FALLBACK_FIRST_MS = 5_000;
export const FALLBACK_MAX_MS = 60_000;
const TICK_MS = 1000;

interface EventLive {
  id: number;
  status: string;
  home_score: number;
  away_score: number;
  clock: string;
  match?: MatchMessage | null;
}

const matches = new Map<number, MatchMessage>();
const listeners: ((eventId: number, status: string) => void)[] = [];

function eventIds(): number[] {
  const ids = [...document.querySelectorAll<HTMLElement>("[data-event-id]")].map((n) => Number(n.dataset.eventId));
  return [...new Set(ids)].filter((id) => id > 0);
}

function nodesOf(eventId: number): NodeListOf<HTMLElement> {
  return document.querySelectorAll<HTMLElement>(`[data-event-id="${eventId}"]`);
}

function render(match: MatchMessage, nowMs: number): void {
  for (const node of nodesOf(match.event_id)) {
    if (node.dataset.scoreboard !== undefined) {
      renderMatch(node, match, nowMs);
      continue;
    }
    // The rows and heads holding a board follow its status (the page's styles key on it).
    node.dataset.status = match.status === "break" ? "in_play" : match.status;
    node.dataset.sport = match.sport;
  }
}

/** A match state from the stream or the fallback poll: the highest sequence per event wins. */
export function matchState(match: MatchMessage): void {
  const current = matches.get(match.event_id);
  if (current !== undefined && current.seq >= match.seq) return;
  matches.set(match.event_id, match);
  render(match, Date.now());
  for (const listener of listeners) listener(match.event_id, match.status);
}

/** The latest match state of an event, when one is known. */
export function matchOf(eventId: number): MatchMessage | undefined {
  return matches.get(eventId);
}

/** Be told of every event's status as it is learnt, from a match state or the catalogue (the
 * slip takes out the selections of finished matches). */
export function onEventStatus(listener: (eventId: number, status: string) => void): void {
  listeners.push(listener);
}

function applyLegacy(event: EventLive): void {
  for (const node of nodesOf(event.id)) {
    if (node.dataset.scoreboard !== undefined) renderScore(node, event);
    else node.dataset.status = event.status;
  }
  for (const listener of listeners) listener(event.id, event.status);
}

/** The one-line scoreboard of an event inside a bet or the slip, shown once its match state is known. */
export function liveScore(eventId: number): HTMLElement {
  const node = scoreboardElement(eventId);
  const known = matches.get(eventId);
  if (known !== undefined) renderMatch(node, known, Date.now());
  return node;
}

/** The events the page shows (each row, card and scoreboard carries its event id). */
export function pageEvents(): number[] {
  return eventIds();
}

/** The waits between fallback fetches while the stream stays down: doubling from the first to the cap. */
export function fallbackDelay(attempt: number): number {
  return Math.min(FALLBACK_FIRST_MS * 2 ** attempt, FALLBACK_MAX_MS);
}

let fallback: number | null = null;
let fallbackAttempt = 0;

async function fetchOnce(): Promise<void> {
  const ids = pageEvents();
  if (ids.length === 0 || document.hidden) return;
  try {
    // The events on the page now (the slip and My bets add theirs as they are drawn), at most as
    // many as the endpoint answers.
    const response = await fetch(`/live/events?ids=${ids.slice(0, 200).join(",")}`, { credentials: "same-origin" });
    if (!response.ok) return;
    const body = (await response.json()) as { events: EventLive[] };
    for (const event of body.events) {
      if (event.match) matchState(event.match);
      else if (!matches.has(event.id)) applyLegacy(event);
    }
  } catch {
    // The next fetch tries again.
  }
}

function scheduleFallback(): void {
  fallback = window.setTimeout(() => {
    void fetchOnce();
    fallbackAttempt += 1;
    scheduleFallback();
  }, fallbackDelay(fallbackAttempt));
}

/** The stream went down (fetch match states now and then) or came back (stop fetching). */
export function scoresStreamDown(down: boolean): void {
  if (down && fallback === null) {
    fallbackAttempt = 0;
    scheduleFallback();
  } else if (!down && fallback !== null) {
    window.clearTimeout(fallback);
    fallback = null;
  }
}

export function startScores(): void {
  window.setInterval(() => {
    const now = Date.now();
    for (const match of matches.values()) render(match, now);
  }, TICK_MS);
}
