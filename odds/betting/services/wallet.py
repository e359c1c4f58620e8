"""Wallet writes. Every balance change is one ledger entry posted under a row lock on the wallet."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import models, transaction
from django.utils import timezone

from odds.betting.models import Bet, LedgerEntry, OwedClaim, Wallet, WalletLimit
from odds.betting.models.wallet import RECOVERY_PREFIX
from odds.betting.selectors.wallet import limit_window, wallet_on_break
from odds.core import task_names
from odds.core.task_names import enqueue
from odds.streaming.services.sessions import punter_sessions_end
from reducers import limits
from reducers.money import money_text

Account = LedgerEntry.Account
Kind = LedgerEntry.Kind


class InsufficientFunds(Exception):
    """The wallet does not hold the amount asked for."""


def wallet_get_or_create(*, user: User) -> Wallet:
    wallet, _ = Wallet.objects.get_or_create(user=user)
    return wallet


def wallet_open(*, user: User, currency: str) -> Wallet:
    """The wallet of a punter who has just signed up: in ``currency``, with no bets until the
    punter's email is verified (``wallet_email_verified``)."""
    return Wallet.objects.create(user=user, currency=currency, email_unverified=True)


def wallet_email_verified(*, user: User) -> None:
    """The punter's email is verified: their wallet may place bets (a user with no wallet yet
    gets one that may)."""
    updated = Wallet.objects.filter(user=user, email_unverified=True).update(email_unverified=False)
    if not updated:
        wallet_get_or_create(user=user)


def wallet_lock(*, user: User) -> Wallet:
    """The user's wallet, locked for this transaction (created when the user has none yet).

    Everything that moves a punter's money locks the wallet first and the bet second, so that
    concurrent bets, cash-outs and settlements of one punter queue up instead of deadlocking.
    """
    # One locking read on the hot path; ``get`` (unlike ``first``) drops the model's ordering by
    # username, whose join would lock the user's row as well. Creation is the rare first bet.
    try:
        return Wallet.objects.select_for_update().get(user=user)
    except Wallet.DoesNotExist:
        wallet_get_or_create(user=user)
    return Wallet.objects.select_for_update().get(user=user)


def ledger_post(
    *,
    wallet: Wallet,
    kind: str,
    debit: str,
    credit: str,
    amount: Decimal,
    bet: Bet | None = None,
    reference: str = "",
) -> LedgerEntry:
    """Post one entry and move the wallet's balance with it. The caller holds the wallet's lock.

    Raises ``InsufficientFunds`` when the wallet would go below zero; the database's check
    constraint is the last line of defence should a caller forget the lock.
    """
    if amount <= 0:
        raise ValueError(f"ledger amounts are positive, got {amount}")
    if debit == Account.WALLET:
        if wallet.balance < amount:
            raise InsufficientFunds(f"balance {wallet.balance} is less than {amount}")
        wallet.balance -= amount
    elif credit == Account.WALLET:
        wallet.balance += amount
    wallet.save(update_fields=["balance", "updated_at"])
    entry = LedgerEntry.objects.create(
        wallet=wallet,
        kind=kind,
        debit=debit,
        credit=credit,
        amount=amount,
        balance_after=wallet.balance,
        bet=bet,
        reference=reference,
    )
    if credit == Account.WALLET and wallet.owed > 0:
        owed_recover(wallet=wallet, source=entry)
    return entry


def owed_claim(*, wallet: Wallet, bet: Bet, amount: Decimal, reference: str) -> OwedClaim:
    """Record what a claw-back left owed (the balance gave what it held). The caller holds the
    wallet's lock; the next credits to the wallet recover it (``owed_recover``)."""
    if amount <= 0:
        raise ValueError(f"an owed amount is positive, got {amount}")
    claim = OwedClaim.objects.create(wallet=wallet, bet=bet, amount=amount, outstanding=amount, reference=reference)
    wallet.owed += amount
    wallet.save(update_fields=["owed", "updated_at"])
    return claim


def owed_recover(*, wallet: Wallet, source: LedgerEntry) -> Decimal:
    """Take what the wallet owes out of the credit ``source`` just made, as far as the balance
    goes, oldest claim first: one ``resettle`` entry wallet → house per claim, against the
    claim's bet (so loss limits count it as the claw-back it completes). The caller holds the
    wallet's lock; the claims are locked after it, the order of every money path. Returns what
    was recovered."""
    left = min(wallet.owed, wallet.balance)
    recovered = Decimal("0.00")
    if left <= 0:
        return recovered
    claims = OwedClaim.objects.select_for_update().filter(wallet=wallet, outstanding__gt=0).order_by("id")
    for claim in claims:
        part = min(claim.outstanding, left)
        ledger_post(
            wallet=wallet,
            kind=Kind.RESETTLE,
            debit=Account.WALLET,
            credit=Account.HOUSE,
            amount=part,
            bet=claim.bet,
            reference=f"{RECOVERY_PREFIX}{source.pk}-{claim.pk}",
        )
        claim.outstanding -= part
        claim.recovered_at = timezone.now() if claim.outstanding == 0 else None
        claim.save(update_fields=["outstanding", "recovered_at"])
        recovered += part
        left -= part
        if left <= 0:
            break
    wallet.owed -= recovered
    wallet.save(update_fields=["owed", "updated_at"])
    return recovered


def bet_entry_reference(bet: Bet) -> str:
    """The reference of a bet's settlement entries (stake released or refunded, payout,
    cash-out): none the first time; after a resettlement opened the bet again, one per time, so
    each settlement posts its entries once (docs/resettlement.md)."""
    return f"bet{bet.pk}-reopened{bet.reopened}" if bet.reopened else ""


def stake_release(*, wallet: Wallet, bet: Bet) -> LedgerEntry:
    """The bet's held stake goes to the house: the first posting of every win, loss or cash-out."""
    return ledger_post(
        wallet=wallet,
        kind=Kind.STAKE_RELEASE,
        debit=Account.BETS_HELD,
        credit=Account.HOUSE,
        amount=bet.stake,
        bet=bet,
        reference=bet_entry_reference(bet),
    )


def stake_refund(*, wallet: Wallet, bet: Bet) -> LedgerEntry:
    """The bet's held stake goes back to the wallet: a void bet, or a held bet not accepted."""
    return ledger_post(
        wallet=wallet,
        kind=Kind.REFUND,
        debit=Account.BETS_HELD,
        credit=Account.WALLET,
        amount=bet.stake,
        bet=bet,
        reference=bet_entry_reference(bet),
    )


# --- deposits, withdrawals, limits and breaks the punter asks for ---------------------------------

MIN_PAYMENT = Decimal("1.00")
MAX_PAYMENT = Decimal("100000.00")
MAX_REQUEST_ID = 64


class Break(models.TextChoices):
    """What a punter can choose to stop betting and depositing for; neither ends early. The
    time-outs are the book's cool-off periods (docs/accounts.md)."""

    TIME_OUT_24H = "time_out_24h", "Cool-off: time-out for 24 hours"
    TIME_OUT_7D = "time_out_7d", "Cool-off: time-out for 7 days"
    TIME_OUT_30D = "time_out_30d", "Cool-off: time-out for 30 days"
    EXCLUDE_6M = "exclude_6m", "Self-exclusion for 6 months"
    EXCLUDE_1Y = "exclude_1y", "Self-exclusion for 1 year"
    EXCLUDE_5Y = "exclude_5y", "Self-exclusion for 5 years"


BREAK_LENGTHS: dict[str, timedelta] = {
    Break.TIME_OUT_24H: timedelta(hours=24),
    Break.TIME_OUT_7D: timedelta(days=7),
    Break.TIME_OUT_30D: timedelta(days=30),
    Break.EXCLUDE_6M: timedelta(days=183),
    Break.EXCLUDE_1Y: timedelta(days=365),
    Break.EXCLUDE_5Y: timedelta(days=5 * 365 + 1),
}


class PaymentRefused(Exception):
    """A deposit, withdrawal or limit the rules refuse; ``message`` says why, in words;
    ``extra``: more members of the API's error (a limit's ``period`` and ``resets_at``)."""

    def __init__(self, *, code: str, message: str, field: str = "amount", extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.extra = extra or {}


@dataclass(frozen=True)
class Payment:
    entry: LedgerEntry
    created: bool  # False: a repeat of a request already paid, answered with its entry
    currency: str  # the wallet's
    # The wallet's balance after the payment: the entry's, less what a deposit recovered of an
    # owed claw-back (docs/resettlement.md). None for a repeat: the balance has moved on since.
    balance: Decimal | None = None


def cooling_off_text() -> str:
    """How long a raised deposit limit waits, in words: ``24 hours``."""
    seconds = settings.DEPOSIT_LIMIT_COOLING_OFF_S
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour{'s' if hours != 1 else ''}"
    minutes = max(1, seconds // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def when_text(*, at: datetime) -> str:
    """An instant as the messages of this module show it: ``23 Nov 2026, 18:40 UTC``."""
    return at.astimezone(UTC).strftime("%-d %b %Y, %H:%M UTC")


def exclusion_message(*, until: datetime, exclusion: str = "") -> str:
    """Why a bet, cash-out or deposit is refused while the punter's break runs."""
    what = "self-exclusion" if exclusion == "self_exclusion" else "break from betting"
    return f"Your {what} runs until {when_text(at=until)}: betting and deposits are closed until then."


def exclusion_check(*, wallet: Wallet) -> None:
    """Raise ``PaymentRefused`` (``excluded``, saying until when) while the wallet's break runs."""
    if wallet_on_break(wallet=wallet):
        assert wallet.excluded_until is not None
        message = exclusion_message(until=wallet.excluded_until, exclusion=wallet.exclusion)
        raise PaymentRefused(code="excluded", message=message, field="account")


def payment_amount_check(*, amount: Decimal, currency: str) -> None:
    """Refuse (``PaymentRefused``) an amount that is not money or outside the payment bounds."""
    if not amount.is_finite():
        raise PaymentRefused(code="invalid", message="Enter the amount as a number, such as 20.00.")
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise PaymentRefused(code="invalid", message="Enter the amount with at most two decimal places.")
    if amount <= 0:
        raise PaymentRefused(code="invalid", message="Enter an amount above zero.")
    if amount < MIN_PAYMENT:
        raise PaymentRefused(code="too_low", message=f"The smallest amount is {money_text(MIN_PAYMENT, currency)}.")
    if amount > MAX_PAYMENT:
        raise PaymentRefused(
            code="too_high", message=f"The largest amount at a time is {money_text(MAX_PAYMENT, currency)}."
        )


def _request_id_check(request_id: str) -> None:
    if not request_id or len(request_id) > MAX_REQUEST_ID or not request_id.isprintable():
        raise PaymentRefused(
            code="invalid", message=f"A request id of 1 to {MAX_REQUEST_ID} characters is required.", field="request_id"
        )


def _same_payment(existing: LedgerEntry, *, amount: Decimal, currency: str) -> None:
    """A repeated ``request_id`` answers the first payment only when it asks for the same amount:
    another amount is a different payment sent under a used id, refused (``request_id_reused``)."""
    if not amount.is_finite() or amount != existing.amount:
        raise PaymentRefused(
            code="request_id_reused",
            message=f"This request id was already used for a payment of {money_text(existing.amount, currency)};"
            " nothing was paid."
            " Send a new request id for another payment.",
            field="request_id",
        )


def limits_in_force(*, wallet: Wallet, kind: str, now: datetime) -> list[tuple[WalletLimit, limits.LimitTerms]]:
    """The wallet's limits of ``kind``, each with its terms at ``now`` (a raise whose cooling-off
    has ended in force), day before week before month."""
    order = list(limits.PERIOD_LENGTHS)
    found = sorted(WalletLimit.objects.filter(wallet=wallet, kind=kind), key=lambda limit: order.index(limit.period))
    return [(limit, limits.terms_at(limit.terms, now=now)) for limit in found]


def deposit_breach(*, wallet: Wallet, amount: Decimal, now: datetime) -> limits.Breach | None:
    """The deposit limit ``amount`` would break (the one that frees room last), or None."""
    return limits.breach_reported(
        breach
        for limit, terms in limits_in_force(wallet=wallet, kind=limits.LimitKind.DEPOSIT, now=now)
        if (
            breach := limits.breach_of(
                kind=limit.kind,
                period=limit.period,
                amount=terms.amount,
                window=limit_window(wallet=wallet, kind=limit.kind, period=limit.period, now=now),
                more=amount,
            )
        )
        is not None
    )


def limit_refused(breach: limits.Breach, *, currency: str) -> PaymentRefused:
    """A deposit over a limit as the refusal the punter reads (the same words as a bet's)."""
    return PaymentRefused(
        code=breach.code,
        message=limits.breach_message(breach, currency=currency),
        extra={
            "period": breach.period,
            "limit": breach.amount,
            "left": breach.left,
            "resets_at": limits.epoch_ms(breach.resets_at) if breach.resets_at is not None else None,
        },
    )


def wallet_deposit(*, user: User, amount: Decimal, reference: str) -> LedgerEntry:
    """Credit the wallet from outside the platform. Idempotent on ``reference`` (e.g. a payment id)."""
    return _deposit(user=user, amount=amount, reference=reference, checked=False).entry


def _deposit(*, user: User, amount: Decimal, reference: str, checked: bool) -> Payment:
    """``checked``: a punter's own deposit, refused (``PaymentRefused``) while a break runs, above
    the payment bounds or above what the deposit limits leave."""
    if not reference:
        raise ValueError("a deposit needs a reference so that a repeated request pays once")
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        existing = LedgerEntry.objects.filter(wallet=wallet, kind=Kind.DEPOSIT, reference=reference).first()
        if existing is not None:
            if checked:
                _same_payment(existing, amount=amount, currency=wallet.currency)
            return Payment(entry=existing, created=False, currency=wallet.currency)
        # The wallet lock serialises deposits of one wallet, so the check above cannot race.
        if checked:
            now = timezone.now()
            exclusion_check(wallet=wallet)
            payment_amount_check(amount=amount, currency=wallet.currency)
            breach = deposit_breach(wallet=wallet, amount=amount, now=now)
            if breach is not None:
                raise limit_refused(breach, currency=wallet.currency)
        entry = ledger_post(
            wallet=wallet,
            kind=Kind.DEPOSIT,
            debit=Account.CASH,
            credit=Account.WALLET,
            amount=amount,
            reference=reference,
        )
        return Payment(entry=entry, created=True, currency=wallet.currency, balance=wallet.balance)


def wallet_payment_deposit(*, user: User, amount: Decimal, request_id: str) -> Payment:
    """A punter's deposit through the payment form, idempotent on the form's ``request_id``."""
    _request_id_check(request_id)
    return _deposit(user=user, amount=amount, reference=request_id, checked=True)


def wallet_withdraw(*, user: User, amount: Decimal, request_id: str) -> Payment:
    """Pay ``amount`` out of the wallet, never more than it holds. Idempotent on ``request_id``.

    Withdrawals stay open during a break: a punter can always take their money out.
    """
    _request_id_check(request_id)
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        existing = LedgerEntry.objects.filter(wallet=wallet, kind=Kind.WITHDRAWAL, reference=request_id).first()
        if existing is not None:
            _same_payment(existing, amount=amount, currency=wallet.currency)
            return Payment(entry=existing, created=False, currency=wallet.currency)
        payment_amount_check(amount=amount, currency=wallet.currency)
        if amount > wallet.balance:
            raise PaymentRefused(
                code="insufficient_funds",
                message=f"You can withdraw at most your balance of {money_text(wallet.balance, wallet.currency)}.",
            )
        entry = ledger_post(
            wallet=wallet,
            kind=Kind.WITHDRAWAL,
            debit=Account.WALLET,
            credit=Account.CASH,
            amount=amount,
            reference=request_id,
        )
        return Payment(entry=entry, created=True, currency=wallet.currency, balance=wallet.balance)


def wallet_limit_set(
    *, user: User, kind: str, period: str, amount: Decimal, now: datetime | None = None
) -> WalletLimit:
    """Set the punter's ``kind`` limit (deposit, loss or wager) of ``period``: a lower (or first)
    limit applies at once, a higher one after ``DEPOSIT_LIMIT_COOLING_OFF_S`` (the current limit
    applies meanwhile; ``reducers.limits.limit_change``). The punter is mailed the change."""
    if kind not in limits.KINDS:
        raise PaymentRefused(code="invalid", message="Choose a deposit, loss or wager limit.", field="kind")
    if period not in limits.PERIOD_LENGTHS:
        raise PaymentRefused(code="invalid", message="Choose a daily, weekly or monthly limit.", field="period")
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        payment_amount_check(amount=amount, currency=wallet.currency)
        now = now or timezone.now()
        limit = WalletLimit.objects.filter(wallet=wallet, kind=kind, period=period).first()
        decided = limits.limit_change(
            current=limit.terms if limit is not None else None,
            amount=amount,
            now=now,
            cooling_off=timedelta(seconds=settings.DEPOSIT_LIMIT_COOLING_OFF_S),
        )
        if limit is None:
            limit = WalletLimit(wallet=wallet, kind=kind, period=period)
        limit.amount = decided.terms.amount
        limit.pending_amount = decided.terms.pending_amount
        limit.pending_from = decided.terms.pending_from
        limit.save()
        if kind in limits.BET_KINDS and not wallet.bet_limits:
            # From now on the placement statement looks for this wallet's bet limits.
            wallet.bet_limits = True
            wallet.save(update_fields=["bet_limits", "updated_at"])
        limit_id, change = limit.pk, decided.change.value
        # The change stands whether or not its notice can be queued (a broker down is logged).
        transaction.on_commit(lambda: enqueue(task_names.LIMIT_NOTICE_EMAIL, limit_id, change), robust=True)
        return limit


def limit_notice_send(*, limit_id: int, change: str) -> bool:
    """Mail the punter that their limit changed (``change``: ``reducers.limits.Change``), as it
    stands now. A raise that a later change has replaced is not announced (that change sends
    its own notice). Returns whether a mail was sent."""
    limit = WalletLimit.objects.select_related("wallet__user").get(pk=limit_id)
    user = limit.wallet.user
    if not user.email:
        return False
    if change == limits.Change.RAISE_WAITS and limit.pending_amount is None:
        return False
    subject, text = limits.change_notice(
        kind=limit.kind,
        period=limit.period,
        change=limits.LimitChange(limit.terms, limits.Change(change)),
        currency=limit.wallet.currency,
    )
    send_mail(subject=subject, message=text, from_email=settings.DEFAULT_FROM_EMAIL, recipient_list=[user.email])
    return True


def wallet_break_take(*, user: User, length: str) -> Wallet:
    """Start a time-out or self-exclusion of ``length`` (``Break``). It cannot be shortened: a
    break that runs longer already stays as it is."""
    if length not in BREAK_LENGTHS:
        raise PaymentRefused(code="invalid", message="Choose how long the break lasts.", field="length")
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        until = timezone.now() + BREAK_LENGTHS[length]
        if wallet.excluded_until is None or wallet.excluded_until < until:
            wallet.excluded_until = until
            wallet.exclusion = "self_exclusion" if length.startswith("exclude") else "time_out"
            wallet.save(update_fields=["excluded_until", "exclusion", "updated_at"])
        if length.startswith("exclude"):
            # A self-excluded punter's sessions end: their sockets close and their channels end.
            punter_sessions_end(user_id=user.pk, reason="self_excluded")
        return wallet
