"""Wallet writes. Every balance change is one ledger entry posted under a row lock on the wallet."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction

from odds.models import Bet, LedgerEntry, Wallet

Account = LedgerEntry.Account
Kind = LedgerEntry.Kind


class InsufficientFunds(Exception):
    """The wallet does not hold the amount asked for."""


def wallet_get_or_create(*, user: User) -> Wallet:
    wallet, _ = Wallet.objects.get_or_create(user=user)
    return wallet


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
    return LedgerEntry.objects.create(
        wallet=wallet,
        kind=kind,
        debit=debit,
        credit=credit,
        amount=amount,
        balance_after=wallet.balance,
        bet=bet,
        reference=reference,
    )


def stake_release(*, wallet: Wallet, bet: Bet) -> LedgerEntry:
    """The bet's held stake goes to the house: the first posting of every win, loss or cash-out."""
    return ledger_post(
        wallet=wallet, kind=Kind.STAKE_RELEASE, debit=Account.BETS_HELD, credit=Account.HOUSE, amount=bet.stake, bet=bet
    )


def stake_refund(*, wallet: Wallet, bet: Bet) -> LedgerEntry:
    """The bet's held stake goes back to the wallet: a void bet, or a held bet not accepted."""
    return ledger_post(
        wallet=wallet, kind=Kind.REFUND, debit=Account.BETS_HELD, credit=Account.WALLET, amount=bet.stake, bet=bet
    )


def wallet_deposit(*, user: User, amount: Decimal, reference: str) -> LedgerEntry:
    """Credit the wallet from outside the platform. Idempotent on ``reference`` (e.g. a payment id)."""
    if not reference:
        raise ValueError("a deposit needs a reference so that a repeated request pays once")
    with transaction.atomic():
        wallet = wallet_lock(user=user)
        existing = LedgerEntry.objects.filter(wallet=wallet, kind=Kind.DEPOSIT, reference=reference).first()
        if existing is not None:
            return existing
        # The wallet lock serialises deposits of one wallet, so the check above cannot race.
        return ledger_post(
            wallet=wallet,
            kind=Kind.DEPOSIT,
            debit=Account.CASH,
            credit=Account.WALLET,
            amount=amount,
            reference=reference,
        )
