"""Trader operations beyond single-market changes: events from market templates, and ending
any subscriber channel.

Market changes themselves (suspend, resume, price, result, settle) are ``odds.catalogue.services.markets``;
the trader pages call those, so a trader's change takes the same path as the feed's.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db import transaction

from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.catalogue.services.markets import Actor, market_definition_enqueue, market_prices_publish
from odds.feed.book import prices_from_probabilities
from odds.streaming.services import streams

log = logging.getLogger(__name__)

TEMPLATE_MARGIN = 0.06


@dataclass(frozen=True)
class MarketTemplate:
    kind: str
    name: str
    line: Decimal | None
    selections: tuple[str, ...]
    probabilities: tuple[float, ...]


def market_templates(*, sport: str, home: str, away: str) -> list[MarketTemplate]:
    """The markets a new event opens with: 1X2, over/under 2.5 and both teams to score for
    football; match winner for tennis and basketball. Fair probabilities are a neutral start;
    traders and the feed move them from there."""
    if sport == "football":
        return [
            MarketTemplate(Market.Kind.MATCH_RESULT, "Match result", None, (home, "Draw", away), (0.42, 0.28, 0.30)),
            MarketTemplate(
                Market.Kind.OVER_UNDER,
                "Total goals over/under 2.5",
                Decimal("2.5"),
                ("Over 2.5", "Under 2.5"),
                (0.52, 0.48),
            ),
            MarketTemplate(Market.Kind.BOTH_TEAMS_TO_SCORE, "Both teams to score", None, ("Yes", "No"), (0.5, 0.5)),
        ]
    if sport in ("tennis", "basketball"):
        return [MarketTemplate(Market.Kind.MATCH_WINNER, "Match winner", None, (home, away), (0.5, 0.5))]
    raise ValueError(f"no market templates for sport {sport!r}")


TEMPLATE_SPORTS = {"football": "Football", "tennis": "Tennis", "basketball": "Basketball"}


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
    """Create an event with its template markets priced by the book maths; every market's
    definition is queued for the markets topic and its opening book produced to the price topic
    after commit, as any feed update."""
    if sport not in TEMPLATE_SPORTS:
        raise ValueError(f"no market templates for sport {sport!r}")
    home, away, competition = home.strip(), away.strip(), competition.strip()
    if not home or not away or home == away:
        raise ValueError("an event needs two different participants")
    if not competition:
        raise ValueError("name the competition")
    rng = rng or random.Random()
    with transaction.atomic():
        sport_row, _ = Sport.objects.get_or_create(slug=sport, defaults={"name": TEMPLATE_SPORTS[sport]})
        comp, _ = Competition.objects.get_or_create(sport=sport_row, name=competition)
        event = Event.objects.create(competition=comp, home=home, away=away, starts_at=starts_at)
        market_ids = []
        for order, template in enumerate(market_templates(sport=sport, home=home, away=away)):
            market = Market.objects.create(
                event=event, kind=template.kind, name=template.name, line=template.line, display_order=order
            )
            prices = prices_from_probabilities(list(template.probabilities), rng.uniform(0.05, TEMPLATE_MARGIN + 0.01))
            Selection.objects.bulk_create(
                Selection(market=market, name=name, price=price, display_order=i)
                for i, (name, price) in enumerate(zip(template.selections, prices, strict=True))
            )
            market_definition_enqueue(market=market)
            market_ids.append(market.id)

        def publish() -> None:
            for market_id in market_ids:
                try:
                    market_prices_publish(market_id=market_id)
                except Exception:
                    log.exception("publishing the opening book of market %s failed", market_id)

        transaction.on_commit(publish)
    log.info("event %s created by %s with markets %s", event.id, by, market_ids)
    return event


def channel_end(*, channel_id: str, by: Actor = None) -> bool:
    """End any subscriber channel through the command topic, as its owner's unsubscribe does.
    Returns False when no such channel is live (ending twice is harmless)."""
    ended = streams.stream_end(channel_id=channel_id)
    if ended:
        log.info("channel %s ended by %s", channel_id, by)
    return ended
