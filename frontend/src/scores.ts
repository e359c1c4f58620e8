// Scores and the match clock of the events on the page. The price stream carries prices and
// market status only, so these are read from /live/events every few seconds.
import { setText } from "./dom";

const POLL_MS = 5000;

interface EventLive {
  id: number;
  status: string;
  home_score: number;
  away_score: number;
  clock: string;
}

function eventNodes(): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>("[data-event-id]")];
}

function apply(event: EventLive): void {
  for (const node of document.querySelectorAll<HTMLElement>(`[data-event-id="${event.id}"]`)) {
    const wasLive = node.dataset.status === "in_play";
    node.dataset.status = event.status;
    if (event.status !== "in_play" && !wasLive) continue;
    setText(node.querySelector("[data-score='home']"), String(event.home_score));
    setText(node.querySelector("[data-score='away']"), String(event.away_score));
    setText(node.querySelector("[data-clock]"), event.clock);
  }
}

export function startScores(): void {
  const ids = eventNodes().map((n) => n.dataset.eventId);
  if (ids.length === 0) return;
  const poll = async (): Promise<void> => {
    if (document.hidden) return;
    try {
      const response = await fetch(`/live/events?ids=${ids.join(",")}`, { credentials: "same-origin" });
      if (!response.ok) return;
      const body = (await response.json()) as { events: EventLive[] };
      for (const event of body.events) apply(event);
    } catch {
      // The next poll tries again.
    }
  };
  window.setInterval(() => void poll(), POLL_MS);
}
