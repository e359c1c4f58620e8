"""Weekly digest email to punters with open bets, and the feed's safety nets: markets of a match
no feed took in play, and in-play markets of a feed that stopped."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone

from odds.betting.models import Bet, BetLeg
from odds.catalogue.models import Event, Market
from odds.catalogue.services.markets import markets_status_set
from odds.core.connections import redis_shared
from reducers.money import money_text
from reducers.suspensions import BY_FEED_WATCH, Reason
from store.pipeline import digest_sent_mark, digest_sent_read, heartbeat_read

log = logging.getLogger(__name__)

KICKOFF_GRACE = timedelta(seconds=60)


@dataclass(frozen=True)
class DigestOutcome:
    sent: list[int]
    skipped: list[int]


def digest_week(now: datetime) -> str:
    """The ISO week a digest belongs to (``2026-W47``): one digest per user and week."""
    year, week, _ = now.isocalendar()
    return f"{year}-W{week:02d}"


def digest_recipients() -> list[int]:
    """Ids of active users with at least one open bet and an email address."""
    return list(
        User.objects.filter(is_active=True, bets__status__in=Bet.OPEN_STATUSES)
        .exclude(email="")
        .distinct()
        .order_by("id")
        .values_list("id", flat=True)
    )


def digest_body(*, user: User, bets: list[Bet], currency: str) -> str:
    """The digest's text: each open bet, its amounts in the wallet's ``currency``."""
    lines = [f"Hello {user.get_username()},", "", f"You have {len(bets)} open bet(s):", ""]
    for bet in bets:
        legs = "; ".join(f"{leg.selection.name} ({leg.market.event.name}) @ {leg.price}" for leg in bet.legs.all())
        stake, ret = money_text(bet.stake, currency), money_text(bet.potential_return, currency)
        lines.append(f"- #{bet.id} {bet.kind}: stake {stake}, potential return {ret} — {legs}")
    lines += ["", "Good luck!", "Sportsbook"]
    return "\n".join(lines)


def digest_send(*, user_id: int, now: datetime | None = None) -> bool:
    """Email one user the digest of their open bets, at most once per ISO week (a cache marker
    set after sending makes a retried or duplicated task a no-op). Returns whether it was sent."""
    from django.core.cache import cache

    now = now or timezone.now()
    week = digest_week(now)
    if digest_sent_read(cache, week=week, user_id=user_id):
        return False
    user = User.objects.select_related("wallet").get(id=user_id)
    bets = list(
        Bet.objects.filter(user=user, status__in=Bet.OPEN_STATUSES)
        .order_by("placed_at", "id")
        .prefetch_related(Prefetch("legs", queryset=BetLeg.objects.select_related("selection", "market__event")))
    )
    if not bets or not user.email:
        return False
    send_mail(
        subject=f"Your open bets — week {week}",
        message=digest_body(user=user, bets=bets, currency=user.wallet.currency),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[user.email],
    )
    digest_sent_mark(cache, week=week, user_id=user_id, ttl_s=8 * 24 * 3600)
    return True


# The feed beats every second; this long without a beat, its in-play prices are stale. The beat
# lives 60 s, so a feed gone for longer is no longer seen here; its markets stay suspended until
# it comes back and lifts the suspension.
FEED_LOST_AFTER_S = 20


def feed_lost_suspend(*, now_s: float | None = None) -> list[int]:
    """Suspend the open markets of events in play when the feed that prices them has stopped
    beating (reason ``feed_lost``, by ``feed watch``): no stale in-play price stays open. A
    feed that never ran leaves no beat and nothing is done. Returns the market ids."""
    beat = heartbeat_read(redis_shared(), "feed")
    if beat is None:
        return []
    age = (now_s if now_s is not None else time.time()) - beat
    if age < FEED_LOST_AFTER_S:
        return []
    market_ids = list(
        Market.objects.filter(event__status=Event.Status.IN_PLAY, status=Market.Status.OPEN).values_list(
            "id", flat=True
        )
    )
    if not market_ids:
        return []
    changed = markets_status_set(
        market_ids=market_ids,
        status=Market.Status.SUSPENDED,
        only_from=[Market.Status.OPEN],
        reason=Reason.FEED_LOST,
        by=BY_FEED_WATCH,
    )
    log.warning("the feed's last beat was %.0f s ago: suspended %d in-play markets", age, len(changed))
    return [m.id for m in changed]


def kickoff_overdue_suspend(*, now: datetime | None = None) -> list[int]:
    """Suspend the open markets of events past kick-off (plus a grace the feed normally uses to
    take them in play) that are still scheduled: no pre-match price is left open once the match
    has started. Idempotent: suspended markets are not touched again. Returns the market ids."""
    now = now or timezone.now()
    overdue = Event.objects.filter(status=Event.Status.SCHEDULED, starts_at__lte=now - KICKOFF_GRACE)
    market_ids = list(Market.objects.filter(event__in=overdue, status=Market.Status.OPEN).values_list("id", flat=True))
    if not market_ids:
        return []
    with transaction.atomic():
        # The feed takes a match in play at its kick-off; one still waiting has no live feed.
        changed = markets_status_set(
            market_ids=market_ids,
            status=Market.Status.SUSPENDED,
            only_from=[Market.Status.OPEN],
            reason=Reason.FEED_LOST,
            by=BY_FEED_WATCH,
        )
    log.info("suspended %d markets of events past kick-off", len(changed))
    return [m.id for m in changed]
