"""Session time limits and reality checks against PostgreSQL: a login starts a play session; past
its time limit a bet is refused (by the placement service on every path, and the login is signed
out on its next request); while a reality check waits a bet is refused, and once it is
acknowledged the same bet is taken; the check shows the session's time and net result."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from odds.accounts.play import PLAY_SESSION_KEY
from odds.betting.models import Bet, PlaySession, Wallet
from odds.betting.services.bets import BetInvalid, LegRequest, bet_place
from tests.integration.betting.helpers import bet_body, error_of, first_selection

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def login_session(api) -> PlaySession:
    """The play session the test client's login started."""
    return PlaySession.objects.get(id=api.session[PLAY_SESSION_KEY])


def started_ago(session: PlaySession, minutes: int, **fields) -> None:
    """Move the session's start ``minutes`` into the past (the explicit clock of these tests)."""
    PlaySession.objects.filter(id=session.id).update(started_at=timezone.now() - timedelta(minutes=minutes), **fields)


def test_a_login_starts_a_play_session_with_the_punters_choices(api, punter):
    response = api.put("/api/play/settings", {"session_limit_min": 60, "reality_check_min": 15}, "application/json")
    assert response.status_code == 200, response.content
    api.force_login(punter)  # a new login takes the choices
    session = login_session(api)
    assert (session.time_limit_s, session.reality_check_s, session.ended_at) == (3600, 900, None)


def test_a_choice_not_offered_is_refused_and_nothing_changes(api, punter):
    response = api.put("/api/play/settings", {"session_limit_min": 45}, "application/json")
    assert error_of(response) == (400, "invalid", "session_limit_min")
    assert api.get("/api/play").json()["settings"]["session_limit_min"] is None


def test_a_shorter_limit_applies_to_the_running_session_and_a_longer_one_waits(api, punter):
    session = login_session(api)
    api.put("/api/play/settings", {"session_limit_min": 120}, "application/json")
    api.put("/api/play/settings", {"session_limit_min": 480}, "application/json")
    session.refresh_from_db()
    assert session.time_limit_s == 7200
    body = api.get("/api/play").json()
    assert body["settings"]["session_limit_min"] == 480
    assert body["session"]["time_limit_s"] == 7200


def test_a_bet_past_the_session_limit_is_refused_by_the_placement_with_the_reason(api, punter, market):
    started_ago(login_session(api), 31, time_limit_s=1800)
    home = first_selection(market)
    with pytest.raises(BetInvalid) as refused:
        bet_place(user=punter, idempotency_key="late", stake=Decimal("10.00"), legs=[LegRequest(home.id, home.price)])
    assert (refused.value.code, refused.value.field) == ("session_limit", "account")
    assert "session time limit of 30 minutes was reached" in refused.value.message
    assert not Bet.objects.filter(user=punter).exists()
    assert Wallet.objects.get(user=punter).balance == Decimal("100.00")


def test_past_the_limit_the_login_is_signed_out_on_its_next_request_and_the_login_page_says_why(api, punter, market):
    session = login_session(api)
    started_ago(session, 31, time_limit_s=1800)
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    assert error_of(response)[:2] == (401, "session_limit")
    assert not Bet.objects.filter(user=punter).exists()
    session.refresh_from_db()
    assert session.end_reason == PlaySession.End.TIME_LIMIT
    assert api.get("/api/play").status_code == 401  # signed out

    api.force_login(punter)
    started_ago(login_session(api), 31, time_limit_s=1800)
    page = api.get("/my-bets/")
    assert page.status_code == 302
    assert page["Location"] == "/login/?ended=session_limit"
    assert "Your session time limit was reached" in api.get(page["Location"]).content.decode()


def test_a_bet_is_refused_while_a_reality_check_waits_and_taken_once_it_is_acknowledged(api, punter, market):
    started_ago(login_session(api), 16, reality_check_s=900)
    body = bet_body((first_selection(market).id, "2.10"), stake="10.00")

    refused = api.post_json("/api/bets", body)
    assert error_of(refused) == (403, "reality_check", "account")
    assert "reality check is waiting" in refused.json()["error"]["message"]
    assert not Bet.objects.filter(user=punter).exists()

    check = api.get("/api/play").json()["session"]
    assert check["check_pending"] is True
    assert check["played_s"] >= 16 * 60

    acknowledged = api.post("/api/play/reality-check")
    assert acknowledged.status_code == 200, acknowledged.content
    session = acknowledged.json()["session"]
    assert session["check_pending"] is False
    assert 899 <= session["check_due_in_s"] <= 900

    taken = api.post_json("/api/bets", body)
    assert taken.status_code == 201, taken.content
    assert Wallet.objects.get(user=punter).balance == Decimal("90.00")


def test_the_check_shows_the_net_result_of_the_bets_placed_in_the_session_only(api, punter, market):
    home = first_selection(market)
    before = bet_place(
        user=punter, idempotency_key="before", stake=Decimal("5.00"), legs=[LegRequest(home.id, home.price)]
    )
    Bet.objects.filter(id=before.bet.id).update(placed_at=timezone.now() - timedelta(hours=2))
    started_ago(login_session(api), 20)
    won = bet_place(user=punter, idempotency_key="won", stake=Decimal("10.00"), legs=[LegRequest(home.id, home.price)])
    Bet.objects.filter(id=won.bet.id).update(status=Bet.Status.WON, payout=Decimal("21.00"))
    bet_place(user=punter, idempotency_key="open", stake=Decimal("4.00"), legs=[LegRequest(home.id, home.price)])

    session = api.get("/api/play").json()["session"]
    assert (session["staked"], session["returned"], session["net_result"]) == ("14.00", "21.00", "7.00")
    assert session["currency"] == "GBP"


def test_logging_out_ends_the_play_session(api, punter):
    session = login_session(api)
    api.logout()
    session.refresh_from_db()
    assert session.end_reason == PlaySession.End.LOGOUT
    assert session.ended_at is not None


# (minutes since the login, time limit, reality-check interval, minutes since the last check was
# acknowledged, refused with): each side of every rule of odds/betting/play.py, as sb_bet_place
# applies it in the statement that takes the bet.
SESSION_STATES = [
    (29, 30, None, None, None),
    (31, 30, None, None, "session_limit"),
    (14, None, 15, None, None),
    (16, None, 15, None, "reality_check"),
    (40, None, 15, 14, None),
    (40, None, 15, 16, "reality_check"),
    (31, 30, 15, 1, "session_limit"),
    (600, None, None, None, None),
]


@pytest.mark.parametrize(("played", "limit", "check", "acknowledged", "refused"), SESSION_STATES)
def test_the_placement_statement_applies_the_play_rules(
    api, punter, market, played, limit, check, acknowledged, refused
):
    now = timezone.now()
    PlaySession.objects.filter(id=login_session(api).id).update(
        started_at=now - timedelta(minutes=played),
        time_limit_s=None if limit is None else limit * 60,
        reality_check_s=None if check is None else check * 60,
        acknowledged_at=None if acknowledged is None else now - timedelta(minutes=acknowledged),
    )
    home = first_selection(market)
    legs = [LegRequest(home.id, home.price)]
    if refused is None:
        assert bet_place(user=punter, idempotency_key="k", stake=Decimal("10.00"), legs=legs).created
        return
    with pytest.raises(BetInvalid) as error:
        bet_place(user=punter, idempotency_key="k", stake=Decimal("10.00"), legs=legs)
    assert error.value.code == refused
    assert not Bet.objects.filter(user=punter).exists()


def test_an_ended_session_refuses_nothing_and_a_retry_after_the_limit_gets_the_bet_taken_before(api, punter, market):
    session = login_session(api)
    home = first_selection(market)
    legs = [LegRequest(home.id, home.price)]
    first = bet_place(user=punter, idempotency_key="before", stake=Decimal("10.00"), legs=legs)
    started_ago(session, 31, time_limit_s=1800)
    # The answer to a request sent before the limit was lost: its retry gets the same bet.
    retry = bet_place(user=punter, idempotency_key="before", stake=Decimal("10.00"), legs=legs)
    assert (retry.created, retry.bet.id) == (False, first.bet.id)
    # A session that ended (logged out) refuses nothing: only an open one counts.
    PlaySession.objects.filter(id=session.id).update(ended_at=timezone.now())
    assert bet_place(user=punter, idempotency_key="after", stake=Decimal("10.00"), legs=legs).created
