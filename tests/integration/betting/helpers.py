"""Request builders shared by the betting tests."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from confluent_kafka import Consumer, Message
from django.conf import settings

from odds.catalogue.models import Market, Selection
from tests.conftest import wait_for


def bet_body(*legs: tuple[int, str], stake: str = "10.00", policy: str = "none", key: str | None = None) -> dict:
    return {
        "v": 1,
        "idempotency_key": key or uuid.uuid4().hex,
        "stake": stake,
        "price_policy": policy,
        "selections": [{"selection_id": selection_id, "price": price} for selection_id, price in legs],
    }


def first_selection(market: Market) -> Selection:
    return market.selections.order_by("display_order")[0]


def error_of(response) -> tuple[int, str, str | None]:
    """An API error response as ``(status, code, field)``."""
    error = response.json()["error"]
    return response.status_code, error["code"], error.get("field")


def bet_accepted(user, *selections: Selection, stake: str = "10.00"):
    """Place a bet through the service at the selections' catalogue prices; it must be accepted."""
    from decimal import Decimal

    from odds.betting.models import Bet
    from odds.betting.services.bets import LegRequest, bet_place

    placement = bet_place(
        user=user,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal(stake),
        legs=[LegRequest(selection_id=s.id, price_seen=s.price) for s in selections],
    )
    assert placement.bet.status == Bet.Status.ACCEPTED, placement.bet.reject_message
    return placement.bet


def selections_of(market: Market) -> list[Selection]:
    return list(market.selections.order_by("display_order"))


def consume_until(topic: str, match: Callable[[Message], bool], *, timeout: float = 30) -> Message:
    consumer = Consumer(
        {
            "bootstrap.servers": settings.KAFKA_BOOTSTRAP_SERVERS,
            "group.id": f"outbox-test-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    try:

        def poll() -> list[Message]:
            # A list, because a Message is falsy when its value is empty (a tombstone).
            message = consumer.poll(0.5)
            if message is None or message.error() is not None or not match(message):
                return []
            return [message]

        return wait_for(poll, timeout=timeout, interval=0, what=f"a matching record on {topic}")[0]
    finally:
        consumer.close()


def corrected(market: Market, winner: Selection) -> dict[int, str]:
    """A resettlement's results for ``market``: ``winner`` won, the others lost."""
    return {s.id: ("won" if s.id == winner.id else "lost") for s in selections_of(market)}


def resettle(market: Market, results: dict[int, str], trader, reason: str = "wrong scorer recorded"):
    """Preview and confirm a resettlement of ``market`` as ``trader`` would."""
    from odds.betting.services.resettlement import market_resettle, resettlement_preview

    preview = resettlement_preview(market=market, results=results)
    return market_resettle(market_id=market.id, results=results, digest=preview.digest, by=trader, reason=reason)
