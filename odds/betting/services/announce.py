"""The punter's own news on their websockets (``store.channels.punter_publish``), sent after commit."""

from __future__ import annotations

import logging

from django.db import transaction

from odds.betting.models import Bet, Wallet
from odds.core.connections import redis_shared
from odds.core.events import BetLegsDecided, BetSettled, LegResult
from store.channels import punter_publish

log = logging.getLogger(__name__)


def bet_title(*, bet: Bet) -> str:
    """What the punter backed, in words: the selection of a single, the size of an accumulator."""
    legs = list(bet.legs.select_related("selection"))
    if len(legs) == 1:
        return legs[0].selection.name
    return f"{len(legs)}-fold accumulator"


def _publish_after_commit(*, user_id: int, message: bytes, what: str) -> None:
    def publish() -> None:
        try:
            punter_publish(redis_shared(), user_id, message)
        except Exception:
            log.exception("announcing %s failed", what)

    transaction.on_commit(publish)


def bet_legs_announce(*, bet: Bet, legs: list[tuple[int, LegResult]]) -> None:
    """Tell the punter's websockets that these legs of ``bet`` (still open) were decided, once the
    transaction commits: the bets view then counts them (a won leg keeps the cash-out going)."""
    message = BetLegsDecided(bet_id=bet.id, legs=tuple(legs))
    _publish_after_commit(user_id=bet.user_id, message=message.to_json(), what=f"the decided legs of bet {bet.id}")


def bet_settled_announce(*, bet: Bet, wallet: Wallet) -> None:
    """Tell the punter's websockets that ``bet`` closed, once the transaction commits; a punter
    offline finds it in ``GET /api/bets`` and ``GET /api/wallet``."""
    message = BetSettled(
        bet_id=bet.id,
        status=bet.status,  # type: ignore[arg-type]
        title=bet_title(bet=bet),
        stake=bet.stake,
        payout=bet.payout,
        currency=wallet.currency,
        balance=wallet.balance,
    )
    _publish_after_commit(user_id=bet.user_id, message=message.to_json(), what=f"the settlement of bet {bet.id}")
