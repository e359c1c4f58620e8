"""Admin pages and actions, driven as a staff user through the Django test client."""

from __future__ import annotations

from decimal import Decimal

import pytest

from odds.betting.models import Bet, BetLeg, LedgerEntry, OwedClaim, Wallet
from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.models import OutboxMessage
from reducers import topics
from reducers.schemas import decode_market_definition, decode_price_update
from tests.factories import market_create, sign_in, user_create
from tests.integration.betting.helpers import bet_accepted, consume_until, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

CHANGELIST = "/admin/catalogue/market/"


@pytest.fixture
def staff(client, services):
    sign_in(client, user_create(balance="0", staff=True))
    return client


def run_action(staff, path: str, action: str, ids: list[int], **extra):
    return staff.post(path, {"action": action, "_selected_action": [str(i) for i in ids], **extra}, follow=True)


def test_suspend_action_suspends_the_market_and_bumps_its_version(staff, market):
    run_action(staff, CHANGELIST, "suspend", [market.id])
    market.refresh_from_db()
    assert (market.status, market.version) == (Market.Status.SUSPENDED, 2)


def test_suspend_action_queues_the_new_definition_for_the_markets_topic(staff, market):
    run_action(staff, CHANGELIST, "suspend", [market.id])
    row = OutboxMessage.objects.filter(topic=topics.markets(), key=str(market.id).encode()).latest("id")
    assert row.value is not None
    definition = decode_market_definition(bytes(row.value))
    assert definition is not None
    assert (definition.status, definition.version) == ("suspended", 2)


def test_suspend_action_publishes_a_trader_update_on_the_price_topic(
    staff, market, kafka_topics, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run_action(staff, CHANGELIST, "suspend", [market.id])
    message = consume_until(topics.prices(), lambda m: m.key() == str(market.id).encode())
    update = decode_price_update(message.value())
    assert (update.status, update.source) == ("suspended", "trader")
    assert [s.price for s in update.selections] == [Decimal("2.10"), Decimal("3.40"), Decimal("3.50")]


def test_resume_action_reopens_a_suspended_market(staff):
    market = market_create(status=Market.Status.SUSPENDED)
    run_action(staff, CHANGELIST, "resume", [market.id])
    market.refresh_from_db()
    assert market.status == Market.Status.OPEN


def test_resume_action_on_a_closed_market_warns_and_changes_nothing(staff):
    market = market_create(status=Market.Status.CLOSED)
    response = run_action(staff, CHANGELIST, "resume", [market.id])
    market.refresh_from_db()
    assert market.status == Market.Status.CLOSED
    assert "only a suspended market can be resumed" in response.content.decode()


def test_settle_action_asks_for_the_result_of_each_market(staff, market):
    response = staff.post(CHANGELIST, {"action": "settle", "_selected_action": [str(market.id)]})
    assert response.status_code == 200
    assert f'name="winner_{market.id}"' in response.content.decode()
    market.refresh_from_db()
    assert market.status == Market.Status.OPEN


def test_settle_action_results_the_market_and_pays_the_winners(
    staff, market, celery_inline, kafka_topics, django_capture_on_commit_callbacks
):
    punter = user_create(balance="50.00")
    home = selections_of(market)[0]
    bet = bet_accepted(punter, home, stake="10.00")
    with django_capture_on_commit_callbacks(execute=True):
        run_action(
            staff, CHANGELIST, "settle", [market.id], apply="1", confirm="yes", **{f"winner_{market.id}": str(home.id)}
        )
    bet.refresh_from_db()
    assert (bet.status, Wallet.objects.get(user=punter).balance) == (Bet.Status.WON, Decimal("61.00"))


def test_settle_action_can_void_a_market(staff, market):
    run_action(staff, CHANGELIST, "settle", [market.id], apply="1", confirm="yes", **{f"winner_{market.id}": "void"})
    assert set(market.selections.values_list("result", flat=True)) == {Selection.Result.VOID}


def test_settle_action_shows_the_bets_and_payout_before_anything_changes(staff, market):
    punter = user_create(balance="50.00")
    home, draw = selections_of(market)[:2]
    bet_accepted(punter, home, stake="10.00")
    bet_accepted(punter, draw, stake="4.00")
    response = run_action(staff, CHANGELIST, "settle", [market.id], apply="1", **{f"winner_{market.id}": str(home.id)})
    page = response.content.decode()
    assert 'data-total="bets">2<' in page
    assert 'data-total="stake">£14.00<' in page
    assert 'data-total="payout">£21.00<' in page  # 10.00 at the home price of 2.10; the draw bet loses
    assert "this event has not started yet" in page  # the factory's event kicks off in an hour
    assert 'name="confirm" value="yes"' in page
    market.refresh_from_db()
    assert market.status == Market.Status.OPEN
    assert Bet.objects.filter(status=Bet.Status.ACCEPTED).count() == 2


def test_void_bet_action_lists_the_bets_and_the_refund_before_voiding(staff, market):
    punter = user_create(balance="50.00")
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    page = run_action(staff, "/admin/betting/bet/", "void", [bet.id]).content.decode()
    assert f'data-bet="{bet.id}"' in page
    assert 'data-total="refund">£10.00<' in page
    assert 'value="Void 1 bet"' in page
    bet.refresh_from_db()
    assert (bet.status, Wallet.objects.get(user=punter).balance) == (Bet.Status.ACCEPTED, Decimal("40.00"))


def test_price_change_on_the_selection_page_is_a_trader_override(
    staff, market, kafka_topics, django_capture_on_commit_callbacks
):
    home = selections_of(market)[0]
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(f"/admin/catalogue/selection/{home.id}/change/", {"price": "2.40"})
    assert response.status_code == 302
    message = consume_until(
        topics.prices(),
        lambda m: m.key() == str(market.id).encode() and decode_price_update(m.value()).source == "trader",
    )
    assert decode_price_update(message.value()).selections[0].price == Decimal("2.40")


def test_price_change_on_the_selection_page_updates_the_catalogue_and_version(staff, market):
    home = selections_of(market)[0]
    staff.post(f"/admin/catalogue/selection/{home.id}/change/", {"price": "2.40"})
    home.refresh_from_db()
    market.refresh_from_db()
    assert (home.price, market.version) == (Decimal("2.40"), 2)


def test_void_bet_action_refunds_the_stake(staff, market):
    punter = user_create(balance="50.00")
    bet = bet_accepted(punter, selections_of(market)[0], stake="10.00")
    run_action(staff, "/admin/betting/bet/", "void", [bet.id], confirm="yes")
    bet.refresh_from_db()
    assert (bet.status, Wallet.objects.get(user=punter).balance) == (Bet.Status.VOID, Decimal("50.00"))


def test_wallet_list_shows_the_ledger_balance_reconciled(staff):
    user_create(balance="25.00")
    body = staff.get("/admin/betting/wallet/").content.decode()
    assert "25.00" in body
    assert 'alt="True"' in body


def test_ledger_entries_cannot_be_edited_from_the_admin(staff):
    user = user_create(balance="25.00")
    entry = LedgerEntry.objects.get(wallet__user=user)
    response = staff.post(f"/admin/betting/ledgerentry/{entry.id}/change/", {"amount": "1000.00"})
    entry.refresh_from_db()
    assert (response.status_code, entry.amount) == (403, Decimal("25.00"))


def test_relay_now_action_sends_pending_outbox_records(staff, market, kafka_topics):
    bet = bet_accepted(user_create(), selections_of(market)[0])
    row = OutboxMessage.objects.get(topic=topics.bets(), key=str(bet.id).encode())
    run_action(staff, "/admin/odds/outboxmessage/", "relay_now", [row.id])
    row.refresh_from_db()
    assert row.sent_at is not None


@pytest.mark.parametrize(
    "model", [Sport, Competition, Event, Market, Selection, Wallet, LedgerEntry, OwedClaim, Bet, BetLeg, OutboxMessage]
)
def test_every_model_has_a_searchable_admin_list(staff, market, model):
    bet_accepted(user_create(), selections_of(market)[0])
    meta = model._meta
    response = staff.get(f"/admin/{meta.app_label}/{meta.model_name}/", {"q": "a"})
    assert response.status_code == 200


def test_punters_cannot_open_the_admin(client, punter):
    sign_in(client, punter)
    response = client.get(CHANGELIST)
    assert response.status_code == 302
