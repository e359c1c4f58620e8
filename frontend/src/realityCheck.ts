// The reality check and the session time limit on every page a punter bets from. The server says
// when the next check is due (GET /api/play, in seconds from now) and a timer waits for it; a bet
// refused with `reality_check` opens the dialog at once. The dialog shows the time played and the
// session's net result; "Continue" acknowledges it (POST /api/play/reality-check: bets are taken
// again), "Stop and log out" logs out. Escape does not skip it. When the session's time limit is
// reached, the page is reloaded: the server signs the punter out and the login page says why.
import { apiRequest, ApiError } from "./api";
import type { PlayOut, PlaySessionOut } from "./contract/api";
import { formatMoney } from "./decimal";

/** The event a refused request raises on `window` with the refusal's code (api.ts). */
export const ACCOUNT_REFUSAL_EVENT = "sportsbook:account-refusal";
const LOGIN_ENDED = "/login/?ended=session_limit";
// A timer fires this long after the due time, so the server agrees the check is due.
const SLACK_MS = 500;
// Browsers run a timer of more than about 24.8 days at once; nothing here waits that long.
const MAX_WAIT_MS = 2 ** 31 - 1;

/** "1 hour 5 minutes", "45 minutes", "0 minutes": a time played as the dialog says it. */
export function playedText(seconds: number): string {
  const minutes = Math.max(0, Math.floor(seconds / 60));
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  const parts: string[] = [];
  if (hours > 0) parts.push(`${hours} hour${hours === 1 ? "" : "s"}`);
  if (rest > 0 || hours === 0) parts.push(`${rest} minute${rest === 1 ? "" : "s"}`);
  return parts.join(" ");
}

/** "+£12.50", "−£10.00", "£0.00": the session's net result, signed. */
export function netText(net: string, currency: string): string {
  const text = formatMoney(net, currency);
  return text.startsWith("−") || /^[^1-9]*0\.00$/.test(text) ? text : `+${text}`;
}

/** Milliseconds until the page should ask again (a check due, or the time limit reached), or
 * null when neither will come in this session. */
export function nextWakeMs(session: PlaySessionOut): number | null {
  const waits = [session.check_due_in_s, session.time_left_s].filter((s): s is number => s !== null);
  if (waits.length === 0) return null;
  return Math.min(MAX_WAIT_MS, Math.min(...waits) * 1000 + SLACK_MS);
}

export class RealityCheck {
  private timer: number | undefined;
  private waiting = false;

  constructor(private readonly dialog: HTMLDialogElement) {}

  start(): void {
    // Escape (the dialog's cancel) does not skip the check; a browser that closes it anyway
    // (a second Escape) finds it open again while the check waits.
    this.dialog.addEventListener("cancel", (event) => event.preventDefault());
    this.dialog.addEventListener("close", () => {
      if (this.waiting) this.dialog.showModal();
    });
    this.dialog.querySelector<HTMLButtonElement>("[data-reality-continue]")?.addEventListener("click", () => {
      void this.acknowledge();
    });
    window.addEventListener(ACCOUNT_REFUSAL_EVENT, (event) => {
      const code = (event as CustomEvent<string>).detail;
      if (code === "reality_check") void this.refresh();
      if (code === "session_limit") window.location.reload();
    });
    void this.refresh();
  }

  private async refresh(): Promise<void> {
    try {
      this.apply(await apiRequest<PlayOut>("GET", "/api/play"));
    } catch (error) {
      this.failed(error);
    }
  }

  private async acknowledge(): Promise<void> {
    const error = this.dialog.querySelector<HTMLElement>("[data-reality-error]");
    if (error !== null) error.textContent = "";
    try {
      const play = await apiRequest<PlayOut>("POST", "/api/play/reality-check");
      if (play.session !== null && play.session.check_pending) {
        this.show(play.session);
        return;
      }
      this.waiting = false;
      this.dialog.close();
      this.apply(play);
    } catch (failure) {
      if (error !== null) error.textContent = failure instanceof ApiError ? failure.message : "Try again.";
      this.failed(failure);
    }
  }

  private failed(error: unknown): void {
    if (error instanceof ApiError && error.code === "session_limit") window.location.assign(LOGIN_ENDED);
  }

  private apply(play: PlayOut): void {
    window.clearTimeout(this.timer);
    const session = play.session;
    if (session === null) return;
    if (session.time_left_s === 0) {
      window.location.reload();
      return;
    }
    if (session.check_pending) this.show(session);
    const wake = nextWakeMs(session);
    if (wake !== null && !session.check_pending) this.timer = window.setTimeout(() => void this.refresh(), wake);
  }

  private show(session: PlaySessionOut): void {
    this.waiting = true;
    const set = (name: string, text: string) => {
      const node = this.dialog.querySelector<HTMLElement>(`[data-reality-${name}]`);
      if (node !== null) node.textContent = text;
    };
    set("played", playedText(session.played_s));
    set("net", netText(session.net_result, session.currency));
    set("staked", formatMoney(session.staked, session.currency));
    set("returned", formatMoney(session.returned, session.currency));
    if (!this.dialog.open) this.dialog.showModal();
  }
}

/** The reality check of a signed-in page, if the page has its dialog. */
export function startRealityCheck(): void {
  const dialog = document.getElementById("reality-check");
  if (dialog instanceof HTMLDialogElement) new RealityCheck(dialog).start();
}
