"""Demo catalogue: realistic sports, competitions, fixtures and books."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from odds.betting.models import Wallet
from odds.betting.services.wallet import wallet_deposit
from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.catalogue.services.markets import market_definition_enqueue
from odds.core.roles import OPERATORS, TRADERS, roles_sync
from odds.feed.book import prices_from_probabilities

FOOTBALL = {
    "Premier League": [
        "Arsenal",
        "Aston Villa",
        "Bournemouth",
        "Brentford",
        "Brighton",
        "Chelsea",
        "Crystal Palace",
        "Everton",
        "Fulham",
        "Liverpool",
        "Manchester City",
        "Manchester United",
        "Newcastle",
        "Nottingham Forest",
        "Tottenham",
        "West Ham",
        "Wolves",
        "Leeds",
        "Burnley",
        "Sunderland",
    ],
    "La Liga": [
        "Real Madrid",
        "Barcelona",
        "Atlético Madrid",
        "Athletic Club",
        "Real Sociedad",
        "Villarreal",
        "Real Betis",
        "Sevilla",
        "Valencia",
        "Girona",
        "Osasuna",
        "Celta Vigo",
    ],
    "Serie A": [
        "Inter",
        "Milan",
        "Juventus",
        "Napoli",
        "Roma",
        "Lazio",
        "Atalanta",
        "Fiorentina",
        "Bologna",
        "Torino",
    ],
    "Bundesliga": [
        "Bayern Munich",
        "Borussia Dortmund",
        "RB Leipzig",
        "Bayer Leverkusen",
        "Eintracht Frankfurt",
        "Stuttgart",
        "Freiburg",
        "Wolfsburg",
        "Mainz",
        "Union Berlin",
    ],
}
TENNIS = {
    "ATP Finals": [
        "J. Sinner",
        "C. Alcaraz",
        "A. Zverev",
        "T. Fritz",
        "N. Djokovic",
        "D. Medvedev",
        "C. Ruud",
        "A. de Minaur",
    ],
    "WTA Finals": [
        "A. Sabalenka",
        "I. Swiatek",
        "C. Gauff",
        "J. Pegula",
        "E. Rybakina",
        "Q. Zheng",
        "J. Paolini",
        "M. Keys",
    ],
}
BASKETBALL = {
    "NBA": [
        "Boston Celtics",
        "Denver Nuggets",
        "Milwaukee Bucks",
        "Oklahoma City Thunder",
        "Minnesota Timberwolves",
        "New York Knicks",
        "Dallas Mavericks",
        "Phoenix Suns",
        "Los Angeles Lakers",
        "Golden State Warriors",
        "Miami Heat",
        "Philadelphia 76ers",
    ],
    "EuroLeague": [
        "Real Madrid Baloncesto",
        "Panathinaikos",
        "Olympiacos",
        "Fenerbahçe",
        "Barça Basket",
        "Monaco",
        "Anadolu Efes",
        "Maccabi Tel Aviv",
    ],
}

DEMO_PASSWORD = "sportsbook-demo"
DEMO_PUNTERS = ("alice", "bob", "carol")
DEMO_DEPOSIT = Decimal("1000.00")


@dataclass(frozen=True)
class DemoSummary:
    sports: int
    events: int
    markets: int
    selections: int


def _book(rng: random.Random, probabilities: list[float]) -> list[Decimal]:
    return prices_from_probabilities(probabilities, rng.uniform(0.04, 0.08))


def _football_markets(
    event: Event, rng: random.Random
) -> list[tuple[str, str, Decimal | None, list[str], list[float]]]:
    home_strength = rng.uniform(0.25, 0.65)
    draw = rng.uniform(0.2, 0.3)
    away = max(0.08, 1 - home_strength - draw)
    total = home_strength + draw + away
    over = rng.uniform(0.4, 0.65)
    btts = rng.uniform(0.4, 0.65)
    line = Decimal(rng.choice(["-1.5", "-0.5", "0.5", "1.5"]))
    cover = rng.uniform(0.4, 0.6)
    return [
        (
            Market.Kind.MATCH_RESULT,
            "Match result",
            None,
            [event.home, "Draw", event.away],
            [home_strength / total, draw / total, away / total],
        ),
        (
            Market.Kind.OVER_UNDER,
            "Total goals over/under 2.5",
            Decimal("2.5"),
            ["Over 2.5", "Under 2.5"],
            [over, 1 - over],
        ),
        (Market.Kind.BOTH_TEAMS_TO_SCORE, "Both teams to score", None, ["Yes", "No"], [btts, 1 - btts]),
        (
            Market.Kind.HANDICAP,
            f"Handicap {event.home} {line:+}",
            line,
            [f"{event.home} {line:+}", f"{event.away} {-line:+}"],
            [cover, 1 - cover],
        ),
    ]


def _two_way_markets(
    event: Event, rng: random.Random, total_line: str
) -> list[tuple[str, str, Decimal | None, list[str], list[float]]]:
    p = rng.uniform(0.2, 0.8)
    over = rng.uniform(0.42, 0.58)
    return [
        (Market.Kind.MATCH_WINNER, "Match winner", None, [event.home, event.away], [p, 1 - p]),
        (
            Market.Kind.OVER_UNDER,
            f"Total over/under {total_line}",
            Decimal(total_line),
            [f"Over {total_line}", f"Under {total_line}"],
            [over, 1 - over],
        ),
    ]


def demo_users_create() -> list[str]:
    """Demo punters and two staff, each in a role and none a superuser: ``trader`` (markets,
    results, voids) and ``operator`` (the operators' pages, ending channels); returns their
    usernames."""
    user_model = get_user_model()
    names = []
    roles_sync()
    staff = {"trader": TRADERS, "operator": OPERATORS}
    for username in (*DEMO_PUNTERS, *staff):
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"email": f"{username}@example.com"}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
        user.is_staff = username in staff
        user.is_superuser = False
        user.save()
        if username in staff:
            user.groups.set([Group.objects.get(name=staff[username])])
        names.append(username)
    return names


def demo_wallets_fund(*, amount: Decimal = DEMO_DEPOSIT) -> list[Wallet]:
    """Give every demo punter a wallet with one opening deposit. Idempotent: the deposit's
    reference makes a second run a no-op."""
    user_model = get_user_model()
    wallets = []
    for user in user_model.objects.filter(username__in=DEMO_PUNTERS).order_by("username"):
        wallet_deposit(user=user, amount=amount, reference="demo-opening-deposit")
        wallets.append(Wallet.objects.get(user=user))
    return wallets


def demo_catalogue_create(
    *, seed: int = 7, now: datetime | None = None, progress: Callable[[int, int], None] | None = None
) -> DemoSummary:
    """Create the demo catalogue unless it exists. Idempotent: a second call changes nothing."""
    rng = random.Random(seed)
    now = now or timezone.now()
    plan: list[tuple[str, str, int, dict[str, list[str]]]] = [
        ("football", "Football", 0, FOOTBALL),
        ("tennis", "Tennis", 1, TENNIS),
        ("basketball", "Basketball", 2, BASKETBALL),
    ]
    # In-play bet delays as books run them: longest where a goal changes everything.
    delays = {"football": 7, "tennis": 5, "basketball": 4}
    fixtures = []
    for slug, name, order, competitions in plan:
        sport, _ = Sport.objects.get_or_create(
            slug=slug, defaults={"name": name, "display_order": order, "in_play_delay_s": delays[slug]}
        )
        for comp_name, teams in competitions.items():
            competition, _ = Competition.objects.get_or_create(sport=sport, name=comp_name)
            shuffled = teams[:]
            rng.shuffle(shuffled)
            rounds = 3 if slug == "football" else 4
            for r in range(rounds):
                rng.shuffle(shuffled)
                for i in range(0, len(shuffled) - 1, 2):
                    fixtures.append((sport, competition, shuffled[i], shuffled[i + 1], r))
    created_events = 0
    for index, (sport, competition, home, away, r) in enumerate(fixtures, start=1):
        starts_at = now + timedelta(minutes=rng.randint(-80, 60) if r == 0 else rng.randint(60, 60 * 24 * 6))
        with transaction.atomic():
            event, created = Event.objects.get_or_create(
                competition=competition, home=home, away=away, defaults={"starts_at": starts_at}
            )
            if created:
                created_events += 1
                if starts_at <= now:
                    event.status = Event.Status.IN_PLAY
                    event.home_score = rng.randint(0, 2)
                    event.away_score = rng.randint(0, 2)
                    event.clock = f"{int((now - starts_at).total_seconds() // 60)}'"
                    event.save()
                if sport.slug == "football":
                    specs = _football_markets(event, rng)
                elif sport.slug == "tennis":
                    specs = _two_way_markets(event, rng, "22.5")
                else:
                    specs = _two_way_markets(event, rng, rng.choice(["212.5", "218.5", "224.5", "168.5"]))
                for order, (kind, mname, line, names, probs) in enumerate(specs):
                    market = Market.objects.create(event=event, kind=kind, name=mname, line=line, display_order=order)
                    Selection.objects.bulk_create(
                        Selection(market=market, name=sname, price=price, display_order=i)
                        for i, (sname, price) in enumerate(zip(names, _book(rng, probs), strict=True))
                    )
                    market_definition_enqueue(market=market)
        if progress is not None:
            progress(index, len(fixtures))
    return DemoSummary(
        sports=Sport.objects.count(),
        events=Event.objects.count(),
        markets=Market.objects.count(),
        selections=Selection.objects.count(),
    )
