"""Template filters of the trading pages."""

from __future__ import annotations

from django import template
from django.utils import timezone

from odds.catalogue.models import Market
from odds.catalogue.selectors.results import ResultEntry, market_result_choices
from reducers.suspensions import LONG_SUSPENSION_S, duration_text, trader_label

register = template.Library()


@register.filter
def result_choices(market: Market) -> list[ResultEntry]:
    """The results a trader may enter for ``market``, as its kind enters them."""
    return market_result_choices(market=market)


@register.filter
def margin_percent(market: Market) -> str:
    """The margin a trader set, as the field takes it ("6.25"); empty while the model's own holds."""
    if market.margin is None:
        return ""
    return f"{market.margin * 100:.2f}".rstrip("0").rstrip(".")


@register.inclusion_tag("odds/trading/_suspension.html")
def suspension(market: Market) -> dict[str, object]:
    """Why a suspended market is suspended, who did it and for how long (flagged when long)."""
    since = market.suspended_at
    seconds = (timezone.now() - since).total_seconds() if since is not None else None
    return {
        "market": market,
        "label": trader_label(market.suspension_reason),
        "by": market.suspended_by or "unknown",
        "since": since,
        "duration": "" if seconds is None else duration_text(seconds),
        "long": seconds is not None and seconds >= LONG_SUSPENSION_S,
        "long_after": LONG_SUSPENSION_S,
    }
