"""The bet slip's limits, handed to the page from the rules the server places bets by."""

from __future__ import annotations

from django import template

from odds.services.placement import MAX_LEGS, MAX_RETURN, MAX_STAKE, MIN_STAKE

register = template.Library()


@register.simple_tag
def slip_limits() -> dict[str, object]:
    """The limits as the slip reads them (``SlipLimits`` in frontend/src/slip.ts)."""
    return {"minStake": str(MIN_STAKE), "maxStake": str(MAX_STAKE), "maxReturn": str(MAX_RETURN), "maxLegs": MAX_LEGS}
