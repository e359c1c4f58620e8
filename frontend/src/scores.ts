// Scores and the match clock of the events on the page, in each sport's own terms. Match states
// arrive on the page's channels (``view.match``, and the image's ``matches``) and, for pages
// without a channel, from /live/events every few seconds; a running clock ticks here between them.
import { h, setText } from "./dom";
import { clockText, scoreParts, type MatchMessage } from "./matchclock";

const POLL_MS = 5000;
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

export function startScores(): void {
  window.setInterval(() => {
    const now = Date.now();
    for (const match of matches.values()) render(match, now);
  }, TICK_MS);
  const ids = eventNodes().map((n) => n.dataset.eventId);
  if (ids.length === 0) return;
  const poll = async (): Promise<void> => {
    if (document.hidden) return;
    try {
      const response = await fetch(`/live/events?ids=${ids.join(",")}`, { credentials: "same-origin" });
      if (!response.ok) return;
      const body = (await response.json()) as { events: EventLive[] };
      for (const event of body.events) {
        if (event.match) matchState(event.match);
        else if (!matches.has(event.id)) applyLegacy(event);
      }
    } catch {
      // The next poll tries again.
    }
  };
  void poll();
  window.setInterval(() => void poll(), POLL_MS);
}
