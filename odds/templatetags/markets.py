"""Template filters of the punters' market boxes."""

from __future__ import annotations

from django import template

from odds.catalogue.models import Market
from reducers.suspensions import punter_text

register = template.Library()


@register.filter
def suspended_because(market: Market) -> str:
    """Why a suspended market is suspended, in the punter's words ("Goal — back soon")."""
    return punter_text(market.suspension_reason)
