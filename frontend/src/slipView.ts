// The bet slip on screen: drawn from the BetSlip model, kept live from the "slip" channel (logged
// in) or the public price stream (anonymous), and placing bets through POST /api/bets.
import { ApiError, type Bet, api, idempotencyKey, type PlaceBetRequest, type PricePolicy } from "./api";
import { ManagedChannel } from "./channels";
import { currencySymbol, formatMoney, parseStake } from "./decimal";
import { h, readJSON, setText, storage, writeJSON } from "./dom";
import type { OddsFormat } from "./odds";
import type { BetOffer } from "./contract/frames";
import { type BetDecision, HeldBets, withDecision, withOffer } from "./pending";
import { displayOdds, markSelected } from "./prices";
import type { MarketState, OddsClient, ViewFrame } from "./protocol";
import { refusalText } from "./refusals";
import { LIMITS } from "./rules";
import { liveScore, onEventStatus } from "./scores";
import { BetSlip, type Move, type NewLeg, type SlipLeg, type SlipLimits, type SlipMode } from "./slip";
import { moneyMoved } from "./wallet";

const SLIP_KEY = "sportsbook.slip";
const CHANNEL_KEY = "sportsbook.slipChannel";

const POLICIES: { value: PricePolicy; label: string }[] = [
  { value: "none", label: "Always ask me" },
  { value: "better", label: "Accept higher prices" },
  { value: "any", label: "Accept all price changes" },
];

/** The book's limits on a bet (reducers/rules.py, through rules.ts). */
export function pageLimits(): SlipLimits {
  return LIMITS;
}

type Notice = { kind: "error" | "info"; text: string; code?: string } | null;

interface Receipt {
  bet: Bet;
  names: string[];
}

/** The slip's legs of a bet the server holds, to put back if it refuses the bet for its price. */
interface HeldLegs {
  legs: SlipLeg[];
  mode: SlipMode;
  accaStake: string;
}

// Refusals after the in-play delay that give the selections back to the slip.
const GIVEN_BACK = new Set(["price_changed"]);

export interface SlipViewOptions {
  client: OddsClient;
  user: string;
  loginUrl: string;
  format: () => OddsFormat;
}

export class SlipView {
  readonly slip: BetSlip;
  private readonly body: HTMLElement;
  private readonly aside: HTMLElement;
  private readonly channel: ManagedChannel | null;
  private notice: Notice = null;
  private receipts: Receipt[] = [];
  private readonly held = new HeldBets();
  private readonly heldLegs = new Map<number, HeldLegs>();
  private ticker: ReturnType<typeof setInterval> | null = null;
  private placing = false;
  private readonly flashes = new Map<number, Move>();
  /** The channel's own view of the slip, for the page to check against ours. */
  serverSummary: ViewFrame["slip"] | null = null;

  constructor(private readonly options: SlipViewOptions) {
    this.slip = BetSlip.fromJSON(readJSON(storage("local"), SLIP_KEY), pageLimits());
    this.body = document.getElementById("slip-body") as HTMLElement;
    this.aside = document.getElementById("betslip") as HTMLElement;
    this.channel = this.loggedIn ? new ManagedChannel(options.client, CHANNEL_KEY, (f) => this.channelFrame(f)) : null;
  }

  /** The id of the slip's channel, when there is one. */
  get channelId(): string | null {
    return this.channel?.id ?? null;
  }

  get loggedIn(): boolean {
    return this.options.user !== "";
  }

  start(): void {
    document.addEventListener("click", (ev) => this.pageClick(ev));
    const toggle = document.querySelector<HTMLButtonElement>(".slip-toggle");
    toggle?.addEventListener("click", () => this.openDrawer(!document.body.classList.contains("slip-open")));
    this.aside.querySelector(".slip-close")?.addEventListener("click", () => this.openDrawer(false));
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && document.body.classList.contains("slip-open")) {
        this.openDrawer(false);
        toggle?.focus();
      }
    });
    onEventStatus((eventId, status) => {
      if (status === "finished") this.finished({ eventId }, "has finished");
    });
    window.addEventListener("storage", (ev) => {
      // Another tab changed the slip: follow it.
      if (ev.key !== SLIP_KEY) return;
      const other = BetSlip.fromJSON(readJSON(storage("local"), SLIP_KEY), this.slip.limits);
      this.slip.legs = other.legs;
      this.slip.mode = other.mode;
      this.slip.accaStake = other.accaStake;
      this.slip.policy = other.policy;
      this.slip.keepSelections = other.keepSelections;
      this.changed(false);
    });
    this.changed(false);
  }

  // --- live prices ---

  /** The price stream went down (prices may be stale: nothing can be placed) or came back. */
  streamState(down: boolean): void {
    if (this.slip.streamDown === down) return;
    this.slip.streamDown = down;
    // Errors from before the outage are out of date once the stream is back.
    if (!down && this.notice?.kind === "error") this.notice = null;
    this.refresh();
  }

  /** Selections whose match finished or whose market was resulted leave the slip, saying so. */
  private finished(which: { eventId?: number; marketId?: number }, what: string): void {
    const gone = this.slip.dropFinished(which);
    if (gone.length === 0) return;
    const events = [...new Set(gone.map((leg) => leg.event))];
    const names = gone.map((leg) => leg.selection).join(", ");
    const verb = gone.length === 1 ? "is" : "are";
    this.notice = { kind: "info", code: "finished", text: `${events.join(", ")} ${what}: ${names} ${verb} no longer in your slip.` };
    this.changed();
  }

  /** A public market frame (anonymous punters; the page's own prices otherwise). */
  market(state: MarketState): void {
    if (state.status === "closed" || state.status === "settled") {
      this.finished({ marketId: state.market_id }, "was resulted");
      return;
    }
    if (this.loggedIn) return; // the slip channel is the slip's source
    let touched = false;
    for (const leg of this.slip.legs) {
      if (leg.marketId !== state.market_id) continue;
      const selection = state.selections.find((s) => s.id === leg.selectionId);
      const suspended = !state.tradable || state.status !== "open" || selection?.status !== "active";
      this.noteMove(leg.selectionId, this.slip.livePrice(leg.selectionId, selection?.price ?? null, suspended));
      touched = true;
    }
    if (touched) this.refresh();
  }

  private channelFrame(frame: ViewFrame): void {
    if (frame.slip === undefined) return;
    this.serverSummary = frame.slip;
    this.aside.dataset.channelSeq = String(frame.seq);
    for (const summary of frame.slip.legs) {
      this.noteMove(summary.selection_id, this.slip.livePrice(summary.selection_id, summary.price, summary.suspended));
    }
    this.refresh();
  }

  private noteMove(selectionId: number, move: Move): void {
    if (move !== null) this.flashes.set(selectionId, move);
  }

  private watchedMarkets(): number[] {
    return [...new Set(this.slip.legs.map((leg) => leg.marketId))];
  }

  // --- changes ---

  /** After any change of the slip: save it, follow its markets, redraw. */
  private changed(structural = true): void {
    writeJSON(storage("local"), SLIP_KEY, this.slip);
    if (this.channel !== null) {
      const stake = parseStake(this.slip.accaStake, this.slip.limits);
      this.channel.set(
        this.slip.legs.length === 0
          ? null
          : {
              view: "slip",
              slip: this.slip.legs.map((leg) => ({ selection_id: leg.selectionId, market_id: leg.marketId })),
              stake: this.slip.mode === "accumulator" && stake.ok ? stake.value : null,
            },
      );
    } else {
      this.options.client.watch(this.watchedMarkets());
    }
    markSelected(new Set(this.slip.legs.map((leg) => leg.selectionId)));
    if (structural || this.body.querySelector(".slip-legs") === null) this.render();
    else this.refresh();
  }

  private pageClick(ev: MouseEvent): void {
    const target = ev.target as Element | null;
    const button = target?.closest<HTMLButtonElement>("button.price[data-selection]");
    if (button === null || button === undefined || button.disabled) return;
    const data = button.dataset;
    const leg: NewLeg = {
      selectionId: Number(data.selection),
      marketId: Number(data.market),
      eventId: Number(data.event),
      selection: data.selectionName ?? "",
      market: data.marketName ?? "",
      event: data.eventName ?? "",
      price: data.price ?? "",
    };
    if (!(leg.selectionId > 0 && leg.marketId > 0 && leg.price)) return;
    const added = this.slip.toggle(leg);
    this.notice = null;
    if (added) this.receipts = [];
    this.changed();
    if (added && this.slip.legs.length === 1 && window.matchMedia("(max-width: 1000px)").matches) {
      this.openDrawer(true);
    }
  }

  private openDrawer(open: boolean): void {
    document.body.classList.toggle("slip-open", open);
    document.querySelector(".slip-toggle")?.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) this.aside.querySelector<HTMLElement>(".slip-close")?.focus();
  }

  // --- drawing ---

  private price(price: string): string {
    return displayOdds(price, this.options.format());
  }

  /** Redraw everything, keeping the keyboard focus where it was. */
  render(): void {
    const focused = document.activeElement as HTMLElement | null;
    const focusId = focused !== null && this.body.contains(focused) ? focused.id : "";
    const caret = focused instanceof HTMLInputElement ? focused.selectionStart : null;
    this.body.replaceChildren(...this.draw());
    this.refresh();
    if (focusId) {
      const again = document.getElementById(focusId);
      again?.focus();
      if (again instanceof HTMLInputElement && caret !== null) again.setSelectionRange(caret, caret);
    }
  }

  private draw(): Node[] {
    const slip = this.slip;
    const count = String(slip.legs.length);
    for (const id of ["slip-count", "slip-toggle-count"]) setText(document.getElementById(id), count);
    this.aside.dataset.state = slip.legs.length === 0 ? "empty" : slip.mode;
    const nodes: Node[] = [];
    if (slip.legs.length === 0) {
      nodes.push(h("p", { class: "slip-empty", text: "Click a price to add a selection." }));
      nodes.push(...this.drawReceipts());
      return nodes;
    }
    if (slip.legs.length >= 2) nodes.push(this.drawTabs());
    nodes.push(h("ul", { class: "slip-legs" }, ...slip.legs.map((leg) => this.drawLeg(leg))));
    if (slip.mode === "accumulator") nodes.push(this.drawAccumulator());
    else if (slip.legs.length >= 2 && slip.sameEvent()) {
      nodes.push(h("p", { class: "slip-hint", text: "Selections from one event can only be backed as singles." }));
    }
    nodes.push(
      h(
        "dl",
        { class: "slip-summary" },
        h("div", {}, h("dt", { text: "Total stake" }), h("dd", { class: "num", "data-total-stake": "" })),
        h("div", {}, h("dt", { text: "Potential returns" }), h("dd", { class: "num", "data-total-return": "" })),
      ),
    );
    const policy = h("select", { id: "slip-policy" });
    for (const option of POLICIES) {
      policy.append(h("option", { value: option.value, text: option.label, selected: option.value === slip.policy }));
    }
    policy.addEventListener("change", () => {
      slip.setPolicy(policy.value as PricePolicy);
      this.changed(false);
    });
    nodes.push(h("div", { class: "policy" }, h("label", { for: "slip-policy", text: "When prices change" }), policy));
    const keep = h("input", { type: "checkbox", id: "slip-keep", checked: slip.keepSelections });
    keep.addEventListener("change", () => {
      slip.keepSelections = keep.checked;
      this.changed(false);
    });
    nodes.push(h("div", { class: "keep" }, keep, h("label", { for: "slip-keep", text: "Keep selections in the slip after placing" })));
    nodes.push(h("div", { class: "slip-alert", role: "alert", "aria-live": "assertive" }));
    const place = h("button", { type: "button", class: "button primary place", id: "slip-place" });
    place.addEventListener("click", () => void this.placeClicked());
    nodes.push(place);
    const clear = h("button", { type: "button", class: "link slip-clear", text: "Remove all" });
    clear.addEventListener("click", () => {
      this.slip.clear();
      this.notice = null;
      this.changed();
    });
    nodes.push(clear);
    nodes.push(...this.drawReceipts());
    return nodes;
  }

  private drawTabs(): HTMLElement {
    const tabs = h("div", { class: "slip-tabs", role: "group", "aria-label": "Bet type" });
    const modes: ["singles" | "accumulator", string][] = [
      ["singles", "Singles"],
      ["accumulator", this.slip.legs.length === 2 ? "Double" : this.slip.legs.length === 3 ? "Treble" : "Accumulator"],
    ];
    for (const [mode, label] of modes) {
      const disabled = mode === "accumulator" && !this.slip.accumulatorAllowed();
      const tab = h("button", {
        type: "button",
        id: `slip-mode-${mode}`,
        class: "slip-tab",
        "aria-pressed": this.slip.mode === mode ? "true" : "false",
        disabled,
        title: disabled ? "Selections from one event cannot be combined" : null,
        text: label,
      });
      tab.addEventListener("click", () => {
        this.slip.setMode(mode);
        this.notice = null;
        this.changed();
      });
      tabs.append(tab);
    }
    return tabs;
  }

  private drawLeg(leg: SlipLeg): HTMLElement {
    const remove = h("button", {
      type: "button",
      class: "icon-button leg-remove",
      "aria-label": `Remove ${leg.selection}`,
      text: "×",
    });
    remove.addEventListener("click", () => {
      this.slip.remove(leg.selectionId);
      this.notice = null;
      this.changed();
      document.getElementById("slip-place")?.focus();
    });
    const item = h(
      "li",
      { class: "slip-leg", "data-selection-id": leg.selectionId },
      h(
        "div",
        { class: "leg-top" },
        h("span", { class: "leg-selection", text: leg.selection }),
        h("span", { class: "leg-was num", "aria-hidden": "true" }),
        h("span", { class: "leg-price num", "data-leg-price": "" }),
        remove,
      ),
      h("div", { class: "leg-market", text: `${leg.market} · ${leg.event}` }),
      liveScore(leg.eventId),
      h("p", { class: "leg-notice", role: "status" }),
    );
    if (this.slip.mode === "singles") {
      const id = `stake-${leg.selectionId}`;
      const input = h("input", {
        id,
        class: "stake",
        inputmode: "decimal",
        autocomplete: "off",
        placeholder: "0.00",
        value: leg.stake,
        "aria-describedby": `return-${leg.selectionId} stake-error-${leg.selectionId}`,
      });
      input.addEventListener("input", () => {
        leg.stake = input.value;
        this.notice = null;
        this.changed(false);
      });
      item.append(
        h(
          "div",
          { class: "leg-stake" },
          h("label", { for: id, text: `Stake ${currencySymbol().trim()}` }),
          input,
          h("span", { class: "leg-return num", id: `return-${leg.selectionId}` }),
        ),
        h("p", { class: "stake-error", id: `stake-error-${leg.selectionId}`, "aria-live": "polite" }),
      );
    }
    return item;
  }

  private drawAccumulator(): HTMLElement {
    const input = h("input", {
      id: "acca-stake",
      class: "stake",
      inputmode: "decimal",
      autocomplete: "off",
      placeholder: "0.00",
      value: this.slip.accaStake,
      "aria-describedby": "stake-error-acca",
    });
    input.addEventListener("input", () => {
      this.slip.accaStake = input.value;
      this.notice = null;
      this.changed(false);
    });
    return h(
      "div",
      { class: "acca" },
      h(
        "div",
        { class: "acca-head" },
        h("span", { class: "acca-title", text: `${this.slip.legs.length}-fold accumulator` }),
        h("span", { class: "acca-odds num", "data-combined-odds": "" }),
      ),
      h("div", { class: "leg-stake" }, h("label", { for: "acca-stake", text: `Stake ${currencySymbol().trim()}` }), input),
      h("p", { class: "stake-error", id: "stake-error-acca", "aria-live": "polite" }),
    );
  }

  private drawReceipts(): Node[] {
    if (this.receipts.length === 0) return [];
    const list = h("ul", { class: "slip-receipts", "aria-live": "polite" });
    for (const { bet, names } of this.receipts) {
      const what = bet.kind === "accumulator" ? "Accumulator" : "Bet";
      const title =
        bet.status === "pending" ? `${what} pending` : bet.status === "rejected" ? `${what} not accepted` : `${what} placed`;
      list.append(
        h(
          "li",
          { class: "receipt", "data-bet-id": bet.id, "data-status": bet.status, tabindex: -1 },
          h("strong", { text: title }),
          ...(bet.status === "pending"
            ? [h("span", { class: "receipt-timer", role: "timer", "data-bet-id": bet.id, text: this.waitText(bet.id) })]
            : []),
          ...(bet.status === "pending" && bet.offer ? [this.drawOffer(bet.id, bet.offer)] : []),
          ...(bet.status === "rejected" && bet.reject
            ? [
                h("span", {
                  class: "receipt-reject",
                  text: `${refusalText(bet.reject.code, bet.reject.message, this.slip.limits)} Your stake is back in your balance.`,
                }),
              ]
            : []),
          h("span", { class: "receipt-legs", text: names.join(", ") }),
          h(
            "span",
            { class: "num" },
            `Stake ${formatMoney(bet.stake)} @ ${this.price(bet.odds)} · Returns ${formatMoney(bet.potential_return)}`,
          ),
          h("span", { class: "receipt-ref", text: `Ref. #${bet.id}` }),
        ),
      );
    }
    const link = h("a", { href: "/my-bets/", class: "link", text: "View my bets" });
    return [list, link];
  }

  /** A trader's offer on a referred bet, with its two answers. */
  private drawOffer(betId: number, offer: NonNullable<Bet["offer"]>): HTMLElement {
    const answer = (accept: boolean, text: string) => {
      const button = h("button", { type: "button", class: accept ? "button primary" : "button", text });
      button.addEventListener("click", () => void this.answerOffer(betId, accept));
      return button;
    };
    const at = offer.price !== null && offer.price !== undefined ? ` at ${this.price(offer.price)}` : "";
    return h(
      "div",
      { class: "receipt-offer", role: "group", "aria-label": `The trader's offer on bet ${betId}` },
      h("span", {
        text: `A trader offers a stake of ${formatMoney(offer.stake)}${at} · Returns ${formatMoney(offer.potential_return)}`,
      }),
      answer(true, "Take the offer"),
      answer(false, "Turn it down"),
    );
  }

  /** A trader offered another stake or price on a bet this slip placed (a ``bet.offered``
   * frame): shown with its answers, counted down from now. */
  offered(offer: BetOffer): void {
    const receipt = this.receipts.find((r) => r.bet.id === offer.id);
    if (receipt === undefined || receipt.bet.status !== "pending") return;
    receipt.bet = withOffer(receipt.bet, offer);
    this.held.holdFor(offer.id, offer.seconds);
    this.render();
    this.countdown();
  }

  /** The punter takes or turns down a trader's offer: the bet as the server answers it. */
  private async answerOffer(betId: number, accept: boolean): Promise<void> {
    const receipt = this.receipts.find((r) => r.bet.id === betId);
    if (receipt === undefined) return;
    try {
      const { bet } = await api.answerOffer(betId, accept);
      this.held.decided(betId);
      this.heldLegs.delete(betId);
      receipt.bet = bet;
      this.notice = null;
    } catch (error) {
      const failure = error instanceof ApiError ? error : new ApiError(0, "unknown", "Something went wrong. Try again.");
      this.notice = this.explain(failure);
    }
    moneyMoved();
    this.render();
    this.body.querySelector<HTMLElement>(`.receipt[data-bet-id="${betId}"]`)?.focus();
  }

  /** Update the live parts in place: prices, notices, returns, the place button. */
  refresh(): void {
    const slip = this.slip;
    for (const leg of slip.legs) {
      const item = this.body.querySelector<HTMLElement>(`.slip-leg[data-selection-id="${leg.selectionId}"]`);
      if (item === null) continue;
      const changed = leg.price !== leg.seen;
      item.dataset.state = leg.suspended ? "suspended" : changed ? "changed" : "open";
      const priceNode = item.querySelector<HTMLElement>(".leg-price");
      if (priceNode !== null) {
        priceNode.dataset.price = leg.price;
        setText(priceNode, this.price(leg.price));
        const move = this.flashes.get(leg.selectionId);
        if (move) {
          priceNode.classList.remove("up", "down");
          void priceNode.offsetWidth;
          priceNode.classList.add(move);
        }
      }
      setText(item.querySelector(".leg-was"), changed ? this.price(leg.seen) : "");
      const notice = leg.suspended
        ? "Suspended — this selection cannot be backed right now"
        : changed
          ? `Price changed from ${this.price(leg.seen)} to ${this.price(leg.price)}`
          : "";
      setText(item.querySelector(".leg-notice"), notice);
      const ret = slip.singleReturn(leg);
      setText(item.querySelector(".leg-return"), ret === null ? "" : `Returns ${formatMoney(ret)}`);
      this.stakeError(`stake-${leg.selectionId}`, `stake-error-${leg.selectionId}`, slip.stakeError(leg.selectionId));
    }
    if (slip.mode === "accumulator") this.stakeError("acca-stake", "stake-error-acca", slip.stakeError(null));
    this.flashes.clear();
    const odds = this.body.querySelector<HTMLElement>("[data-combined-odds]");
    if (odds !== null) {
      const combined = slip.combinedOdds() ?? "";
      odds.dataset.combinedOdds = combined;
      setText(odds, combined ? `@ ${this.price(combined)}` : "");
    }
    const totalStake = this.body.querySelector<HTMLElement>("[data-total-stake]");
    const totalReturn = this.body.querySelector<HTMLElement>("[data-total-return]");
    if (totalStake !== null) setText(totalStake, formatMoney(slip.totalStake()));
    if (totalReturn !== null) {
      totalReturn.dataset.totalReturn = slip.totalReturn();
      setText(totalReturn, formatMoney(slip.totalReturn()));
    }
    this.refreshAction();
  }

  /** The reason a typed stake cannot be placed, next to it (and announced: a polite live region). */
  private stakeError(inputId: string, errorId: string, message: string | null): void {
    const input = document.getElementById(inputId);
    const error = document.getElementById(errorId);
    if (input === null || error === null) return;
    if (message === null) input.removeAttribute("aria-invalid");
    else input.setAttribute("aria-invalid", "true");
    if ((error.textContent ?? "") !== (message ?? "")) setText(error, message ?? "");
  }

  private refreshAction(): void {
    const place = this.body.querySelector<HTMLButtonElement>("#slip-place");
    const alert = this.body.querySelector<HTMLElement>(".slip-alert");
    if (place === null || alert === null) return;
    const blockers = this.slip.blockers();
    const priceChanged = blockers.some((b) => b.code === "price_changed");
    const suspended = blockers.find((b) => b.code === "suspended");
    const offline = blockers.find((b) => b.code === "offline");
    let kind = "";
    let code = "";
    let text = "";
    if (offline !== undefined) {
      [kind, code, text] = ["error", "offline", `${offline.message}. You can place bets again when it is back.`];
    } else if (this.notice !== null) {
      [kind, code, text] = [this.notice.kind, this.notice.code ?? "", this.notice.text];
    } else if (suspended !== undefined) {
      [kind, code, text] = ["error", "suspended", `${suspended.message}. Remove it or wait for the market to reopen.`];
    } else if (priceChanged) {
      [kind, code, text] = ["info", "price_changed", "Prices have changed. Accept the new prices to place your bet."];
    }
    // Touch the live region only when its message changes, so it is announced once.
    if (alert.dataset.kind !== kind || alert.dataset.code !== code || alert.textContent !== text) {
      alert.dataset.kind = kind;
      alert.dataset.code = code;
      alert.replaceChildren(...(text ? [h("p", { text })] : []));
    }
    place.dataset.action = "place";
    if (!this.loggedIn) {
      place.dataset.action = "login";
      place.disabled = false;
      setText(place, "Log in to place bets");
    } else if (this.placing) {
      place.disabled = true;
      setText(place, "Placing…");
    } else if (offline !== undefined) {
      place.disabled = true;
      setText(place, "Place bet: prices paused");
    } else if (priceChanged && suspended === undefined) {
      place.dataset.action = "accept";
      place.disabled = false;
      setText(place, "Accept price changes");
    } else {
      place.disabled = blockers.length > 0;
      const stake = this.slip.totalStake();
      setText(place, stake === "0.00" ? "Place bet" : `Place bet ${formatMoney(stake)}`);
    }
  }

  // --- placing ---

  private async placeClicked(): Promise<void> {
    const place = this.body.querySelector<HTMLButtonElement>("#slip-place");
    const action = place?.dataset.action;
    if (action === "login") {
      window.location.href = document.body.dataset.loginUrl ?? "/login/";
      return;
    }
    if (action === "accept") {
      this.slip.acceptChanges();
      this.notice = null;
      this.changed(false);
      return;
    }
    if (this.placing || this.slip.blockers().length > 0) return;
    const requests = this.slip.requests(idempotencyKey);
    if (requests.length === 0) return;
    this.placing = true;
    this.notice = null;
    this.refreshAction();
    const placed: Receipt[] = [];
    let failure: ApiError | null = null;
    for (const request of requests) {
      try {
        const { bet } = await this.send(request.body);
        this.held.hold(bet);
        if (bet.status === "pending") {
          const legs = request.legs.flatMap((id) => this.slip.legs.filter((leg) => leg.selectionId === id)).map((leg) => ({ ...leg }));
          this.heldLegs.set(bet.id, { legs, mode: this.slip.mode, accaStake: this.slip.accaStake });
        }
        placed.push({ bet, names: request.legs.map((id) => this.slip.leg(id)?.selection ?? "") });
        this.slip.placed(request.legs);
      } catch (error) {
        failure = error instanceof ApiError ? error : new ApiError(0, "unknown", "Something went wrong. Try again.");
        if (failure.code === "price_changed" && failure.body?.selections) {
          this.slip.priceRejected(failure.body.selections);
        }
        break;
      }
    }
    this.placing = false;
    this.receipts = placed;
    this.notice = failure === null ? null : this.explain(failure);
    if (placed.length > 0) moneyMoved();
    this.changed();
    if (placed.length > 0) this.body.querySelector<HTMLElement>(".receipt")?.focus();
    if (this.held.size > 0) this.countdown();
  }

  // --- bets held by the in-play delay ---

  /** A held bet was decided (a bet.decided frame, or looked up when the frame did not come). */
  decided(decision: BetDecision): void {
    this.held.decided(decision.id);
    const legs = this.heldLegs.get(decision.id);
    this.heldLegs.delete(decision.id);
    if (legs !== undefined && decision.status === "rejected" && GIVEN_BACK.has(decision.reject?.code ?? "")) {
      this.giveBack(legs);
    }
    const receipt = this.receipts.find((r) => r.bet.id === decision.id);
    if (receipt === undefined || receipt.bet.status !== "pending") {
      if (legs !== undefined) this.render();
      return;
    }
    receipt.bet = withDecision(receipt.bet, decision);
    this.render();
  }

  /** The selections of a bet refused for its price go back in the slip at the price the punter
   * took, with the price now beside it to accept (from the page, then the stream). */
  private giveBack(held: HeldLegs): void {
    const prices = new Map<number, string>();
    for (const leg of held.legs) {
      const price = document.querySelector<HTMLElement>(`.price[data-selection="${leg.selectionId}"]`)?.dataset.price;
      if (price) prices.set(leg.selectionId, price);
    }
    const back = this.slip.restore(held.legs, held.mode, held.accaStake, prices);
    if (back.length === 0) return;
    this.notice = {
      kind: "info",
      code: "price_changed",
      text: "The price moved while your bet was held, so it was not placed. Your selections are back in the slip: accept the new price to place it again.",
    };
    this.changed();
  }

  /** Tick the countdowns every second until every held bet is decided. */
  private countdown(): void {
    if (this.ticker !== null) return;
    this.ticker = setInterval(() => {
      for (const timer of this.body.querySelectorAll<HTMLElement>(".receipt-timer")) {
        setText(timer, this.waitText(Number(timer.dataset.betId)));
      }
      for (const id of this.held.overdue()) void this.lookUp(id);
      if (this.held.size === 0 && this.ticker !== null) {
        clearInterval(this.ticker);
        this.ticker = null;
      }
    }, 1000);
  }

  private waitText(betId: number): string {
    const left = this.held.secondsLeft(betId);
    const offered = this.receipts.some((r) => r.bet.id === betId && r.bet.status === "pending" && r.bet.offer);
    if (offered) return left === null || left === 0 ? "The offer has run out" : `Answer in ${left} s`;
    return left === null || left === 0 ? "Deciding…" : `Decided in ${left} s`;
  }

  /** The decision of a bet whose frame did not arrive (a reconnect in between): from GET /api/bets. */
  private async lookUp(betId: number): Promise<void> {
    this.held.decided(betId); // asked once; the answer below settles it
    try {
      const [open, settled] = await Promise.all([api.bets("open"), api.bets("settled")]);
      const bet = [...open.bets, ...settled.bets].find((b) => b.id === betId);
      if (bet !== undefined && bet.status !== "pending") {
        this.decided({ id: bet.id, status: bet.status, reject: bet.reject ?? null });
        if (bet.status === "rejected") moneyMoved();
      } else if (bet?.offer) {
        // A trader's offer the frame did not bring: shown, counted down by this clock.
        const receipt = this.receipts.find((r) => r.bet.id === bet.id);
        if (receipt !== undefined) receipt.bet = bet;
        this.held.holdFor(bet.id, Math.ceil((bet.offer.until - Date.now()) / 1000));
        this.render();
      } else if (bet !== undefined) {
        this.held.hold(bet); // not decided yet: wait another round
      }
    } catch {
      // Offline: My bets shows the outcome once the connection is back.
    }
  }

  /** POST the bet; a network failure is retried once with the same idempotency key. */
  private async send(body: PlaceBetRequest): Promise<{ bet: Bet }> {
    try {
      return await api.placeBet(body);
    } catch (error) {
      if (error instanceof ApiError && error.status === 0) return api.placeBet(body);
      throw error;
    }
  }

  private explain(error: ApiError): Notice {
    return { kind: "error", text: refusalText(error.code, error.message, this.slip.limits), code: error.code };
  }

  /** Redraw prices after the odds format changed or a list was drawn anew (its buttons marked again). */
  reformat(): void {
    markSelected(new Set(this.slip.legs.map((leg) => leg.selectionId)));
    this.render();
  }
}
