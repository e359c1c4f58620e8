"""Template filters of the trading pages."""

from __future__ import annotations

from django import template

from odds.catalogue.models import Market
from odds.catalogue.selectors.results import ResultEntry, market_result_choices

register = template.Library()


@register.filter
def result_choices(market: Market) -> list[ResultEntry]:
    """The results a trader may enter for ``market``, as its kind enters them."""
    return market_result_choices(market=market)
