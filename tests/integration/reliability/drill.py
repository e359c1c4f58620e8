"""The restore drill's work on a database of its own: ``python -m tests.integration.reliability.drill
PHASE`` under Django, against the database ``DATABASE_URL`` names, printing one JSON line.

Phases: ``seed`` (punters with deposits, a market), ``bets`` (bets through the placement
service, deposits and withdrawals, the outbox relayed to Kafka), ``state`` (every bet id, the
wallets whose balance differs from their ledger, and the count of ledger entries).
"""

from __future__ import annotations

import os
import sys
import uuid
from decimal import Decimal
from typing import Any

import orjson

PUNTERS = 3


def seed() -> dict[str, Any]:
    from tests.factories import market_create, user_create

    users = [user_create(balance="500.00") for _ in range(PUNTERS)]
    market = market_create(prices=("2.00", "3.25", "4.50"))
    return {"users": [u.id for u in users], "market": market.id}


def bets(count: int) -> dict[str, Any]:
    from django.contrib.auth.models import User

    from odds.betting.models import Bet
    from odds.betting.services.bets import LegRequest, bet_place
    from odds.betting.services.wallet import wallet_payment_deposit, wallet_withdraw
    from odds.catalogue.models import Selection
    from odds.core.outbox import outbox_drain

    users = list(User.objects.order_by("id"))
    selections = list(Selection.objects.order_by("id"))
    accepted = []
    for n in range(count):
        user = users[n % len(users)]
        selection = selections[n % len(selections)]
        placement = bet_place(
            user=user,
            idempotency_key=uuid.uuid4().hex,
            stake=Decimal("1.50") + n,
            legs=[LegRequest(selection_id=selection.id, price_seen=selection.price)],
        )
        if placement.bet.status != Bet.Status.ACCEPTED:
            raise SystemExit(f"bet refused: {placement.bet.reject_code} {placement.bet.reject_message}")
        accepted.append(placement.bet.id)
        if n % 3 == 0:
            wallet_payment_deposit(user=user, amount=Decimal("20.00"), request_id=uuid.uuid4().hex)
        elif n % 3 == 1:
            wallet_withdraw(user=user, amount=Decimal("5.00"), request_id=uuid.uuid4().hex)
    relayed = 0
    while (result := outbox_drain(budget_s=30)).sent:
        relayed += result.sent
    return {"accepted": accepted, "relayed": relayed}


def state() -> dict[str, Any]:
    from odds.betting.models import Bet, LedgerEntry, Wallet
    from odds.betting.selectors.bets import wallets_unreconciled

    return {
        "bets": sorted(Bet.objects.values_list("id", flat=True)),
        "unreconciled": [wallet.id for wallet, _ in wallets_unreconciled()],
        "wallets": Wallet.objects.count(),
        "ledger_entries": LedgerEntry.objects.count(),
    }


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django

    django.setup()
    phase = argv[0]
    if phase == "seed":
        out = seed()
    elif phase == "bets":
        out = bets(int(argv[1]))
    elif phase == "state":
        out = state()
    else:
        raise SystemExit(f"unknown phase {phase!r}")
    sys.stdout.write(orjson.dumps(out).decode() + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
