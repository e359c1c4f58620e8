// My bets: open and settled bets from GET /api/bets, live cash-out values from a "bets" channel,
// and cash-out through POST /api/bets/<id>/cash-out at the value the punter saw.
import { ApiError, type Bet, api } from "./api";
import { isCashOutPolicy, storeCashOutPolicy, storedCashOutPolicy } from "./cashout";
import { ManagedChannel } from "./channels";
import { formatMoney } from "./decimal";
import { h, setText, storage } from "./dom";
import type { OddsFormat } from "./odds";
import { displayOdds } from "./prices";
import { liveScore } from "./scores";
import type { OddsClient, ViewFrame } from "./protocol";
import { GENERIC_REFUSAL, refusalText } from "./refusals";
import { pageLimits } from "./slipView";
import { moneyMoved } from "./wallet";

const STATUS: Record<Bet["status"], string> = {
  pending: "Pending",
  accepted: "Open",
  rejected: "Rejected",
  won: "Won",
  lost: "Lost",
  void: "Void",
  cashed_out: "Cashed out",
};

const RESULT: Record<string, string> = { undecided: "", won: "Won", lost: "Lost", void: "Void" };

export class MyBetsPage {
  private open: Bet[] = [];
  private settled: Bet[] = [];
  private readonly quotes = new Map<number, string | null>();
  private readonly messages = new Map<number, { kind: "error" | "info"; text: string }>();
  private readonly busy = new Set<number>();
  /** Bets whose cash-out the punter is confirming, with the value they are asked to confirm. */
  private readonly confirming = new Map<number, string>();
  private readonly channel: ManagedChannel;
  private readonly openPanel = document.getElementById("bets-open") as HTMLElement;
  private readonly settledPanel = document.getElementById("bets-settled") as HTMLElement;

  constructor(
    client: OddsClient,
    private readonly format: () => OddsFormat,
  ) {
    this.channel = new ManagedChannel(client, "sportsbook.betsChannel", (frame) => this.frame(frame));
  }

  start(): void {
    this.tabs();
    this.cashOutSetting();
    void this.load();
    document.addEventListener("sportsbook:money", () => void this.load());
    // A leg decided: the bets view must count it (reloaded with the legs' results).
    document.addEventListener("sportsbook:bets", () => void this.load());
  }

  /** The punter's cash-out tolerance: a select on the page, remembered in the browser. */
  private cashOutSetting(): void {
    const select = document.getElementById("cash-out-accept") as HTMLSelectElement | null;
    if (select === null) return;
    select.value = storedCashOutPolicy(storage("local"));
    select.addEventListener("change", () => {
      if (isCashOutPolicy(select.value)) storeCashOutPolicy(storage("local"), select.value);
    });
  }

  private tabs(): void {
    const tabs = [...document.querySelectorAll<HTMLButtonElement>('[role="tab"]')];
    const select = (tab: HTMLButtonElement) => {
      for (const other of tabs) {
        const on = other === tab;
        other.setAttribute("aria-selected", on ? "true" : "false");
        other.tabIndex = on ? 0 : -1;
        const panel = document.getElementById(other.getAttribute("aria-controls") ?? "");
        if (panel !== null) panel.hidden = !on;
      }
    };
    tabs.forEach((tab, index) => {
      tab.addEventListener("click", () => select(tab));
      tab.addEventListener("keydown", (ev) => {
        if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
        const next = tabs[(index + (ev.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
        if (next !== undefined) {
          select(next);
          next.focus();
        }
      });
    });
  }

  async load(): Promise<void> {
    try {
      const [open, settled] = await Promise.all([api.bets("open"), api.bets("settled")]);
      this.open = open.bets.filter((b) => b.status === "accepted" || b.status === "pending");
      this.settled = settled.bets;
      for (const bet of this.open) {
        if (!this.quotes.has(bet.id)) this.quotes.set(bet.id, bet.cash_out?.available ? bet.cash_out.quote : null);
      }
    } catch (error) {
      const text = error instanceof ApiError && error.status === 0 ? refusalText("network", "", pageLimits()) : "Your bets could not be loaded. Reload the page to try again.";
      this.openPanel.replaceChildren(h("p", { class: "form-error", text }));
      return;
    }
    const live = this.open.filter((b) => b.status === "accepted");
    this.channel.set(
      live.length === 0
        ? null
        : {
            view: "bets",
            bets: live.map((bet) => ({
              bet_id: bet.id,
              stake: bet.stake,
              legs: bet.legs.map((leg) => ({
                selection_id: leg.selection_id,
                market_id: leg.market_id,
                price: leg.price,
                result: leg.result,
              })),
            })),
          },
      { now: true },
    );
    this.render();
  }

  private frame(frame: ViewFrame): void {
    if (frame.bets === undefined) return;
    for (const item of frame.bets) {
      const old = this.quotes.get(item.bet_id);
      this.quotes.set(item.bet_id, item.cash_out);
      if (old !== item.cash_out) this.messages.delete(item.bet_id);
      const asked = this.confirming.get(item.bet_id);
      if (asked !== undefined && asked !== item.cash_out) this.requote(item.bet_id, item.cash_out);
      this.refreshCashOut(item.bet_id);
    }
  }

  render(): void {
    setText(document.getElementById("open-count"), this.open.length > 0 ? String(this.open.length) : "");
    this.openPanel.dataset.state = "ready";
    this.settledPanel.dataset.state = "ready";
    this.openPanel.replaceChildren(
      ...(this.open.length > 0
        ? this.open.map((bet) => this.card(bet))
        : [h("p", { class: "empty", text: "No open bets. Pick a price to get started." })]),
    );
    this.settledPanel.replaceChildren(
      ...(this.settled.length > 0
        ? this.settled.map((bet) => this.card(bet))
        : [h("p", { class: "empty", text: "No settled bets yet." })]),
    );
    for (const bet of this.open) this.refreshCashOut(bet.id);
  }

  private card(bet: Bet): HTMLElement {
    const fmt = this.format();
    const title = bet.kind === "accumulator" ? `${bet.legs.length}-fold accumulator` : (bet.legs[0]?.selection ?? "Single");
    const placed = new Date(bet.placed_at);
    const card = h(
      "article",
      { class: "bet-card", "data-bet-id": bet.id, "data-status": bet.status },
      h(
        "header",
        { class: "bet-head" },
        h("h3", { text: title }),
        h("span", { class: `bet-status status-${bet.status}`, text: STATUS[bet.status] }),
      ),
      h(
        "ul",
        { class: "bet-legs" },
        ...bet.legs.map((leg) =>
          h(
            "li",
            { "data-result": leg.result },
            h("span", { class: "leg-selection", text: leg.selection }),
            h("span", { class: "leg-price num", text: displayOdds(leg.price, fmt) }),
            h("span", { class: "leg-market", text: `${leg.market} · ${leg.event}` }),
            bet.status === "accepted" ? liveScore(leg.event_id) : null,
            RESULT[leg.result] ? h("span", { class: `leg-result result-${leg.result}`, text: RESULT[leg.result] }) : null,
          ),
        ),
      ),
      h(
        "dl",
        { class: "bet-money" },
        h("div", {}, h("dt", { text: "Stake" }), h("dd", { class: "num", text: formatMoney(bet.stake) })),
        h("div", {}, h("dt", { text: "Odds" }), h("dd", { class: "num", text: displayOdds(bet.odds, fmt) })),
        bet.status === "accepted" || bet.status === "pending"
          ? h("div", {}, h("dt", { text: "Returns" }), h("dd", { class: "num", text: formatMoney(bet.potential_return) }))
          : h("div", {}, h("dt", { text: "Paid" }), h("dd", { class: "num", "data-payout": bet.payout, text: formatMoney(bet.payout) })),
      ),
      h(
        "footer",
        { class: "bet-foot" },
        h("time", { datetime: placed.toISOString(), text: placed.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" }) }),
        h("span", { class: "bet-ref", text: `Ref. #${bet.id}` }),
      ),
    );
    if (bet.reject) {
      card.append(h("p", { class: "bet-reject", text: refusalText(bet.reject.code, bet.reject.message, pageLimits()) }));
    }
    if (bet.status === "pending" && bet.offer) {
      const offer = bet.offer;
      const answer = (accept: boolean, text: string) => {
        const button = h("button", { type: "button", class: accept ? "button primary" : "button", text });
        button.addEventListener("click", () => void this.answerOffer(bet.id, accept));
        return button;
      };
      const at = offer.price !== null && offer.price !== undefined ? ` at ${displayOdds(offer.price, fmt)}` : "";
      const until = new Date(offer.until);
      card.append(
        h(
          "div",
          { class: "bet-offer", role: "group", "aria-label": `The trader's offer on bet ${bet.id}` },
          h("p", {
            text: `A trader offers a stake of ${formatMoney(offer.stake)}${at}, returning ${formatMoney(offer.potential_return)}. Answer by ${until.toLocaleTimeString("en-GB")}.`,
          }),
          answer(true, "Take the offer"),
          answer(false, "Turn it down"),
          h("p", { class: "bet-offer-note", role: "status" }),
        ),
      );
    }
    if (bet.status === "void" && bet.void_reason) {
      card.append(h("p", { class: "bet-void-reason", text: `Voided by the bookmaker: ${bet.void_reason}. Your stake was returned.` }));
    }
    if (bet.status === "accepted") {
      const button = h("button", { type: "button", class: "button cash-out", "data-cash-out": bet.id });
      button.addEventListener("click", () => this.askToConfirm(bet.id));
      const yes = h("button", { type: "button", class: "button cash-out-yes", "data-confirm": bet.id });
      yes.addEventListener("click", () => void this.cashOut(bet));
      const no = h("button", { type: "button", class: "button cash-out-no", text: "Keep bet" });
      no.addEventListener("click", () => {
        this.confirming.delete(bet.id);
        this.messages.delete(bet.id);
        this.refreshCashOut(bet.id);
        card.querySelector<HTMLButtonElement>(".cash-out")?.focus();
      });
      const confirm = h(
        "div",
        { class: "cash-out-confirm", role: "group", "aria-label": "Confirm cash out", hidden: true },
        h("p", { class: "cash-out-question", "aria-live": "polite" }),
        yes,
        no,
      );
      card.append(h("div", { class: "cash-out-row" }, button, confirm, h("p", { class: "cash-out-note", role: "status" })));
    }
    return card;
  }

  /** The punter takes or turns down a trader's offer; the bets are read again either way. */
  private async answerOffer(betId: number, accept: boolean): Promise<void> {
    try {
      await api.answerOffer(betId, accept);
    } catch (error) {
      const note = this.openPanel.querySelector<HTMLElement>(`.bet-card[data-bet-id="${betId}"] .bet-offer-note`);
      const text = error instanceof ApiError ? refusalText(error.code, error.message, pageLimits()) : "Something went wrong. Try again.";
      setText(note, text);
      return;
    }
    moneyMoved();
    await this.load();
  }

  private refreshCashOut(betId: number): void {
    const card = this.openPanel.querySelector<HTMLElement>(`.bet-card[data-bet-id="${betId}"]`);
    const button = card?.querySelector<HTMLButtonElement>(".cash-out");
    if (card === null || card === undefined || button === null || button === undefined) return;
    const quote = this.quotes.get(betId) ?? null;
    const asked = this.confirming.get(betId);
    button.dataset.quote = quote ?? "";
    button.hidden = asked !== undefined;
    button.disabled = quote === null || this.busy.has(betId);
    const confirm = card.querySelector<HTMLElement>(".cash-out-confirm");
    if (confirm !== null) {
      confirm.hidden = asked === undefined;
      if (asked !== undefined) {
        setText(confirm.querySelector(".cash-out-question"), `Cash out this bet for ${formatMoney(asked)}?`);
        const yes = confirm.querySelector<HTMLButtonElement>(".cash-out-yes");
        if (yes !== null) {
          yes.dataset.quote = asked;
          yes.disabled = this.busy.has(betId);
          setText(yes, this.busy.has(betId) ? "Cashing out…" : `Confirm ${formatMoney(asked)}`);
        }
      }
    }
    setText(
      button,
      this.busy.has(betId) ? "Cashing out…" : quote === null ? "Cash out unavailable" : `Cash out ${formatMoney(quote)}`,
    );
    const note = card.querySelector<HTMLElement>(".cash-out-note");
    const message = this.messages.get(betId);
    if (note !== null) {
      note.dataset.kind = message?.kind ?? "";
      setText(note, message?.text ?? (quote === null ? "Cash out returns when every market is open." : ""));
    }
  }

  /** The punter asked to cash out: ask them to confirm the value quoted now. */
  private askToConfirm(betId: number): void {
    const quote = this.quotes.get(betId);
    if (quote === null || quote === undefined || this.busy.has(betId)) return;
    this.confirming.set(betId, quote);
    this.messages.delete(betId);
    this.refreshCashOut(betId);
    this.openPanel.querySelector<HTMLButtonElement>(`.cash-out-yes[data-confirm="${betId}"]`)?.focus();
  }

  /** The value moved while the punter was confirming: ask again at the new one, or withdraw the offer. */
  private requote(betId: number, quote: string | null): void {
    if (quote === null) {
      this.confirming.delete(betId);
      this.messages.set(betId, { kind: "info", text: "Cash out is not available on this bet right now." });
    } else {
      this.confirming.set(betId, quote);
      this.messages.set(betId, { kind: "info", text: `The value changed to ${formatMoney(quote)}. Confirm the new value or keep your bet.` });
    }
    this.refreshCashOut(betId);
  }

  private async cashOut(bet: Bet): Promise<void> {
    const quote = this.confirming.get(bet.id);
    if (quote === null || quote === undefined || this.busy.has(bet.id)) return;
    this.busy.add(bet.id);
    this.messages.delete(bet.id);
    this.refreshCashOut(bet.id);
    try {
      await api.cashOut(bet.id, quote, storedCashOutPolicy(storage("local")));
      this.busy.delete(bet.id);
      this.quotes.delete(bet.id);
      this.confirming.delete(bet.id);
      moneyMoved(); // reloads the lists and the balance
    } catch (error) {
      this.busy.delete(bet.id);
      if (error instanceof ApiError && error.code === "quote_changed") {
        const fresh = error.body?.quote ?? null;
        this.quotes.set(bet.id, fresh);
        this.requote(bet.id, fresh);
        return;
      }
      this.confirming.delete(bet.id);
      const text = error instanceof ApiError ? refusalText(error.code, error.message, pageLimits()) : GENERIC_REFUSAL;
      this.messages.set(bet.id, { kind: "error", text });
      this.refreshCashOut(bet.id);
    }
  }
}
