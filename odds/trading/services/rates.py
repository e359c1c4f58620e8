"""Setting the exchange rates the desk converts at, and putting them to work: mirrored into Redis
for the liability reducer and the desk, every book converted and ranked again, the open desk pages
sent the new figures."""

from __future__ import annotations

import time
from decimal import Decimal

from django.db import transaction

from odds.audit.models import AuditEntry
from odds.audit.services.audit import Actor, audit_record, staff_actor
from odds.core import task_names
from odds.core.connections import redis_shared
from odds.trading.models import ExchangeRate
from odds.trading.selectors.rates import exchange_rate_units, exchange_rates_current
from reducers import frames
from reducers.liability import liability_frame, market_book_frames, names_of
from reducers.rates import DEFAULT_RATES, rate_check
from reducers.rules import BOOK_CURRENCY
from store.liability import BookStore
from store.markets import MarketStore

# How many markets one ``desk.liability`` frame carries after a rate change.
FRAME_MARKETS = 200


def exchange_rate_set(*, currency: str, rate: Decimal, by: Actor, note: str = "") -> ExchangeRate:
    """Set ``currency``'s rate into the book's currency (a new row; the old ones stay as its
    history) and record it in the audit log; once committed, the books are converted at it
    (``exchange_rates_apply``, a task). ``RateRefused`` for a rate that cannot be set."""
    rate = rate_check(currency=currency, rate=rate)
    before = next((r.rate for r in exchange_rates_current() if r.currency == currency), None)
    with transaction.atomic():
        row = ExchangeRate.objects.create(currency=currency, rate=rate, set_by=staff_actor(by), note=note)
        audit_record(
            by=by,
            kind=AuditEntry.Kind.RATE_SET,
            object_type="exchange_rate",
            object_id=currency,
            label=f"{currency} in {BOOK_CURRENCY}",
            before={"rate": before} if before is not None else {},
            after={"rate": rate},
            reason=note,
        )
        transaction.on_commit(lambda: task_names.enqueue(task_names.EXCHANGE_RATES_APPLY), robust=True)
    return row


def exchange_rates_default(*, using: str = "default") -> list[str]:
    """Give each currency that has no rate yet its default (``reducers.rates.DEFAULT_RATES``);
    returns the currencies given one."""
    given = []
    for currency, rate in DEFAULT_RATES.items():
        if not ExchangeRate.objects.using(using).filter(currency=currency).exists():
            ExchangeRate.objects.using(using).create(currency=currency, rate=rate, note="default rate")
            given.append(currency)
    return given


def exchange_rates_apply() -> int:
    """Make the current rates the ones the books are converted at: when they differ from those in
    Redis, mirror them, convert and rank every book again and publish every market's new figures
    on the desk's channel (open risk pages move at once). Returns the markets published (0 when
    nothing changed). Run after each change and by beat (so a fresh Redis gets the rates)."""
    client = redis_shared()
    store = BookStore(client)
    if not store.rates_set(exchange_rate_units()):
        return 0
    market_ids = store.rerank()
    markets = MarketStore(client)
    for start in range(0, len(market_ids), FRAME_MARKETS):
        chunk = market_ids[start : start + FRAME_MARKETS]
        books, worsts, rates = store.books(chunk)
        definitions = markets.definitions(chunk)
        names = {market_id: names_of(definitions.get(market_id)) for market_id in chunk}
        body = market_book_frames(books, names=names, worsts=worsts, rates=rates)
        store.publish_liability(frames.encode(liability_frame(body, ts=int(time.time() * 1000))))
    return len(market_ids)
