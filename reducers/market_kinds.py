"""Market kinds, declared once: what each kind is called, the selections it opens with, what its
line means, which selections win on a final result, and how a trader enters its result.

Everything else derives from this registry: the catalogue's choices (``Market.kind``), the markets
a new event opens with (the trading templates) and the demo's markets, the feed's prices (a kind's
selection probabilities over the sport model's distribution of final results) and its results at
full time, and the trading pages' result entry. ``SPORTS`` says which kinds each sport offers, at
which lines, and what a side scores there (goals, games, points).

A kind's selection order is part of its definition: the catalogue stores the selections in the
order ``selection_names`` gives them, and ``winners`` answers with indexes in that order.
docs/architecture.md ("How to add a market kind") names the files a new kind touches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Final, Literal, NamedTuple

Side = Literal["home", "away"]


class Outcome(NamedTuple):
    """How a match ended, as markets are settled on it: each side's score in the sport's own
    unit (goals, games won, points) and, where the score alone does not name the winner, the side
    that won (tennis is won by sets, a level basketball game in overtime)."""

    home: int
    away: int
    winner: Side | None = None

    def winning_side(self) -> Side | None:
        """The side that won the match, or ``None`` for a draw."""
        if self.winner is not None:
            return self.winner
        return "home" if self.home > self.away else "away" if self.away > self.home else None


class LineRule(StrEnum):
    """What a market's line means."""

    NONE = "none"  # the kind has no line
    TOTAL = "total"  # the line splits both sides' combined score: over, under
    HANDICAP = "handicap"  # the line is added to the home side's score (the away side takes its opposite)


@dataclass(frozen=True)
class Names:
    """What a kind's market and selection names are filled with."""

    home: str
    away: str
    line: Decimal | None = None
    unit: str = "goals"  # what a side scores in the sport (``SportMarkets.unit``)


@dataclass(frozen=True)
class ResultChoice:
    """One result a trader may enter for a market: ``key`` is what the form sends; ``winners``
    are selection indexes, ``None`` voids the market (every stake back)."""

    key: str
    label: str
    winners: tuple[int, ...] | None


# A kind's rule: the winning selections for an outcome and the market's line (a float here: lines
# are halves and quarters, exact in binary, and whole scores compare with them exactly).
Decide = Callable[[Outcome, float | None], tuple[int, ...] | None]

VOID: Final = "void"
# A result entered as the match's outcome rather than as a winning selection: the kinds whose
# several selections win together (double chance) are resulted this way.
MATCH_OUTCOMES: Final = (
    ("home", "{home} win", Outcome(1, 0)),
    ("draw", "Draw", Outcome(0, 0)),
    ("away", "{away} win", Outcome(0, 1)),
)


@dataclass(frozen=True)
class MarketKind:
    """One kind of market. ``decide`` answers, for a final outcome and the market's line, the
    indexes of the winning selections (``None``: the market is void, e.g. a total landing on its
    line). ``entry`` is how a trader enters the result: ``selection`` picks the one winner,
    ``outcome`` picks the match's outcome (home win, draw, away win) and the winners follow."""

    key: str
    label: str
    size: int  # how many selections a market of this kind has
    line_rule: LineRule
    market_name: Callable[[Names], str]
    selection_names: Callable[[Names], tuple[str, ...]]
    decide: Decide
    entry: Literal["selection", "outcome"] = "selection"
    winning: int = 1  # how many selections win together, whatever the outcome (a book's chances sum to it)

    def winners(self, outcome: Outcome, *, line: Decimal | None, selections: int) -> tuple[int, ...] | None:
        """The winning selections' indexes; ``None`` voids the market. A market whose line or
        number of selections does not fit its kind is void rather than guessed at."""
        if selections != self.size or (self.line_rule is not LineRule.NONE and line is None):
            return None
        return self.decide(outcome, None if line is None else float(line))

    def probabilities(self, distribution: Iterable[tuple[Outcome, float]], *, line: Decimal | None) -> list[float]:
        """Each selection's chance of winning over a distribution of final outcomes, given that
        the market is not void (a total landing on a whole-number line is void, so its chance is
        left out and the rest scaled up). Selections that win together each count the outcome."""
        won = [0.0] * self.size
        settled = 0.0
        if self.line_rule is not LineRule.NONE and line is None:
            return [self.winning / self.size] * self.size
        value = None if line is None else float(line)
        decide = self.decide
        for outcome, probability in distribution:
            indexes = decide(outcome, value)
            if indexes is None:
                continue
            settled += probability
            for index in indexes:
                won[index] += probability
        if settled <= 0:
            return [self.winning / self.size] * self.size
        return [p / settled for p in won]

    def result_choices(self, *, names: Names, selections: Sequence[str]) -> list[ResultChoice]:
        """What a trader may enter as the result, void last."""
        if self.entry == "outcome":
            choices = [
                ResultChoice(
                    key,
                    label.format(home=names.home, away=names.away),
                    self.decide(outcome, None if names.line is None else float(names.line)),
                )
                for key, label, outcome in MATCH_OUTCOMES
            ]
        else:
            choices = [ResultChoice(str(index), f"{name} wins", (index,)) for index, name in enumerate(selections)]
        return [*choices, ResultChoice(VOID, "Void market", None)]

    def result_choice(self, *, key: str, names: Names, selections: Sequence[str]) -> ResultChoice | None:
        """The choice a form sent, or ``None`` when the kind offers no such result."""
        return next((c for c in self.result_choices(names=names, selections=selections) if c.key == key), None)


def _one_x_two(outcome: Outcome, line: float | None) -> tuple[int, ...]:
    side = outcome.winning_side()
    return (0,) if side == "home" else (2,) if side == "away" else (1,)


def _double_chance(outcome: Outcome, line: float | None) -> tuple[int, ...]:
    # Home or draw, draw or away, home or away: two of the three win whatever the result.
    side = outcome.winning_side()
    return (0, 2) if side == "home" else (1, 2) if side == "away" else (0, 1)


def _match_winner(outcome: Outcome, line: float | None) -> tuple[int, ...] | None:
    side = outcome.winning_side()
    return None if side is None else (0,) if side == "home" else (1,)


def _over_under(outcome: Outcome, line: float | None) -> tuple[int, ...] | None:
    assert line is not None
    total = outcome.home + outcome.away
    return None if total == line else (0,) if total > line else (1,)


def _handicap(outcome: Outcome, line: float | None) -> tuple[int, ...] | None:
    assert line is not None
    adjusted = outcome.home + line
    return None if adjusted == outcome.away else (0,) if adjusted > outcome.away else (1,)


def _both_score(outcome: Outcome, line: float | None) -> tuple[int, ...]:
    return (0,) if outcome.home > 0 and outcome.away > 0 else (1,)


def _signed(line: Decimal | None) -> str:
    return f"{line:+}" if line is not None else ""


def _negated(line: Decimal | None) -> str:
    return f"{-line:+}" if line is not None else ""


MATCH_RESULT: Final = MarketKind(
    key="match_result",
    label="Match result (1X2)",
    size=3,
    line_rule=LineRule.NONE,
    market_name=lambda n: "Match result",
    selection_names=lambda n: (n.home, "Draw", n.away),
    decide=_one_x_two,
)
OVER_UNDER: Final = MarketKind(
    key="over_under",
    label="Total over/under",
    size=2,
    line_rule=LineRule.TOTAL,
    market_name=lambda n: f"Total {n.unit} over/under {n.line}",
    selection_names=lambda n: (f"Over {n.line}", f"Under {n.line}"),
    decide=_over_under,
)
BOTH_TEAMS_TO_SCORE: Final = MarketKind(
    key="btts",
    label="Both teams to score",
    size=2,
    line_rule=LineRule.NONE,
    market_name=lambda n: "Both teams to score",
    selection_names=lambda n: ("Yes", "No"),
    decide=_both_score,
)
DOUBLE_CHANCE: Final = MarketKind(
    key="double_chance",
    label="Double chance",
    size=3,
    line_rule=LineRule.NONE,
    market_name=lambda n: "Double chance",
    selection_names=lambda n: (f"{n.home} or draw", f"Draw or {n.away}", f"{n.home} or {n.away}"),
    decide=_double_chance,
    entry="outcome",
    winning=2,
)
HANDICAP: Final = MarketKind(
    key="handicap",
    label="Handicap",
    size=2,
    line_rule=LineRule.HANDICAP,
    market_name=lambda n: f"Handicap {n.home} {_signed(n.line)}",
    selection_names=lambda n: (f"{n.home} {_signed(n.line)}", f"{n.away} {_negated(n.line)}"),
    decide=_handicap,
)
MATCH_WINNER: Final = MarketKind(
    key="match_winner",
    label="Match winner",
    size=2,
    line_rule=LineRule.NONE,
    market_name=lambda n: "Match winner",
    selection_names=lambda n: (n.home, n.away),
    decide=_match_winner,
)

KINDS: Final[dict[str, MarketKind]] = {
    kind.key: kind for kind in (MATCH_RESULT, OVER_UNDER, BOTH_TEAMS_TO_SCORE, DOUBLE_CHANCE, HANDICAP, MATCH_WINNER)
}
# The catalogue's choices for ``Market.kind``: (stored value, label).
CHOICES: Final = tuple((kind.key, kind.label) for kind in KINDS.values())


def kind_of(key: str) -> MarketKind | None:
    """The kind stored as ``key``; ``None`` for a kind this registry does not know."""
    return KINDS.get(key)


@dataclass(frozen=True)
class Offer:
    """A kind a sport offers, at ``lines`` (the first is the line a trader's new event opens at;
    the demo picks among them). A kind without a line has none."""

    kind: MarketKind
    lines: tuple[Decimal, ...] = ()

    def __post_init__(self) -> None:
        if (self.kind.line_rule is LineRule.NONE) != (not self.lines):
            raise ValueError(f"{self.kind.key}: a kind with a line is offered at lines, one without at none")


@dataclass(frozen=True)
class SportMarkets:
    """The markets of one sport: what a side scores (named in totals) and the kinds offered, in
    the order an event shows them (the first is the event's headline market)."""

    name: str
    unit: str
    offers: tuple[Offer, ...] = field(default_factory=tuple)


def _lines(*values: str) -> tuple[Decimal, ...]:
    return tuple(Decimal(v) for v in values)


SPORTS: Final[dict[str, SportMarkets]] = {
    "football": SportMarkets(
        "Football",
        "goals",
        (
            Offer(MATCH_RESULT),
            Offer(OVER_UNDER, _lines("2.5")),
            Offer(BOTH_TEAMS_TO_SCORE),
            Offer(DOUBLE_CHANCE),
            Offer(HANDICAP, _lines("-0.5", "-1.5", "0.5", "1.5")),
        ),
    ),
    "tennis": SportMarkets("Tennis", "games", (Offer(MATCH_WINNER), Offer(OVER_UNDER, _lines("22.5")))),
    "basketball": SportMarkets(
        "Basketball",
        "points",
        (Offer(MATCH_WINNER), Offer(OVER_UNDER, _lines("219.5", "212.5", "224.5", "161.5", "165.5"))),
    ),
}


@dataclass(frozen=True)
class MarketSpec:
    """A market to open on an event: its kind, line, name and selection names, in order."""

    kind: MarketKind
    line: Decimal | None
    name: str
    selections: tuple[str, ...]


def market_spec(*, kind: MarketKind, sport: str, home: str, away: str, line: Decimal | None) -> MarketSpec:
    """A market of ``kind`` on ``home`` v ``away`` at ``line``, named as its kind names it."""
    names = Names(home=home, away=away, line=line, unit=SPORTS[sport].unit if sport in SPORTS else "points")
    return MarketSpec(kind, line, kind.market_name(names), kind.selection_names(names))


def event_markets(
    *, sport: str, home: str, away: str, line_of: Callable[[Offer], Decimal | None] | None = None
) -> list[MarketSpec]:
    """The markets an event of ``sport`` opens with, in display order; ``line_of`` picks each
    offer's line (by default the first it is offered at). Raises ``ValueError`` for a sport
    this registry does not know."""
    if sport not in SPORTS:
        raise ValueError(f"no markets for sport {sport!r}")
    pick = line_of or (lambda offer: offer.lines[0] if offer.lines else None)
    return [
        market_spec(kind=offer.kind, sport=sport, home=home, away=away, line=pick(offer))
        for offer in SPORTS[sport].offers
    ]


def offered_kinds(sport: str) -> list[str]:
    """The labels of the kinds ``sport`` offers, in display order (for the trader's page)."""
    return [offer.kind.label for offer in SPORTS.get(sport, SportMarkets(sport, "points")).offers]
