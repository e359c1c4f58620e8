"""Demo catalogue: realistic sports, competitions, fixtures and books."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from allauth.mfa.models import Authenticator
from allauth.mfa.totp.internal.auth import TOTP
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
from odds.feed.pricing import EventPricer, Params, fair_total_line
from odds.feed.pricing.basketball import BasketballRates
from odds.feed.pricing.football import FootballRates
from odds.feed.pricing.tennis import ServeChances
from reducers.market_kinds import LineRule, MarketSpec, Offer, event_markets

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
# The demo staff's authenticator (TOTP), published like their password: add it to an
# authenticator app by hand (base32) to sign in to the staff pages of a demo stack.
DEMO_TOTP_SECRET = "SPORTSBOOKDEMOSTAFFTOTPSECRET234"
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


# Points a basketball game of the competition averages, both sides together.
BASKETBALL_TOTALS = {"NBA": 226.0, "EuroLeague": 162.0}
# A point on serve at each tour's finals (men win more of their service points).
SERVE_AVERAGES = {"ATP Finals": 0.64, "WTA Finals": 0.57}


def demo_params(*, sport: str, competition: str, rng: random.Random) -> Params:
    """A pairing's strengths for its sport's model: how the demo's books differ match by match."""
    if sport == "football":
        return FootballRates(rng.uniform(0.8, 2.2), rng.uniform(0.6, 1.8))
    if sport == "tennis":
        serve, edge = SERVE_AVERAGES.get(competition, 0.62), rng.uniform(-0.07, 0.07)
        return ServeChances(serve + edge / 2, serve - edge / 2)
    total = BASKETBALL_TOTALS.get(competition, 218.0)
    return BasketballRates(margin=rng.uniform(-8.0, 10.0), total=rng.gauss(total, 5.0))


def demo_markets(
    *, event: Event, sport: str, competition: str, rng: random.Random
) -> list[tuple[MarketSpec, list[float]]]:
    """The event's markets (every kind its sport offers, reducers/market_kinds.py) and their
    fair chances from the sport's model: totals at the offered line nearest an even chance,
    handicaps at a line picked at random."""
    pricer = EventPricer(sport=sport, params=demo_params(sport=sport, competition=competition, rng=rng))

    def line_of(offer: Offer) -> Decimal | None:
        if offer.kind.line_rule is LineRule.TOTAL:
            return fair_total_line(pricer=pricer, lines=offer.lines)
        return rng.choice(offer.lines) if offer.lines else None

    specs = event_markets(sport=sport, home=event.home, away=event.away, line_of=line_of)
    return [(spec, list(pricer.fair(spec.kind, spec.line))) for spec in specs]


def demo_users_create() -> list[str]:
    """Demo punters and two staff, each in a role and none a superuser: ``trader`` (markets,
    results, voids) and ``operator`` (the operators' pages, ending channels), each with the demo
    authenticator (``DEMO_TOTP_SECRET``) the staff pages need; returns their usernames."""
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
            if not Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).exists():
                TOTP.activate(user, DEMO_TOTP_SECRET)
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
                    # Under way already: the feed plays it from its kick-off up to now when it starts.
                    event.status = Event.Status.IN_PLAY
                    event.save()
                specs = demo_markets(event=event, sport=sport.slug, competition=competition.name, rng=rng)
                for order, (spec, chances) in enumerate(specs):
                    market = Market.objects.create(
                        event=event, kind=spec.kind.key, name=spec.name, line=spec.line, display_order=order
                    )
                    Selection.objects.bulk_create(
                        Selection(market=market, name=sname, price=price, display_order=i)
                        for i, (sname, price) in enumerate(zip(spec.selections, _book(rng, chances), strict=True))
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
