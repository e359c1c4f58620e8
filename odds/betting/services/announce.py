"""The punter's own news on their websockets (``keys.punter_channel``), sent after commit."""

from __future__ import annotations

import logging

from django.db import transaction

from odds.betting.models import Bet, Wallet
from odds.core.connections import redis_shared
from odds.core.events import BetSettled
from reducers import keys

log = logging.getLogger(__name__)


def bet_title(*, bet: Bet) -> str:
    """What the punter backed, in words: the selection of a single, the size of an accumulator."""
    legs = list(bet.legs.select_related("selection"))
    if len(legs) == 1:
        return legs[0].selection.name
    return f"{len(legs)}-fold accumulator"


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

    def publish() -> None:
        try:
            redis_shared().publish(keys.punter_channel(bet.user_id), message.to_json())
        except Exception:
            log.exception("announcing the settlement of bet %s failed", bet.id)

    transaction.on_commit(publish)
