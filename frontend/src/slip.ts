// The bet slip as plain data: legs, stakes, singles or accumulator, live prices and the policy for
// price changes. No DOM here; slipView.ts draws it and talks to the server.
import type { ApiErrorBody, PlaceBetRequest, PricePolicy } from "./api";
import { combinedOdds, compareDecimal, formatMoney, parseStake, potentialReturn, type StakeLimits, sumMoney } from "./decimal";

/** The book's limits on a bet (``LIMITS`` of rules.ts, from reducers/rules.py). */
export interface SlipLimits extends StakeLimits {
  maxReturn: string;
  maxLegs: number;
}

export interface SlipLeg {
  selectionId: number;
  marketId: number;
  eventId: number;
  selection: string;
  market: string;
  event: string;
  /** The live price. */
  price: string;
  /** The price the punter accepted: sent as the price seen when the bet is placed. */
  seen: string;
  suspended: boolean;
  /** The single's stake as typed. */
  stake: string;
}

export type NewLeg = Omit<SlipLeg, "seen" | "stake" | "suspended"> & { suspended?: boolean };
export type SlipMode = "singles" | "accumulator";
export type Move = "up" | "down" | null;

export interface Blocker {
  code: "empty" | "offline" | "suspended" | "price_changed" | "stake" | "same_event" | "too_many" | "return_too_high";
  message: string;
  selectionId?: number;
}

export class BetSlip {
  legs: SlipLeg[] = [];
  mode: SlipMode = "singles";
  accaStake = "";
  policy: PricePolicy = "none";
  /** Keep the selections in the slip after placing them (the stakes are cleared). */
  keepSelections = false;
  /** The price stream is down: prices shown may be stale, so nothing can be placed. */
  streamDown = false;

  constructor(readonly limits: SlipLimits) {}

  has(selectionId: number): boolean {
    return this.legs.some((leg) => leg.selectionId === selectionId);
  }

  leg(selectionId: number): SlipLeg | undefined {
    return this.legs.find((leg) => leg.selectionId === selectionId);
  }

  /** Add a selection, or take it out when it is already in the slip; true when added. */
  toggle(leg: NewLeg): boolean {
    if (this.has(leg.selectionId)) {
      this.remove(leg.selectionId);
      return false;
    }
    if (this.legs.length >= this.limits.maxLegs) return false;
    this.legs.push({ ...leg, seen: leg.price, stake: "", suspended: leg.suspended ?? false });
    // A second selection from another event makes an accumulator, the usual intent.
    if (this.legs.length === 2 && this.accumulatorAllowed()) this.mode = "accumulator";
    this.fixMode();
    return true;
  }

  remove(selectionId: number): void {
    this.legs = this.legs.filter((leg) => leg.selectionId !== selectionId);
    this.fixMode();
  }

  setMode(mode: SlipMode): void {
    this.mode = mode;
    this.fixMode();
  }

  private fixMode(): void {
    if (this.mode === "accumulator" && !this.accumulatorAllowed()) this.mode = "singles";
  }

  /** Take out every selection of a finished event (or of the given markets, resulted); the legs taken out. */
  dropFinished(which: { eventId?: number; marketId?: number }): SlipLeg[] {
    const gone = this.legs.filter(
      (leg) =>
        (which.eventId !== undefined && leg.eventId === which.eventId) ||
        (which.marketId !== undefined && leg.marketId === which.marketId),
    );
    if (gone.length > 0) {
      this.legs = this.legs.filter((leg) => !gone.includes(leg));
      this.fixMode();
    }
    return gone;
  }

  /**
   * Put back the legs of a bet the server refused after holding it (its price moved during the
   * in-play delay): each at the price the punter accepted (``seen``) and, when known, the price now,
   * so the slip asks for the new price to be accepted. Legs already in the slip stay as they are.
   */
  restore(legs: SlipLeg[], mode: SlipMode, accaStake: string, prices: ReadonlyMap<number, string> = new Map()): SlipLeg[] {
    const back: SlipLeg[] = [];
    for (const leg of legs) {
      if (this.has(leg.selectionId) || this.legs.length >= this.limits.maxLegs) continue;
      const again = { ...leg, price: prices.get(leg.selectionId) ?? leg.price, suspended: false };
      this.legs.push(again);
      back.push(again);
    }
    if (mode === "accumulator" && back.length === legs.length && this.legs.length === legs.length) {
      this.mode = "accumulator";
      this.accaStake = accaStake;
    }
    this.fixMode();
    return back;
  }

  /** After the bets were placed: empty the slip, or only its stakes when the punter keeps the selections. */
  placed(selectionIds: number[]): void {
    if (!this.keepSelections) {
      if (this.mode === "accumulator") this.clear();
      else for (const id of selectionIds) this.remove(id);
      return;
    }
    if (this.mode === "accumulator") this.accaStake = "";
    else for (const id of selectionIds) {
      const leg = this.leg(id);
      if (leg !== undefined) leg.stake = "";
    }
  }

  /** Why a typed stake cannot be placed (``null`` for the accumulator stake), or ``null`` when it
   * can or nothing is typed yet. */
  stakeError(selectionId: number | null): string | null {
    const text = selectionId === null ? this.accaStake : (this.leg(selectionId)?.stake ?? "");
    if (text.trim() === "") return null;
    const stake = parseStake(text, this.limits);
    return stake.ok ? null : stake.message;
  }

  clear(): void {
    this.legs = [];
    this.mode = "singles";
    this.accaStake = "";
  }

  /**
   * A live price for a leg. Under the "any" policy every change is taken at once, under
   * "better" a rise is; anything else waits for the punter to accept it. Returns the move.
   */
  livePrice(selectionId: number, price: string | null, suspended: boolean): Move {
    const leg = this.leg(selectionId);
    if (leg === undefined) return null;
    leg.suspended = suspended;
    if (price === null) return null;
    const direction = compareDecimal(price, leg.price);
    leg.price = price;
    const change = compareDecimal(price, leg.seen);
    if (change !== 0 && (this.policy === "any" || (this.policy === "better" && change > 0))) leg.seen = price;
    return direction > 0 ? "up" : direction < 0 ? "down" : null;
  }

  /** Legs whose live price differs from the price the punter accepted. */
  changedLegs(): SlipLeg[] {
    return this.legs.filter((leg) => compareDecimal(leg.price, leg.seen) !== 0);
  }

  acceptChanges(): void {
    for (const leg of this.legs) leg.seen = leg.price;
  }

  setPolicy(policy: PricePolicy): void {
    this.policy = policy;
    // The new policy applies to changes already on the slip.
    for (const leg of this.legs) this.livePrice(leg.selectionId, leg.price, leg.suspended);
  }

  /** The server refused a bet because prices moved: show the new prices for the punter to accept. */
  priceRejected(selections: NonNullable<ApiErrorBody["selections"]>): void {
    for (const item of selections) {
      const leg = this.leg(item.selection_id);
      if (leg !== undefined && compareDecimal(item.price, leg.seen) !== 0) {
        leg.price = item.price;
        leg.seen = item.price_seen;
      }
    }
  }

  sameEvent(): boolean {
    return new Set(this.legs.map((leg) => leg.eventId)).size !== this.legs.length;
  }

  accumulatorAllowed(): boolean {
    return this.legs.length >= 2 && this.legs.length <= this.limits.maxLegs && !this.sameEvent();
  }

  combinedOdds(): string | null {
    return this.legs.length > 0 ? combinedOdds(this.legs.map((leg) => leg.price)) : null;
  }

  accumulatorReturn(): string | null {
    const stake = parseStake(this.accaStake, this.limits);
    if (!stake.ok || this.legs.length === 0) return null;
    return potentialReturn(stake.value, this.legs.map((leg) => leg.price));
  }

  singleReturn(leg: SlipLeg): string | null {
    const stake = parseStake(leg.stake, this.limits);
    return stake.ok ? potentialReturn(stake.value, [leg.price]) : null;
  }

  /** Legs with a stake typed, as singles. */
  stakedSingles(): SlipLeg[] {
    return this.legs.filter((leg) => leg.stake.trim() !== "");
  }

  totalStake(): string {
    if (this.mode === "accumulator") {
      const stake = parseStake(this.accaStake, this.limits);
      return stake.ok ? stake.value : "0.00";
    }
    const stakes = this.stakedSingles().map((leg) => parseStake(leg.stake, this.limits));
    return sumMoney(stakes.flatMap((s) => (s.ok ? [s.value] : [])));
  }

  totalReturn(): string {
    if (this.mode === "accumulator") return this.accumulatorReturn() ?? "0.00";
    return sumMoney(this.stakedSingles().flatMap((leg) => this.singleReturn(leg) ?? []));
  }

  /** Everything that stops the slip from being placed now, most urgent first. */
  blockers(): Blocker[] {
    const found: Blocker[] = [];
    if (this.legs.length === 0) return [{ code: "empty", message: "Add a selection" }];
    if (this.streamDown) found.push({ code: "offline", message: "Prices are paused while the connection is down" });
    const legs = this.mode === "accumulator" ? this.legs : this.stakedSingles();
    for (const leg of legs) {
      if (leg.suspended) {
        found.push({ code: "suspended", message: `${leg.selection} is suspended`, selectionId: leg.selectionId });
      }
    }
    if (legs.some((leg) => compareDecimal(leg.price, leg.seen) !== 0)) {
      found.push({ code: "price_changed", message: "Prices have changed" });
    }
    if (this.mode === "accumulator") {
      if (this.sameEvent()) {
        found.push({ code: "same_event", message: "An accumulator takes one selection per event" });
      }
      const stake = parseStake(this.accaStake, this.limits);
      if (!stake.ok) found.push({ code: "stake", message: stake.message });
      const ret = this.accumulatorReturn();
      if (ret !== null && compareDecimal(ret, this.limits.maxReturn) > 0) {
        const most = formatMoney(this.limits.maxReturn);
        found.push({ code: "return_too_high", message: `The potential return is above ${most}` });
      }
    } else {
      if (legs.length === 0) found.push({ code: "stake", message: "Enter a stake" });
      for (const leg of legs) {
        const stake = parseStake(leg.stake, this.limits);
        if (!stake.ok) found.push({ code: "stake", message: stake.message, selectionId: leg.selectionId });
      }
    }
    return found;
  }

  /** The bets to place now: one accumulator, or one single per staked leg. */
  requests(newKey: () => string): { legs: number[]; body: PlaceBetRequest }[] {
    if (this.mode === "accumulator") {
      const stake = parseStake(this.accaStake, this.limits);
      if (!stake.ok) return [];
      return [
        {
          legs: this.legs.map((leg) => leg.selectionId),
          body: {
            v: 1,
            idempotency_key: newKey(),
            stake: stake.value,
            price_policy: this.policy,
            selections: this.legs.map((leg) => ({ selection_id: leg.selectionId, price: leg.seen })),
          },
        },
      ];
    }
    return this.stakedSingles().flatMap((leg) => {
      const stake = parseStake(leg.stake, this.limits);
      if (!stake.ok) return [];
      return [
        {
          legs: [leg.selectionId],
          body: {
            v: 1 as const,
            idempotency_key: newKey(),
            stake: stake.value,
            price_policy: this.policy,
            selections: [{ selection_id: leg.selectionId, price: leg.seen }],
          },
        },
      ];
    });
  }

  // --- persistence (the slip follows the punter from page to page) ---

  toJSON(): object {
    return {
      v: 1,
      legs: this.legs,
      mode: this.mode,
      accaStake: this.accaStake,
      policy: this.policy,
      keepSelections: this.keepSelections,
    };
  }

  static fromJSON(raw: unknown, limits: SlipLimits): BetSlip {
    const slip = new BetSlip(limits);
    if (typeof raw !== "object" || raw === null || (raw as { v?: unknown }).v !== 1) return slip;
    const data = raw as { legs?: unknown; mode?: unknown; accaStake?: unknown; policy?: unknown; keepSelections?: unknown };
    if (Array.isArray(data.legs)) {
      slip.legs = data.legs.filter(isLeg).slice(0, limits.maxLegs);
    }
    if (data.policy === "none" || data.policy === "any" || data.policy === "better") slip.policy = data.policy;
    if (typeof data.accaStake === "string") slip.accaStake = data.accaStake;
    slip.keepSelections = data.keepSelections === true;
    slip.setMode(data.mode === "accumulator" ? "accumulator" : "singles");
    return slip;
  }
}

const PRICE_RE = /^\d{1,4}(\.\d{1,2})?$/;

function isLeg(raw: unknown): raw is SlipLeg {
  if (typeof raw !== "object" || raw === null) return false;
  const leg = raw as Record<string, unknown>;
  const ids = ["selectionId", "marketId", "eventId"].every((k) => Number.isInteger(leg[k]) && (leg[k] as number) > 0);
  const texts = ["selection", "market", "event", "stake"].every((k) => typeof leg[k] === "string");
  const prices = ["price", "seen"].every((k) => typeof leg[k] === "string" && PRICE_RE.test(leg[k] as string));
  return ids && texts && prices && typeof leg.suspended === "boolean";
}
