// Bets held by the in-play delay: when each is due to be decided, by the client's own clock.
// The countdown runs from the delay the server gave (accept_at − placed_at), counted from when the
// answer arrived, so a client clock that is off does not skew it. The decision itself arrives as
// a "bet.decided" frame; a bet still undecided GRACE_MS after its time is looked up instead.
import type { Bet } from "./api";

import type { BetOffer, BetDecision as DecidedFrameBet } from "./contract/frames";

/** A held bet's outcome: a ``bet.decided`` frame's decision, or the bet's status looked up
 * later (GET /api/bets), by when it may have settled. */
export type BetDecision = Omit<DecidedFrameBet, "status"> & { status: Bet["status"] };

export const GRACE_MS = 3_000;

export class HeldBets {
  private readonly due = new Map<number, number>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Start counting down a bet the server holds (anything else is ignored). */
  hold(bet: Bet): void {
    if (bet.status !== "pending" || bet.accept_at === undefined || bet.accept_at === null) return;
    this.due.set(bet.id, this.now() + Math.max(0, bet.accept_at - bet.placed_at));
  }

  /** Whole seconds until the decision (0 once due), or null for a bet not held. */
  secondsLeft(betId: number): number | null {
    const due = this.due.get(betId);
    return due === undefined ? null : Math.max(0, Math.ceil((due - this.now()) / 1000));
  }

  /** Count down a trader's offer on a held bet: ``seconds`` from now. */
  holdFor(betId: number, seconds: number): void {
    this.due.set(betId, this.now() + Math.max(0, seconds) * 1000);
  }

  decided(betId: number): void {
    this.due.delete(betId);
  }

  /** Held bets whose decision is overdue by more than GRACE_MS (the frame may have been missed). */
  overdue(): number[] {
    const now = this.now();
    return [...this.due].filter(([, due]) => now - due > GRACE_MS).map(([id]) => id);
  }

  get size(): number {
    return this.due.size;
  }
}

/** The bet with the decision applied. */
export function withDecision(bet: Bet, decision: BetDecision): Bet {
  const { reject, ...rest } = { ...bet, status: decision.status, reject: decision.reject ?? undefined };
  return reject === undefined ? rest : { ...rest, reject };
}

/** A held bet with a trader's offer on it (from a ``bet.offered`` frame). */
export function withOffer(bet: Bet, offer: BetOffer): Bet {
  return { ...bet, offer: { stake: offer.stake, price: offer.price, potential_return: offer.potential_return, until: offer.until } };
}
