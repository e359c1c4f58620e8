"""Builders for test data: catalogue rows and price records."""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal
from itertools import count

from django.utils import timezone

from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from reducers.market_kinds import MATCH_RESULT
from reducers.schemas import BetEvent, BetLeg, MarketDefinition, PriceUpdate, SelectionPrice

_ids = count(1)


def market_create(*, prices: tuple[str, ...] = ("2.10", "3.40", "3.50"), status: str = "open") -> Market:
    n = next(_ids)
    sport, _ = Sport.objects.get_or_create(slug="football", defaults={"name": "Football"})
    competition, _ = Competition.objects.get_or_create(sport=sport, name="Test League")
    event = Event.objects.create(
        competition=competition, home=f"Home {n}", away=f"Away {n}", starts_at=timezone.now() + timedelta(hours=1)
    )
    market = Market.objects.create(event=event, kind=MATCH_RESULT.key, name="Match result", status=status)
    for i, (name, price) in enumerate(zip(("Home", "Draw", "Away"), prices, strict=False)):
        Selection.objects.create(market=market, name=name, price=Decimal(price), display_order=i)
    return market


def price_update(market: Market, *, seq: int, prices: tuple[str, ...], status: str = "open") -> PriceUpdate:
    now = int(time.time() * 1000)
    selections = list(market.selections.order_by("display_order"))
    return PriceUpdate(
        market_id=market.id,
        seq=seq,
        status=status,
        selections=tuple(SelectionPrice(s.id, Decimal(p)) for s, p in zip(selections, prices, strict=True)),
        event_ts=now,
        produce_ts=now,
    )


def raw_price_update(
    *, market_id: int, seq: int, prices: tuple[tuple[int, str], ...], status: str = "open"
) -> PriceUpdate:
    now = int(time.time() * 1000)
    return PriceUpdate(
        market_id=market_id,
        seq=seq,
        status=status,
        selections=tuple(SelectionPrice(i, Decimal(p)) for i, p in prices),
        event_ts=now,
        produce_ts=now,
    )


def definition_build(market_id: int, *, status: str = "open", version: int = 1) -> MarketDefinition:
    """A market definition for a market that exists only as an id (no catalogue row)."""
    now = int(time.time() * 1000)
    return MarketDefinition(
        market_id=market_id,
        version=version,
        event_id=market_id,
        sport="football",
        competition="Test League",
        event_name=f"Event {market_id}",
        kind="match_winner",
        name="Match winner",
        status=status,
        event_status="scheduled",
        starts_at=now + 3_600_000,
        selections=((1, "Home"), (2, "Away")),
        ts=now,
    )


def definitions_write(redis_client, *definitions: MarketDefinition, dead_letters=None) -> None:
    """Write definitions into the markets table with the markets query's own code, as if they had
    come from the compacted markets topic. The price reducer applies prices of known markets only,
    so a test that produces prices defines their markets first, as the feed and traders do.
    ``dead_letters``: where refused definitions go (the markets topic's dead-letter topic unless
    given)."""
    from django.conf import settings

    from reducers import topics
    from spark.jobs.markets import MarketTableProcessor
    from spark.sinks.dead_letter import dead_letter_sink

    rows = [
        {"key": definition.key(), "value": definition.encode(), "partition": 0, "offset": offset}
        for offset, definition in enumerate(definitions)
    ]
    if dead_letters is None:
        dead_letters = dead_letter_sink(bootstrap=settings.KAFKA_BOOTSTRAP_SERVERS, source_topic=topics.markets())
    MarketTableProcessor(redis_client=redis_client, dead_letters=dead_letters).apply_rows(rows)


def market_ids_define(redis_client, *market_ids: int, dead_letters=None) -> None:
    """Put markets that exist only as ids into the markets table, open."""
    definitions_write(
        redis_client, *(definition_build(market_id) for market_id in market_ids), dead_letters=dead_letters
    )


def markets_define(redis_client, *markets: Market) -> None:
    """Put catalogue markets into the markets table as the outbox relay and markets query would."""
    from odds.catalogue.services.markets import market_definition

    definitions_write(redis_client, *(market_definition(market=market) for market in markets))


def user_create(*, balance: str = "100.00", staff: bool = False, currency: str = "GBP"):
    """A user whose wallet, in ``currency``, holds ``balance`` (deposited through the ledger)."""
    from django.contrib.auth.models import User

    from odds.betting.services.wallet import wallet_deposit, wallet_get_or_create

    n = next(_ids)
    user = User.objects.create_user(
        username=f"{'staff' if staff else 'punter'}{n}", password="pw-for-tests", is_staff=staff, is_superuser=staff
    )
    wallet = wallet_get_or_create(user=user)
    if wallet.currency != currency:
        type(wallet).objects.filter(id=wallet.id).update(currency=currency)
    if Decimal(balance) > 0:
        wallet_deposit(user=user, amount=Decimal(balance), reference=f"test-deposit-{n}")
    return user


def live_state_write(
    redis_client, market: Market, *, prices: tuple[str, ...], status: str = "open", seq: int = 1, age_s: float = 0
):
    """Write a market's live state into Redis the way the price reducer stores it, applied
    ``age_s`` seconds ago."""
    import time

    import orjson

    from store import keys

    selections = list(market.selections.order_by("display_order"))
    state = {
        "type": "market",
        "v": 1,
        "market_id": market.id,
        "seq": seq,
        "status": status,
        "tradable": status == "open",
        "selections": [{"id": s.id, "price": p, "status": "active"} for s, p in zip(selections, prices, strict=True)],
        "ts": {"reducer": int((time.time() - age_s) * 1000)},
    }
    redis_client.hset(keys.market_state(market.id), mapping={"seq": seq, "state": orjson.dumps(state)})


def bet_event_build(
    kind: str,
    *,
    event_id: str,
    bet_id: int = 1,
    stake: str = "10.00",
    legs=((1, "2.50"),),
    currency: str = "GBP",
    reason: str = "",
    until: int | None = None,
) -> BetEvent:
    """A bet event of ``kind`` in ``currency``; ``legs`` are (selection id, price), each on a market
    and event of the selection's id; the potential return is the stake times every leg's price."""
    prices = [Decimal(p) for _, p in legs]
    ret = Decimal(stake)
    for p in prices:
        ret *= p
    return BetEvent(
        event_id=event_id,
        type=kind,
        bet_id=bet_id,
        user_id=1,
        stake=Decimal(stake),
        potential_return=ret.quantize(Decimal("0.01")),
        legs=tuple(BetLeg(selection_id=s, market_id=s, event_id=s, price=Decimal(p)) for s, p in legs),
        ts=1,
        currency=currency,
        reason=reason,
        until=until,
    )


def totp_enable(user) -> str:
    """A real TOTP authenticator (allauth.mfa) for ``user``; its secret, from which pyotp computes
    the codes an authenticator app would show."""
    from allauth.mfa.totp.internal.auth import TOTP, generate_totp_secret

    secret = generate_totp_secret()
    TOTP.activate(user, secret)
    return secret


def totp_code(secret: str) -> str:
    """The code an authenticator app shows now for ``secret``."""
    import pyotp

    return pyotp.TOTP(secret).now()


# The password user_create gives every user.
TEST_PASSWORD = "pw-for-tests"


def staff_sign_in(client, user, *, password: str = TEST_PASSWORD) -> None:
    """Sign a staff member in on Django's test client the way a person does: the login form, then
    a TOTP code from their authenticator (set up here when they have none), so that the session
    carries the second factor the staff pages require."""
    from allauth.mfa.models import Authenticator
    from allauth.mfa.utils import decrypt
    from django.urls import reverse

    found = Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).first()
    secret = decrypt(found.data["secret"]) if found is not None else totp_enable(user)
    # A client that checks CSRF like a browser gets its session from the forms all the same.
    enforce, client.handler.enforce_csrf_checks = client.handler.enforce_csrf_checks, False
    try:
        for _attempt in range(2):
            response = client.post(reverse("login"), {"username": user.username, "password": password})
            assert response.status_code == 302, response
            assert response["Location"] == reverse("mfa_authenticate"), response
            response = client.post(reverse("mfa_authenticate"), {"code": totp_code(secret)})
            if response.status_code == 302:
                return
            # A code works once: the same staff member signed in twice within one period waits
            # for the next code, as a person would.
            time.sleep(30 - time.time() % 30 + 0.5)
        raise AssertionError(response.content[:500])
    finally:
        client.handler.enforce_csrf_checks = enforce


def sign_in(client, user, *, password: str = TEST_PASSWORD) -> None:
    """Sign ``user`` in on the test client: a punter directly, a staff member through the login
    form and a TOTP code (``staff_sign_in``)."""
    if user.is_staff:
        staff_sign_in(client, user, password=password)
    else:
        client.force_login(user)
