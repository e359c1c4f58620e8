"""Bets on in-play events are held for their sport's delay, then decided as a real book does.

A held bet's delay is made to have passed by moving its ``accept_at`` into the past (the resolver
decides only bets whose time has come); everything else runs against the real services.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.services.bet_delay import bet_delay_decide, bets_delay_resolve, bets_due
from odds.betting.services.bets import LegRequest, bet_place
from odds.catalogue.models import Event, Sport
from odds.catalogue.services.markets import market_result, market_resume, market_suspend
from odds.models import OutboxMessage
from reducers import topics
from reducers.schemas import BetEvent, decode_bet_event
from tests.factories import live_state_write, market_create, user_create
from tests.integration.betting.helpers import bet_body, selections_of
from webapp.asgi import application

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def in_play(services, redis_client):
    """A market of an in-play event whose sport holds bets for 5 s."""
    market = market_create(prices=("2.10", "3.40", "3.50"))
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    Sport.objects.filter(competitions__events=market.event_id).update(in_play_delay_s=5)
    return market


def held(user, market, *, price: str = "2.10", policy: str = "none", stake: str = "10.00") -> Bet:
    home = selections_of(market)[0]
    placement = bet_place(
        user=user,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal(stake),
        legs=[LegRequest(selection_id=home.id, price_seen=Decimal(price))],
        price_policy=policy,
    )
    assert placement.bet.status == Bet.Status.PENDING, placement.bet.reject_message
    return placement.bet


def delay_passes(bet: Bet) -> None:
    Bet.objects.filter(id=bet.id).update(accept_at=timezone.now() - timedelta(milliseconds=1))


def bet_events(bet: Bet) -> list[BetEvent]:
    """The bet's bets-topic records in the outbox, oldest first."""
    messages = OutboxMessage.objects.filter(topic=topics.bets(), key=str(bet.id).encode()).order_by("id")
    return [decode_bet_event(bytes(m.value)) for m in messages if m.value is not None]


def kinds(bet: Bet) -> list[str]:
    return [event.type for event in bet_events(bet)]


def balance(user) -> Decimal:
    return Wallet.objects.get(user=user).balance


def test_a_held_bet_is_pending_with_its_stake_held_until_the_delay_ends(api, punter, in_play):
    home = selections_of(in_play)[0]
    response = api.post_json("/api/bets", bet_body((home.id, "2.10"), stake="10.00"))
    assert (response.status_code, response.json()["bet"]["status"]) == (202, "pending")
    bet = Bet.objects.get(id=response.json()["bet"]["id"])
    assert bet.accept_at is not None
    assert bet.accept_at - bet.placed_at == timedelta(seconds=5)
    assert balance(punter) == Decimal("90.00")
    # Not yet due: the resolver leaves it alone; the desk hears of it as pending (on the ticker,
    # in no book) with when it is decided.
    assert bets_due() == []
    assert bet_delay_decide(bet_id=bet.id) is None
    [pending] = bet_events(bet)
    assert (pending.type, pending.event_id, pending.reason) == ("pending", f"{bet.id}:pending", "")
    assert pending.until == int(bet.accept_at.timestamp() * 1000)


def test_after_the_delay_it_is_accepted_at_the_price_taken(punter, in_play):
    bet = held(punter, in_play)
    delay_passes(bet)
    assert bets_delay_resolve().accepted == 1
    bet.refresh_from_db()
    assert (bet.status, bet.legs.get().price) == (Bet.Status.ACCEPTED, Decimal("2.10"))
    assert balance(punter) == Decimal("90.00")
    assert kinds(bet) == ["pending", "placed"]


def test_a_suspension_during_the_delay_rejects_it_even_if_reopened(punter, in_play, django_capture_on_commit_callbacks):
    bet = held(punter, in_play)
    with django_capture_on_commit_callbacks(execute=False):
        market_suspend(market=in_play)
        market_resume(market=in_play)
    delay_passes(bet)
    decided = bet_delay_decide(bet_id=bet.id)
    assert decided is not None
    assert (decided.status, decided.reject_code) == (Bet.Status.REJECTED, "market_suspended")
    wallet = Wallet.objects.get(user=punter)
    assert (wallet.balance, wallet_ledger_balance(wallet=wallet)) == (Decimal("100.00"), Decimal("100.00"))
    assert LedgerEntry.objects.get(bet=bet, kind=LedgerEntry.Kind.REFUND).amount == Decimal("10.00")
    # The desk hears of the refusal with the punter's reason, and no book ever held the bet.
    pending, rejected = bet_events(bet)
    assert (pending.type, rejected.type, rejected.event_id) == ("pending", "rejected", f"{bet.id}:rejected")
    assert rejected.reason == decided.reject_message != ""


@pytest.mark.parametrize(
    ("policy", "moved_to", "status"),
    [
        ("none", "2.00", "rejected"),
        ("better", "2.00", "rejected"),
        ("better", "2.30", "accepted"),
        ("any", "1.50", "accepted"),
    ],
)
def test_a_price_move_during_the_delay_is_judged_by_the_punters_policy(
    punter, in_play, redis_client, policy, moved_to, status
):
    bet = held(punter, in_play, policy=policy)
    live_state_write(redis_client, in_play, prices=(moved_to, "3.40", "3.50"))
    delay_passes(bet)
    decided = bet_delay_decide(bet_id=bet.id)
    assert decided is not None
    assert decided.status == status
    if status == "rejected":
        assert decided.reject_code == "price_changed"
        assert balance(punter) == Decimal("100.00")
    else:
        # Accepted at the price the punter took, whatever it moved to.
        assert decided.legs.get().price == Decimal("2.10")


def test_a_result_during_the_delay_rejects_it(punter, in_play, django_capture_on_commit_callbacks):
    bet = held(punter, in_play)
    with django_capture_on_commit_callbacks(execute=False):
        market_result(market=in_play, winners=[selections_of(in_play)[0].id])
    delay_passes(bet)
    decided = bet_delay_decide(bet_id=bet.id)
    assert decided is not None
    assert (decided.status, decided.reject_code, balance(punter)) == ("rejected", "market_closed", Decimal("100.00"))


def test_deciding_twice_changes_nothing(punter, in_play, redis_client):
    bet = held(punter, in_play)
    live_state_write(redis_client, in_play, prices=("2.00", "3.40", "3.50"))
    delay_passes(bet)
    assert bet_delay_decide(bet_id=bet.id) is not None
    assert bet_delay_decide(bet_id=bet.id) is None
    assert bets_delay_resolve().rejected == 0
    assert LedgerEntry.objects.filter(bet=bet, kind=LedgerEntry.Kind.REFUND).count() == 1
    assert balance(punter) == Decimal("100.00")
    assert kinds(bet) == ["pending", "rejected"]


def test_a_pre_match_bet_is_accepted_at_once(api, punter, market):
    home = selections_of(market)[0]
    response = api.post_json("/api/bets", bet_body((home.id, "2.10")))
    assert (response.status_code, response.json()["bet"]["status"]) == (201, "accepted")
    assert "accept_at" not in response.json()["bet"]


def test_a_sport_without_a_delay_accepts_in_play_bets_at_once(punter, in_play):
    Sport.objects.filter(competitions__events=in_play.event_id).update(in_play_delay_s=0)
    home = selections_of(in_play)[0]
    placement = bet_place(
        user=punter,
        idempotency_key="no-delay",
        stake=Decimal("1.00"),
        legs=[LegRequest(selection_id=home.id, price_seen=Decimal("2.10"))],
    )
    assert placement.bet.status == Bet.Status.ACCEPTED


def test_a_held_bet_that_cannot_be_decided_does_not_hold_up_the_others(punter, in_play):
    # The first bet due belongs to a punter whose wallet is gone (its decision raises); the
    # bets due after it are decided all the same, and it stays held for the next run.
    first = held(punter, in_play)
    stranded = User.objects.create_user(username=f"walletless-{uuid.uuid4().hex[:8]}")
    Bet.objects.filter(id=first.id).update(user=stranded, accept_at=timezone.now() - timedelta(seconds=5))
    others = [held(punter, in_play) for _ in range(2)]
    for bet in others:
        delay_passes(bet)
    summary = bets_delay_resolve()
    assert (summary.accepted, summary.failed) == (2, 1)
    assert {bet.status for bet in Bet.objects.filter(id__in=[b.id for b in others])} == {Bet.Status.ACCEPTED}
    assert Bet.objects.get(id=first.id).status == Bet.Status.PENDING


@pytest.mark.django_db(transaction=True)
async def test_the_decision_reaches_the_punters_websockets_and_no_one_elses(services, redis_client):
    # In the session's event loop, where the process's hub lives (as in the websocket tests).
    market = market_create(prices=("2.10", "3.40", "3.50"))
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    punter, other = user_create(), user_create()
    bet = held(punter, market)
    delay_passes(bet)
    mine = await _socket(punter)
    theirs = await _socket(other)
    try:
        await sync_to_async(bet_delay_decide)(bet_id=bet.id)
        frame = await _next_of(mine, "bet.decided")
        stray = []
        while not await theirs.receive_nothing(timeout=1.0):
            stray.append(await theirs.receive_json_from())
    finally:
        await mine.disconnect()
        await theirs.disconnect()
    assert frame == {"type": "bet.decided", "bet": {"id": bet.id, "status": "accepted", "reject": None}}
    assert [f for f in stray if f["type"] == "bet.decided"] == []


async def _socket(user) -> WebsocketCommunicator:
    client = Client()
    await sync_to_async(client.force_login)(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    communicator = WebsocketCommunicator(
        application, "/ws/odds/", headers=[(b"origin", b"http://127.0.0.1:8000"), (b"cookie", cookie)]
    )
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from())["type"] == "hello"
    return communicator


async def _next_of(communicator: WebsocketCommunicator, kind: str, timeout: float = 10) -> dict:
    while True:
        frame = await communicator.receive_json_from(timeout=timeout)
        if frame["type"] == kind:
            return frame
