"""Resettlement of a market whose result was wrong (docs/resettlement.md).

The trader gives every selection its corrected result and first sees a preview: each bet with a
leg in the market, what it paid, what it pays now and what moves. Confirming applies exactly
that preview or nothing: the preview's digest names every bet's state, and a bet that changed
meanwhile (a cash-out, a settlement) refuses the confirmation, so the trader looks again.

Nothing posted is edited. Each bet's difference is one ``resettle`` ledger entry between the
house and the wallet (or, for an accumulator open again, the house and the bets held), with a
reference of its own; a claw-back never takes a balance below zero, and what it cannot take is
owed, recovered from the wallet's next credits. One audit entry records the results before and
after and every amount.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal

from django.db import connection, transaction
from django.utils import timezone

from odds.audit.models import AuditEntry
from odds.audit.services.audit import Actor, audit_record
from odds.betting.models import Bet, BetLeg, LedgerEntry, Wallet
from odds.betting.services.announce import bet_settled_announce
from odds.betting.services.bets import bet_event_enqueue
from odds.betting.services.settlement import bet_settlement_post
from odds.betting.services.wallet import ledger_post, owed_claim
from odds.catalogue.models import Market, Selection
from reducers import resettlement
from reducers.money import money_text

Account = LedgerEntry.Account
Kind = LedgerEntry.Kind

ZERO = resettlement.ZERO
RESULTS = (Selection.Result.WON, Selection.Result.LOST, Selection.Result.VOID)
# The advisory lock of a market's resettlement (this number, the market's id): two traders
# correcting one market queue up.
LOCK_SPACE = 0x52455354  # "REST"
REASON_MAX_LENGTH = 500


class ResettlementRefused(Exception):
    """The resettlement cannot be made as asked; nothing changed."""


@dataclass(frozen=True)
class Line:
    """One bet of the preview: whose it is, its move, and of a claw-back what the balance gives
    now (``taken``) and what stays owed."""

    bet_id: int
    user_id: int
    username: str
    currency: str
    stake: Decimal
    kind: str
    move: resettlement.Move
    taken: Decimal
    owed: Decimal

    @property
    def wallet_text(self) -> str:
        delta = self.move.wallet
        if not delta:
            return "—"
        return ("+" if delta > 0 else "") + money_text(delta, self.currency)


@dataclass
class Preview:
    market_id: int
    before: dict[int, str]
    after: dict[int, str]
    names: dict[int, str]
    lines: list[Line] = field(default_factory=list)
    digest: str = ""
    reference: str = ""

    def totals(self) -> dict[str, dict[str, Decimal]]:
        """By currency: paid to wallets, clawed back (what the balances give), owed, held again."""
        out: dict[str, dict[str, Decimal]] = defaultdict(
            lambda: dict.fromkeys(("paid", "clawed_back", "owed", "held"), resettlement.ZERO)
        )
        for line in self.lines:
            sums = out[line.currency]
            if line.move.wallet > 0:
                sums["paid"] += line.move.wallet
            sums["clawed_back"] += line.taken
            sums["owed"] += line.owed
            sums["held"] += line.move.held
        return dict(out)

    @property
    def moving(self) -> list[Line]:
        return [line for line in self.lines if line.move.moves]

    def changes(self) -> list[tuple[str, str, str]]:
        """Each selection's (name, result before, result after)."""
        return [(self.names[s], self.before[s], self.after[s]) for s in sorted(self.names)]


def results_checked(
    *, market: Market, results: Mapping[int, str]
) -> tuple[dict[int, str], dict[int, str], dict[int, str]]:
    """The market's selections' results now and as corrected, and their names; refused unless
    the market is settled and every selection is given won, lost or void, not all as now."""
    if market.status != Market.Status.SETTLED:
        raise ResettlementRefused(
            f"{market.name} is {market.get_status_display().lower()}: only a settled market is resettled"
        )
    selections = list(Selection.objects.filter(market_id=market.id).order_by("id"))
    before = {s.id: s.result for s in selections}
    names = {s.id: s.name for s in selections}
    unknown = set(results) - set(before)
    if unknown:
        raise ResettlementRefused(f"selections {sorted(unknown)} are not in this market")
    missing = [names[s] for s in before if s not in results]
    if missing:
        raise ResettlementRefused(f"give every selection a result: {', '.join(missing)} has none")
    bad = [names[s] for s, result in results.items() if result not in RESULTS]
    if bad:
        raise ResettlementRefused(f"a result is won, lost or void: {', '.join(bad)}")
    after = {s: str(results[s]) for s in before}
    if after == before:
        raise ResettlementRefused("the corrected result is the result already settled: nothing to resettle")
    return before, after, names


def _lines(*, market_id: int, after: Mapping[int, str], lock: bool) -> list[tuple[Line, Bet, Wallet]]:
    """The move of every bet with a leg in the market, with the bet and its punter's wallet as
    read (locked, wallet then bet, when ``lock``; one wallet object per punter, so the postings
    of a punter's bets see each other's balance)."""
    bet_ids = list(
        BetLeg.objects.filter(market_id=market_id, bet__status__in=resettlement.AFFECTED)
        .values_list("bet_id", flat=True)
        .distinct()
        .order_by("bet_id")
    )
    lines = []
    wallets: dict[int, Wallet] = {}
    for bet_id in bet_ids:
        user_id = Bet.objects.values_list("user_id", flat=True).get(id=bet_id)
        if user_id not in wallets:
            found = Wallet.objects.select_for_update() if lock else Wallet.objects
            wallets[user_id] = found.get(user_id=user_id)
        wallet = wallets[user_id]
        # The bet's row only: its punter's name comes along, unlocked.
        bets = Bet.objects.select_for_update(of=("self",)) if lock else Bet.objects
        bet = bets.select_related("user").get(id=bet_id)
        if bet.status not in resettlement.AFFECTED:
            continue
        legs = [
            (after.get(leg.selection_id, leg.result) if leg.market_id == market_id else leg.result, leg.price)
            for leg in BetLeg.objects.filter(bet_id=bet.id).order_by("position")
        ]
        paid = bet.payout if bet.status in Bet.SETTLED_STATUSES else None
        move = resettlement.resettle_move(status=bet.status, payout=paid, stake=bet.stake, legs=legs)
        taken, owed = resettlement.ZERO, resettlement.ZERO
        if move.wallet < 0:
            taken, owed = resettlement.recoverable(owed=-move.wallet, balance=wallet.balance)
        lines.append(
            (
                Line(
                    bet_id=bet.id,
                    user_id=bet.user_id,
                    username=bet.user.get_username(),
                    currency=wallet.currency,
                    stake=bet.stake,
                    kind=bet.kind,
                    move=move,
                    taken=taken,
                    owed=owed,
                ),
                bet,
                wallet,
            )
        )
    return lines


def _digest(*, market_id: int, after: Mapping[int, str], lines: list[Line]) -> str:
    """What the trader confirms: the corrected results and each bet's state and move (not the
    balances, which move on their own; a claw-back takes what is there when it is confirmed)."""
    text = "|".join(
        [
            str(market_id),
            ",".join(f"{s}={after[s]}" for s in sorted(after)),
            *(
                f"{ln.bet_id}:{ln.move.status_before}:{ln.move.payout_before}:{ln.move.status_after}:{ln.move.payout_after}"
                for ln in lines
            ),
        ]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def resettlement_preview(*, market: Market, results: Mapping[int, str]) -> Preview:
    """What resettling ``market`` with ``results`` (selection id → won, lost or void) would move,
    bet by bet; ``ResettlementRefused`` when it cannot be resettled so."""
    before, after, names = results_checked(market=market, results=results)
    lines = [line for line, _, _ in _lines(market_id=market.id, after=after, lock=False)]
    return Preview(
        market_id=market.id,
        before=before,
        after=after,
        names=names,
        lines=lines,
        digest=_digest(market_id=market.id, after=after, lines=lines),
    )


def market_resettle(
    *, market_id: int, results: Mapping[int, str], digest: str, by: Actor = None, reason: str = ""
) -> Preview:
    """Resettle the market as previewed (``digest`` is the preview's): every bet's compensating
    entry, its new status, the legs' and selections' corrected results and one audit entry, in
    one transaction. ``ResettlementRefused`` (nothing changed) when the market or any of its bets
    changed since the preview."""
    reason = " ".join(reason.split())[:REASON_MAX_LENGTH]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_SPACE, market_id])
        market = Market.objects.get(id=market_id)
        before, after, names = results_checked(market=market, results=results)
        read = _lines(market_id=market_id, after=after, lock=True)
        lines = [line for line, _, _ in read]
        preview = Preview(market_id=market_id, before=before, after=after, names=names, lines=lines)
        preview.digest = _digest(market_id=market_id, after=after, lines=lines)
        if preview.digest != digest:
            raise ResettlementRefused(
                "the market's bets changed since the preview: look at the new one and confirm again"
            )
        preview.reference = secrets.token_hex(6)
        for selection_id, result in after.items():
            if result != before[selection_id]:
                Selection.objects.filter(id=selection_id).update(result=result)
                BetLeg.objects.filter(market_id=market_id, selection_id=selection_id).update(result=result)
        preview.lines = [
            _apply(line, bet, wallet, reference=f"resettle-{preview.reference}-bet{line.bet_id}")
            for line, bet, wallet in read
        ]
        lines = preview.lines
        totals = {
            currency: {name: str(amount) for name, amount in sums.items()}
            for currency, sums in preview.totals().items()
        }
        audit_record(
            by=by,
            kind=AuditEntry.Kind.MARKET_RESETTLE,
            obj=market,
            before={"results": {names[s]: before[s] for s in before}},
            after={
                "results": {names[s]: after[s] for s in after},
                "reference": preview.reference,
                "bets": len(lines),
                "moved": len(preview.moving),
                "totals": totals,
                "owed": {str(ln.bet_id): str(ln.owed) for ln in lines if ln.owed},
            },
            reason=reason,
        )
    return preview


def _apply(line: Line, bet: Bet, wallet: Wallet, *, reference: str) -> Line:
    """Post one bet's move (its wallet and bet are locked by ``_lines``); the line as posted (a
    claw-back takes what the balance holds now, after the punter's earlier bets of this run)."""
    move = line.move
    if not move.moves:
        return line
    if move.status_before == resettlement.ACCEPTED:
        # A first settlement, decided by the corrected leg: the entries of any settlement.
        bet_settlement_post(wallet=wallet, bet=bet, status=move.status_after, payout=move.payout_after or ZERO)
        return line
    if move.held:
        # Open again: the stake the loss gave the house is held for the bet once more.
        _post(wallet, bet, debit=Account.HOUSE, credit=Account.BETS_HELD, amount=move.held, reference=reference)
        bet.status, bet.payout, bet.settled_at = Bet.Status.ACCEPTED, ZERO, None
        bet.reopened += 1
        bet.save(update_fields=["status", "payout", "settled_at", "reopened"])
        # Back in the books (the liability view adds its exposure again) and on the ticker.
        bet_event_enqueue(
            bet=bet,
            type="reopened",
            wallet=wallet,
            reason="result corrected: lost → open again",
            occurrence=str(bet.reopened),
        )
        return line
    if move.wallet < 0:
        taken, owed = resettlement.recoverable(owed=-move.wallet, balance=wallet.balance)
        line = replace(line, taken=taken, owed=owed)
    if move.wallet > 0:
        _post(wallet, bet, debit=Account.HOUSE, credit=Account.WALLET, amount=move.wallet, reference=reference)
    elif line.taken > 0:
        _post(wallet, bet, debit=Account.WALLET, credit=Account.HOUSE, amount=line.taken, reference=reference)
    if line.owed > 0:
        # The rest is owed: the wallet's next credits recover it (docs/resettlement.md).
        owed_claim(wallet=wallet, bet=bet, amount=line.owed, reference=reference)
    bet.status, bet.payout, bet.settled_at = move.status_after, move.payout_after or ZERO, timezone.now()
    bet.save(update_fields=["status", "payout", "settled_at"])
    bet_event_enqueue(
        bet=bet,
        type="resettled",
        wallet=wallet,
        reason=f"result corrected: {move.status_before} → {move.status_after}, balance {line.wallet_text}",
        occurrence=reference.removeprefix("resettle-"),
    )
    bet_settled_announce(bet=bet, wallet=wallet)
    return line


def _post(wallet: Wallet, bet: Bet, *, debit: str, credit: str, amount: Decimal, reference: str) -> None:
    ledger_post(
        wallet=wallet, kind=Kind.RESETTLE, debit=debit, credit=credit, amount=amount, bet=bet, reference=reference
    )
