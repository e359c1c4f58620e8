// An event list that follows its query's shared channel: when an event kicks off, ends, is added,
// moved or has its market suspended by a trader, the channel says which markets joined, left or
// changed, and the list is fetched again and put in place, for visitors and punters alike, with no
// reload and no polling. The page's first paint is the list as served (a cache may have kept it).
import { type OddsClient, type Query, type QueryFrame } from "./protocol";

/** How long changes gather before the list is fetched again (a kick-off moves several at once). */
export const REFETCH_GATHER_MS = 150;

export interface LiveListOptions {
  client: OddsClient;
  /** After the list was put in place: show its prices, times and selections as the page does. */
  rendered: (root: HTMLElement) => void;
  fetchList?: (url: string) => Promise<string>;
  schedule?: (fn: () => void, ms: number) => void;
}

/** The headline markets a list shows (its price buttons'). */
export function listMarkets(root: ParentNode): number[] {
  const ids = [...root.querySelectorAll<HTMLElement>(".price[data-market]")].map((b) => Number(b.dataset.market));
  return [...new Set(ids.filter((id) => id > 0))].sort((a, b) => a - b);
}

/** The events a list shows. */
export function listEvents(root: ParentNode): number[] {
  const ids = [...root.querySelectorAll<HTMLElement>("[data-event-id]")].map((n) => Number(n.dataset.eventId));
  return [...new Set(ids.filter((id) => id > 0))];
}

/** Whether a query image says something the list as shown does not: a market the list shows that
 * the query no longer holds, or (for a list showing all its events, ``complete``) one it holds that
 * the list lacks. A list cut at its first events lacks the others by design. */
export function listDiffers(shown: number[], held: number[], complete: boolean): boolean {
  const holds = new Set(held);
  const shows = new Set(shown);
  return shown.some((m) => !holds.has(m)) || (complete && held.some((m) => !shows.has(m)));
}

export function listUrl(location: { pathname: string }, seq: number): string {
  return `${location.pathname}?fragment=listing&v=${seq}`;
}

/**
 * What finds an element of the list again once the list is drawn anew: a price by its selection,
 * a link by where it goes; null for anything else (focus then stays where the browser puts it).
 */
export function focusSelector(element: { tagName: string; getAttribute(name: string): string | null }): string | null {
  const selection = element.getAttribute("data-selection");
  if (selection !== null && /^\d+$/.test(selection)) return `[data-selection="${selection}"]`;
  const href = element.getAttribute("href");
  if (element.tagName === "A" && href !== null && /^\/[\w\-/?=&.%]*$/.test(href)) return `a[href="${href}"]`;
  return null;
}

export class LiveList {
  private pending: number | null = null;
  private timer = false;
  private fetching = false;
  // A pointer pressed in the list: a new list waits for its release, so the press and release land
  // on the same button (a list drawn between them would swallow the click).
  private pressed = false;
  private held: string | null = null;

  constructor(
    private readonly root: HTMLElement,
    private readonly options: LiveListOptions,
  ) {}

  start(): void {
    this.root.addEventListener("pointerdown", () => {
      this.pressed = true;
    });
    const release = (): void => {
      if (!this.pressed) return;
      this.pressed = false;
      const held = this.held;
      this.held = null;
      // After the click this release starts has run on the list as it is now.
      if (held !== null) window.setTimeout(() => this.replace(held), 0);
    };
    document.addEventListener("pointerup", release);
    document.addEventListener("pointercancel", release);
    this.follow();
  }

  private follow(): void {
    const raw = this.root.dataset.query;
    if (raw === undefined || raw === "") return;
    let query: Query;
    try {
      query = JSON.parse(raw) as Query;
    } catch {
      return;
    }
    this.options.client.followQuery(query, {
      onImage: (markets, seq) => {
        const complete = this.root.querySelector("[data-list-cut]") === null;
        if (listDiffers(listMarkets(this.root), markets, complete)) this.refetch(seq);
      },
      onChange: (frame: QueryFrame) => {
        if ((frame.added?.length ?? 0) + (frame.removed?.length ?? 0) + (frame.changed?.length ?? 0) > 0) {
          this.refetch(frame.seq);
        }
      },
    });
  }

  private refetch(seq: number): void {
    this.pending = Math.max(this.pending ?? 0, seq);
    if (this.timer || this.fetching) return;
    this.timer = true;
    (this.options.schedule ?? ((f, t) => window.setTimeout(f, t)))(() => {
      this.timer = false;
      void this.load();
    }, REFETCH_GATHER_MS);
  }

  private async load(): Promise<void> {
    const seq = this.pending;
    if (seq === null) return;
    this.pending = null;
    this.fetching = true;
    try {
      const fetchList =
        this.options.fetchList ??
        (async (url: string) => {
          const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } });
          if (!response.ok) throw new Error(`list answered ${response.status}`);
          return response.text();
        });
      const html = await fetchList(listUrl(window.location, seq));
      this.replace(html);
    } catch {
      // The next change fetches it again; the list as shown still streams its prices.
    } finally {
      this.fetching = false;
      if (this.pending !== null) this.refetch(this.pending);
    }
  }

  private replace(html: string): void {
    if (this.pressed) {
      this.held = html;
      return;
    }
    const before = listMarkets(this.root);
    const eventsBefore = listEvents(this.root);
    const active = document.activeElement;
    const refocus = active instanceof HTMLElement && this.root.contains(active) ? focusSelector(active) : null;
    const template = document.createElement("template");
    template.innerHTML = html;
    this.root.replaceChildren(template.content);
    if (refocus !== null) {
      const again = this.root.querySelector<HTMLElement>(refocus);
      again?.focus({ preventScroll: true });
    }
    const after = listMarkets(this.root);
    const eventsAfter = listEvents(this.root);
    const client = this.options.client;
    client.unwatch(before.filter((m) => !after.includes(m)));
    client.watch(after.filter((m) => !before.includes(m)));
    client.unfollow(eventsBefore.filter((e) => !eventsAfter.includes(e)));
    client.follow(eventsAfter.filter((e) => !eventsBefore.includes(e)));
    this.options.rendered(this.root);
  }
}
