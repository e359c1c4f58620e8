"""Loss and wager limits, enforced by the placement statement (sb_bet_place.v5.sql) on the real
PostgreSQL.

The clock is the database's, frozen: each test runs in one transaction, so ``now()`` (which the
statement reads) is the same instant for the whole test, and the tests read it first. Entries
that must be older are moved back from it explicitly."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.db import connection

from odds.betting.models import Bet, LedgerEntry, Wallet, WalletLimit
from odds.betting.selectors.wallet import limit_window
from odds.betting.services.bets import BetInvalid, LegRequest, bet_place
from odds.betting.services.settlement import market_bets_settle
from odds.betting.services.wallet import wallet_limit_set
from odds.catalogue.services.markets import market_result
from reducers import limits
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import (
    bet_accepted,
    bet_body,
    corrected,
    error_of,
    first_selection,
    resettle,
    selections_of,
)

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

DAY = timedelta(days=1)


def db_now() -> datetime:
    """The instant the placement statement sees as now: the test transaction's start."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        (now,) = cursor.fetchone()
    return now


def place(user, selection, stake: str):
    """A bet through the placement service at the selection's catalogue price."""
    return bet_place(
        user=user,
        idempotency_key=uuid.uuid4().hex,
        stake=Decimal(stake),
        legs=[LegRequest(selection_id=selection.id, price_seen=selection.price)],
    )


def refused(user, selection, stake: str) -> BetInvalid:
    with pytest.raises(BetInvalid) as caught:
        place(user, selection, stake)
    return caught.value


def stakes_moved_back(user, by: timedelta) -> None:
    """The punter's stakes so far were posted ``by`` earlier."""
    LedgerEntry.objects.filter(wallet__user=user, kind=LedgerEntry.Kind.STAKE).update(created_at=db_now() - by)


def balance(user) -> Decimal:
    return Wallet.objects.get(user=user).balance


def ms(at: datetime) -> int:
    return limits.epoch_ms(at)


# --- no limit, no change ------------------------------------------------------------------------


def test_a_wallet_without_bet_limits_takes_bets_as_before(punter, market):
    assert Wallet.objects.get(user=punter).bet_limits is False
    assert place(punter, first_selection(market), "60.00").accepted
    assert place(punter, first_selection(market), "40.00").accepted
    assert balance(punter) == Decimal("0.00")


def test_the_statement_looks_for_bet_limits_only_when_the_wallet_says_it_has_some(punter, market):
    # A limit row written behind the service's back (the flag left clear) is not read: the flag on
    # the locked row is the whole cost of the rule for a punter without limits.
    wallet = Wallet.objects.get(user=punter)
    WalletLimit.objects.create(wallet=wallet, kind="loss", period="day", amount=Decimal("5.00"))
    assert place(punter, first_selection(market), "10.00").accepted
    Wallet.objects.filter(pk=wallet.pk).update(bet_limits=True)
    assert refused(punter, first_selection(market), "1.00").code == "over_loss_limit"


def test_limits_add_no_round_trip_to_a_bet(api, punter, market, django_assert_max_num_queries):
    from tests.integration.betting.test_placement_queries import PLACEMENT_QUERIES

    wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("50.00"))
    wallet_limit_set(user=punter, kind="wager", period="month", amount=Decimal("500.00"))
    with django_assert_max_num_queries(PLACEMENT_QUERIES):
        response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    assert response.status_code == 201, response.json()


def test_a_deposit_limit_alone_does_not_touch_bets(punter, market):
    wallet_limit_set(user=punter, kind="deposit", period="day", amount=Decimal("5.00"))
    assert Wallet.objects.get(user=punter).bet_limits is False
    assert place(punter, first_selection(market), "50.00").accepted


# --- at, over and under the limit ---------------------------------------------------------------


def test_a_bet_exactly_at_the_limit_is_taken_and_one_over_is_refused_naming_the_period_and_reset(punter, market):
    now = db_now()
    home = first_selection(market)
    wallet_limit_set(user=punter, kind="wager", period="day", amount=Decimal("20.00"))
    assert Wallet.objects.get(user=punter).bet_limits is True
    assert place(punter, home, "12.50").accepted
    assert place(punter, home, "7.50").accepted  # 20.00 of 20.00

    over = refused(punter, home, "0.10")
    assert (over.code, over.field) == ("over_wager_limit", "stake")
    # The oldest stake in the window was posted now: the day's window frees room a day later.
    assert over.extra == {
        "period": "day",
        "limit": Decimal("20.00"),
        "left": Decimal("0.00"),
        "resets_at": ms(now + DAY),
    }
    assert over.message == (
        "This bet is over your daily wager limit of £20.00: you can stake £0.00 more now, and the limit frees up"
        f" from {limits.when_text(now + DAY)}."
    )
    assert Bet.objects.filter(user=punter).count() == 2
    assert balance(punter) == Decimal("80.00")


def test_the_window_frees_room_when_its_oldest_stake_leaves_it(punter, market):
    now = db_now()
    home = first_selection(market)
    wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("30.00"))
    assert place(punter, home, "10.00").accepted
    stakes_moved_back(punter, timedelta(hours=20))
    assert place(punter, home, "15.00").accepted
    LedgerEntry.objects.filter(wallet__user=punter, kind="stake", created_at=now).update(
        created_at=now - timedelta(hours=2)
    )

    over = refused(punter, home, "5.01")
    assert over.extra["left"] == Decimal("5.00")
    assert over.extra["resets_at"] == ms(now - timedelta(hours=20) + DAY)
    assert place(punter, home, "5.00").accepted


def test_stakes_older_than_the_window_do_not_count(punter, market):
    home = first_selection(market)
    wallet_limit_set(user=punter, kind="wager", period="day", amount=Decimal("10.00"))
    wallet_limit_set(user=punter, kind="wager", period="week", amount=Decimal("25.00"))
    assert place(punter, home, "10.00").accepted
    stakes_moved_back(punter, timedelta(hours=25))
    # Out of the day's window, still in the week's: 10.00 more under the day's, 15.00 the week's.
    assert place(punter, home, "10.00").accepted
    over = refused(punter, home, "5.01")
    assert (over.code, over.extra["period"], over.extra["left"]) == ("over_wager_limit", "week", Decimal("5.00"))


def test_a_stake_above_the_limit_itself_is_refused_with_no_reset_time(punter, market):
    wallet_limit_set(user=punter, kind="loss", period="month", amount=Decimal("15.00"))
    over = refused(punter, first_selection(market), "15.01")
    assert (over.code, over.extra["period"], over.extra["resets_at"]) == ("over_loss_limit", "month", None)
    assert over.message == "This bet is above your monthly loss limit of £15.00: you can stake £15.00 more now."


def test_of_several_limits_refusing_the_one_that_frees_room_last_is_named(punter, market):
    now = db_now()
    home = first_selection(market)
    wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("10.00"))
    wallet_limit_set(user=punter, kind="wager", period="week", amount=Decimal("10.00"))
    assert place(punter, home, "10.00").accepted
    stakes_moved_back(punter, timedelta(hours=1))
    over = refused(punter, home, "1.00")
    # Both are full; the week's frees room six days after the day's.
    assert (over.code, over.extra["period"]) == ("over_wager_limit", "week")
    assert over.extra["resets_at"] == ms(now - timedelta(hours=1) + timedelta(days=7))


# --- loss: what bets paid back makes room --------------------------------------------------------


def test_a_loss_limit_nets_winnings_and_a_wager_limit_does_not(punter):
    market = market_create(prices=("2.00", "3.40", "3.50"))
    home = first_selection(market)
    wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("20.00"))
    assert place(punter, home, "10.00").accepted
    market_result(market=market, winners=[home.id], publish=False)
    market_bets_settle(market_id=market.id)
    assert balance(punter) == Decimal("110.00")

    # Staked 10.00, paid back 20.00: a net loss of -10.00, so 30.00 may be staked before 20.00 is lost.
    other = first_selection(market_create(prices=("2.00", "3.40", "3.50")))
    over = refused(punter, other, "30.01")
    assert (over.code, over.extra["left"]) == ("over_loss_limit", Decimal("30.00"))

    # A wager limit counts the won bet's stake all the same: 10.00 of 35.00 staked.
    wallet_limit_set(user=punter, kind="wager", period="day", amount=Decimal("35.00"))
    over = refused(punter, other, "30.00")
    assert (over.code, over.extra["left"]) == ("over_wager_limit", Decimal("25.00"))
    assert place(punter, other, "25.00").accepted


def test_a_lost_bet_counts_as_lost_and_a_void_bet_gives_its_stake_back(punter):
    lost_on = market_create()
    home, away, _ = selections_of(lost_on)
    wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("10.00"))
    bet_accepted(punter, home, stake="6.00")
    market_result(market=lost_on, winners=[away.id], publish=False)
    market_bets_settle(market_id=lost_on.id)
    voided_on = market_create()
    bet_accepted(punter, first_selection(voided_on), stake="4.00")
    assert refused(punter, first_selection(market_create()), "0.10").extra["left"] == Decimal("0.00")

    market_result(market=voided_on, winners=None, publish=False)
    market_bets_settle(market_id=voided_on.id)
    assert refused(punter, first_selection(market_create()), "4.01").extra["left"] == Decimal("4.00")
    assert place(punter, first_selection(market_create()), "4.00").accepted


def loss_used(user) -> Decimal:
    """What the pages say the day's loss window has used (the Python reading of the same rule)."""
    window = limit_window(wallet=Wallet.objects.get(user=user), kind="loss", period="day", now=db_now())
    return limits.used(kind="loss", window=window)


def test_a_corrected_result_counts_in_the_loss_limit_by_what_it_moved_in_the_wallet(punter):
    market = market_create(prices=("2.00", "3.40", "3.50"))
    home, away, _ = selections_of(market)
    wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("20.00"))
    assert place(punter, home, "10.00").accepted
    market_result(market=market, winners=[home.id], publish=False)
    market_bets_settle(market_id=market.id)
    assert (balance(punter), loss_used(punter)) == (Decimal("110.00"), Decimal("-10.00"))
    trader = user_create(balance="0", staff=True)

    def corrected_to(winner) -> None:
        market.refresh_from_db()
        resettle(market, corrected(market, winner), trader, reason="wrong team")

    # The win clawed back (20.00 out of the wallet): the stake is lost again, 10.00 of 20.00 used.
    corrected_to(away)
    assert (balance(punter), loss_used(punter)) == (Decimal("90.00"), Decimal("10.00"))
    other = first_selection(market_create())
    over = refused(punter, other, "10.01")
    assert (over.code, over.extra["left"]) == ("over_loss_limit", Decimal("10.00"))

    # Corrected back (20.00 paid in again): the win offsets the stake once more.
    corrected_to(home)
    assert (balance(punter), loss_used(punter)) == (Decimal("110.00"), Decimal("-10.00"))
    assert refused(punter, other, "30.01").extra["left"] == Decimal("30.00")
    assert place(punter, other, "30.00").accepted


# --- changes: lower at once, higher after the cooling-off ------------------------------------------


def test_a_lowered_limit_applies_to_the_next_bet(punter, market):
    home = first_selection(market)
    wallet_limit_set(user=punter, kind="loss", period="week", amount=Decimal("50.00"))
    assert place(punter, home, "20.00").accepted
    wallet_limit_set(user=punter, kind="loss", period="week", amount=Decimal("25.00"))
    over = refused(punter, home, "10.00")
    assert (over.code, over.extra["limit"], over.extra["left"]) == (
        "over_loss_limit",
        Decimal("25.00"),
        Decimal("5.00"),
    )


def test_a_raise_applies_only_once_its_24_hours_have_passed(punter, market):
    now = db_now()
    home = first_selection(market)
    wallet_limit_set(user=punter, kind="wager", period="day", amount=Decimal("20.00"), now=now)
    assert place(punter, home, "20.00").accepted
    raised = wallet_limit_set(user=punter, kind="wager", period="day", amount=Decimal("100.00"), now=now)
    assert (raised.amount, raised.pending_amount, raised.pending_from) == (
        Decimal("20.00"),
        Decimal("100.00"),
        now + timedelta(hours=24),
    )
    assert refused(punter, home, "10.00").extra["limit"] == Decimal("20.00")

    # A second short of the 24 hours the old limit still applies; at the 24 hours the raise does.
    WalletLimit.objects.filter(pk=raised.pk).update(pending_from=now + timedelta(seconds=1))
    assert refused(punter, home, "10.00").code == "over_wager_limit"
    WalletLimit.objects.filter(pk=raised.pk).update(pending_from=now)
    assert place(punter, home, "10.00").accepted


def test_a_limit_change_mails_the_punter(punter, django_capture_on_commit_callbacks, mailoutbox):
    punter.email = "limits@example.com"
    punter.save(update_fields=["email"])
    with django_capture_on_commit_callbacks(execute=True):
        wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("50.00"))
    with django_capture_on_commit_callbacks(execute=True):
        wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("80.00"))
    assert len(mailoutbox) == 2
    assert mailoutbox[0].subject == "Your daily loss limit is set"
    assert mailoutbox[1].subject.startswith("Your daily loss limit rises on ")
    assert "stays £50.00" in mailoutbox[1].body
    assert mailoutbox[1].to == ["limits@example.com"]


# --- the API --------------------------------------------------------------------------------------


def test_the_api_sets_a_loss_limit_and_refuses_a_bet_over_it_with_403_and_the_reset_time(client, api, punter, market):
    now = db_now()
    response = client.put(
        "/api/wallet/limits/loss/day", data='{"v": 1, "amount": "15"}', content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["limit"] == {
        "kind": "loss",
        "period": "day",
        "amount": "15.00",
        "pending_amount": None,
        "pending_from": None,
    }
    home = first_selection(market)
    assert api.post_json("/api/bets", bet_body((home.id, "2.10"), stake="10.00")).status_code == 201

    over = api.post_json("/api/bets", bet_body((home.id, "2.10"), stake="6.00"))
    assert error_of(over) == (403, "over_loss_limit", "stake")
    error = over.json()["error"]
    assert (error["period"], error["limit"], error["left"], error["resets_at"]) == (
        "day",
        "15.00",
        "5.00",
        ms(now + DAY),
    )
    assert error["message"].startswith("This bet is over your daily loss limit of £15.00: you can stake £5.00 more now")
    assert Bet.objects.filter(user=punter).count() == 1

    unknown = client.put(
        "/api/wallet/limits/spend/day", data='{"v": 1, "amount": "1"}', content_type="application/json"
    )
    assert error_of(unknown) == (400, "invalid", "kind")


def test_the_refusal_is_in_the_wallets_currency(services, market):
    punter = user_create(balance="100.00")
    Wallet.objects.filter(user=punter).update(currency="EUR")
    wallet_limit_set(user=punter, kind="wager", period="day", amount=Decimal("5.00"))
    assert "daily wager limit of €5.00" in refused(punter, first_selection(market), "6.00").message


def test_the_wallet_page_shows_every_kind_of_limit_in_the_wallets_currency(client, services):
    punter = user_create(balance="100.00")
    Wallet.objects.filter(user=punter).update(currency="EUR")
    client.force_login(punter)
    wallet_limit_set(user=punter, kind="loss", period="day", amount=Decimal("40.00"))
    text = client.get("/wallet/").content.decode()
    for kind in ("Deposit", "Loss", "Wager"):
        assert f"{kind} limits</h3>" in text
    assert "New daily loss limit (€)" in text
    assert '€40.00 · <span class="num">€40.00</span> left' in text
    assert "£" not in text.split('class="wallet-page"', 1)[1].split("</main>", 1)[0]


@pytest.mark.django_db(transaction=True)
def test_the_placement_endpoint_refuses_a_bet_over_a_wager_limit_in_words(asgi_server, services, redis_client):
    from tests.integration.betting.test_placement_endpoint import post, session_of

    punter = user_create(balance="100.00")
    session = session_of(punter)
    home = first_selection(market_create())
    wallet_limit_set(user=punter, kind="wager", period="week", amount=Decimal("12.00"))
    assert post(asgi_server, bet_body((home.id, "2.10"), stake="10.00"), session=session)[0] == 201

    status, _, body = post(asgi_server, bet_body((home.id, "2.10"), stake="2.01"), session=session)

    assert (status, body["error"]["code"], body["error"]["period"], body["error"]["left"]) == (
        403,
        "over_wager_limit",
        "week",
        "2.00",
    ), body
    assert body["error"]["message"].startswith("This bet is over your weekly wager limit of £12.00")
    first_stake = LedgerEntry.objects.get(wallet__user=punter, kind="stake").created_at
    assert body["error"]["resets_at"] == ms(first_stake + timedelta(days=7))
    assert post(asgi_server, bet_body((home.id, "2.10"), stake="2.00"), session=session)[0] == 201
    assert balance(punter) == Decimal("88.00")
