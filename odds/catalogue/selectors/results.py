"""The results a trader may enter for a market, from its kind (``reducers.market_kinds``): a
winning selection for most kinds, the match's outcome for kinds whose selections win together
(double chance), and void for every kind."""

from __future__ import annotations

from dataclasses import dataclass

from odds.catalogue.models import Market
from reducers.market_kinds import VOID, Names, ResultChoice, kind_of


@dataclass(frozen=True)
class ResultEntry:
    """One result on the trader's form: ``key`` is what the form sends, ``winners`` the winning
    selections' ids (``None`` voids the market)."""

    key: str
    label: str
    winners: list[int] | None

    @property
    def void(self) -> bool:
        return self.winners is None


def _ordered(market: Market) -> list:
    return sorted(market.selections.all(), key=lambda s: (s.display_order, s.id))


def market_result_choices(*, market: Market) -> list[ResultEntry]:
    """What a trader may enter as the market's result, void last. A winning selection is sent
    as its id; a match outcome (a kind resulted by the outcome) as ``home``, ``draw`` or ``away``."""
    selections = _ordered(market)
    kind = kind_of(market.kind)
    if kind is None or kind.entry == "selection":
        choices = [ResultEntry(str(s.id), f"{s.name} wins", [s.id]) for s in selections]
        return [*choices, ResultEntry(VOID, "Void market", None)]
    names = Names(home=market.event.home, away=market.event.away, line=market.line)
    entries = kind.result_choices(names=names, selections=[s.name for s in selections])
    return [_entry(choice, [s.id for s in selections]) for choice in entries]


def _entry(choice: ResultChoice, ids: list[int]) -> ResultEntry:
    winners = None if choice.winners is None else [ids[i] for i in choice.winners if i < len(ids)]
    return ResultEntry(choice.key, choice.label, winners)


def market_entered_by_outcome(*, market: Market) -> bool:
    """Whether the market's result is entered as the match outcome rather than a selection."""
    kind = kind_of(market.kind)
    return kind is not None and kind.entry == "outcome"
