// Scores and the match clock of the events on the page, in each sport's own terms. Match states
// arrive over the page's websocket: the events the page shows are followed (``matches``, then each
// ``match``), and its channels carry those of their markets (``view.match``). Only while the
// socket is down are they fetched from /live/events, less often the longer it stays down; a
// running clock ticks here between them.
import { h, setText } from "./dom";
import { clockText, scoreParts, type MatchMessage } from "./matchclock";

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

function eventNodes(): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>("[data-event-id]")];
}

function nodesOf(eventId: number): NodeListOf<HTMLElement> {
  return document.querySelectorAll<HTMLElement>(`[data-event-id="${eventId}"]`);
}

function render(match: MatchMessage, nowMs: number): void {
  const score = scoreParts(match);
  const clock = clockText(match, nowMs);
  for (const node of nodesOf(match.event_id)) {
    const wasLive = node.dataset.status === "in_play";
    node.dataset.status = match.status === "break" ? "in_play" : match.status;
    node.dataset.sport = match.sport;
    if (match.status === "scheduled" && !wasLive) continue;
    node.hidden = false;
    setText(node.querySelector("[data-score='home']"), score.home);
    setText(node.querySelector("[data-score='away']"), score.away);
    setText(node.querySelector("[data-clock]"), clock);
    const detail = node.querySelector<HTMLElement>("[data-score-detail]");
    if (detail !== null) setText(detail, score.detail);
  }
}

/** A match state from the stream or the fallback poll: the highest sequence per event wins. */
export function matchState(match: MatchMessage): void {
  const current = matches.get(match.event_id);
  if (current !== undefined && current.seq >= match.seq) return;
  matches.set(match.event_id, match);
  render(match, Date.now());
}

function applyLegacy(event: EventLive): void {
  for (const node of nodesOf(event.id)) {
    const wasLive = node.dataset.status === "in_play";
    node.dataset.status = event.status;
    if (event.status !== "in_play" && !wasLive) continue;
    setText(node.querySelector("[data-score='home']"), String(event.home_score));
    setText(node.querySelector("[data-score='away']"), String(event.away_score));
    setText(node.querySelector("[data-clock]"), event.clock);
  }
}

/** The score and clock of an event inside an open bet, shown once its match state is known. */
export function liveScore(eventId: number): HTMLElement {
  const node = h(
    "span",
    { class: "leg-live num", "data-event-id": eventId, hidden: true },
    h("span", { "data-score": "home" }),
    h("span", { "aria-hidden": "true", text: "–" }),
    h("span", { "data-score": "away" }),
    " ",
    h("span", { class: "clock", "data-clock": true }),
  );
  const known = matches.get(eventId);
  if (known !== undefined) queueMicrotask(() => render(known, Date.now()));
  return node;
}

/** The events the page shows (each row, card and scoreboard carries its event id). */
export function pageEvents(): number[] {
  const ids = eventNodes().map((n) => Number(n.dataset.eventId));
  return [...new Set(ids.filter((id) => Number.isInteger(id) && id > 0))];
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
    const response = await fetch(`/live/events?ids=${ids.join(",")}`, { credentials: "same-origin" });
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
