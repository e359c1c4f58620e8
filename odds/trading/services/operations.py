"""Trader operations beyond single-market changes: events from market templates, and ending
any subscriber channel.

Market changes themselves (suspend, resume, price, result, settle) are ``odds.catalogue.services.markets``;
the trader pages call those, so a trader's change takes the same path as the feed's.
"""

from __future__ import annotations

import logging
import random
from datetime import datetime

from django.db import transaction

from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.catalogue.services.markets import Actor, market_definition_enqueue
from odds.core import task_names
from odds.core.task_names import enqueue
from odds.feed.book import prices_from_probabilities
from odds.feed.pricing import default_params, opening_chances
from odds.streaming.services import streams
from reducers.market_kinds import SPORTS, MarketSpec, event_markets

log = logging.getLogger(__name__)

TEMPLATE_MARGIN = 0.06


def market_templates(*, sport: str, home: str, away: str) -> list[tuple[MarketSpec, list[float]]]:
    """The markets a new event opens with (the kinds its sport offers, each at its first line)
    and their fair chances from the sport's model at neutral strengths: a neutral start that
    traders and the feed move from there."""
    params = default_params(sport)
    return [
        (spec, opening_chances(sport=sport, params=params, kind=spec.kind, line=spec.line))
        for spec in event_markets(sport=sport, home=home, away=away)
    ]


def event_create(
    *,
    sport: str,
    competition: str,
    home: str,
    away: str,
    starts_at: datetime,
    by: Actor = None,
    rng: random.Random | None = None,
) -> Event:
    """Create an event with its template markets priced by its sport's model; every market's
    definition is queued for the markets topic, and its opening book produced to the price topic
    by a task once the markets table holds the definition (no price of an unknown market)."""
    if sport not in SPORTS:
        raise ValueError(f"no market templates for sport {sport!r}")
    home, away, competition = home.strip(), away.strip(), competition.strip()
    if not home or not away or home == away:
        raise ValueError("an event needs two different participants")
    if not competition:
        raise ValueError("name the competition")
    rng = rng or random.Random()
    with transaction.atomic():
        sport_row, _ = Sport.objects.get_or_create(slug=sport, defaults={"name": SPORTS[sport].name})
        comp, _ = Competition.objects.get_or_create(sport=sport_row, name=competition)
        event = Event.objects.create(competition=comp, home=home, away=away, starts_at=starts_at)
        market_ids = []
        for order, (spec, chances) in enumerate(market_templates(sport=sport, home=home, away=away)):
            market = Market.objects.create(
                event=event, kind=spec.kind.key, name=spec.name, line=spec.line, display_order=order
            )
            prices = prices_from_probabilities(chances, rng.uniform(0.05, TEMPLATE_MARGIN + 0.01))
            Selection.objects.bulk_create(
                Selection(market=market, name=name, price=price, display_order=i)
                for i, (name, price) in enumerate(zip(spec.selections, prices, strict=True))
            )
            market_definition_enqueue(market=market)
            market_ids.append(market.id)

        # The opening books go out once the markets table holds the definitions (a price
        # ahead of its definition would be a dead letter), from a task, not this request.
        transaction.on_commit(lambda: enqueue(task_names.MARKETS_OPENING_PUBLISH, market_ids))
    log.info("event %s created by %s with markets %s", event.id, by, market_ids)
    return event


def channel_end(*, channel_id: str, by: Actor = None) -> bool:
    """End any subscriber channel through the command topic, as its owner's unsubscribe does.
    Returns False when no such channel is live (ending twice is harmless)."""
    ended = streams.stream_end(channel_id=channel_id)
    if ended:
        log.info("channel %s ended by %s", channel_id, by)
    return ended
