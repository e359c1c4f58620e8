"""POST /api/bets: acceptance, every rejection reason, price-change policies, idempotent retry."""

from __future__ import annotations

from decimal import Decimal

import orjson
import pytest
from django.test import Client

from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.services.wallet import wallet_deposit
from odds.catalogue.models import Market, Selection
from odds.models import OutboxMessage
from reducers import topics
from reducers.schemas import decode_bet_event
from tests.factories import live_state_write, market_create
from tests.integration.betting.helpers import bet_body, error_of, first_selection

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def balance(user) -> Decimal:
    return Wallet.objects.get(user=user).balance


def test_single_bet_is_accepted_and_its_stake_held(api, punter, market):
    home = first_selection(market)
    response = api.post_json("/api/bets", bet_body((home.id, "2.10"), stake="10.00"))
    assert response.status_code == 201, response.json()
    bet = response.json()["bet"]
    assert (bet["status"], bet["kind"], bet["odds"], bet["potential_return"]) == ("accepted", "single", "2.10", "21.00")
    assert balance(punter) == Decimal("90.00")
    entry = LedgerEntry.objects.get(bet_id=bet["id"])
    assert (entry.kind, entry.debit, entry.credit, entry.amount) == ("stake", "wallet", "bets_held", Decimal("10.00"))


def test_accumulator_is_accepted_at_the_product_of_its_legs(api, market):
    other = market_create(prices=("1.50", "4.00", "6.00"))
    legs = ((first_selection(market).id, "2.10"), (first_selection(other).id, "1.50"))
    response = api.post_json("/api/bets", bet_body(*legs, stake="4.00"))
    assert response.status_code == 201, response.json()
    bet = response.json()["bet"]
    assert (bet["kind"], bet["odds"], bet["potential_return"]) == ("accumulator", "3.15", "12.60")
    assert [leg["price"] for leg in bet["legs"]] == ["2.10", "1.50"]


def test_live_price_from_the_reducers_is_used_over_the_catalogue(api, market, redis_client):
    live_state_write(redis_client, market, prices=("2.30", "3.30", "3.40"))
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.30")))
    assert response.status_code == 201, response.json()
    assert response.json()["bet"]["legs"][0]["price"] == "2.30"


def test_stale_price_is_rejected_with_current_price(api, punter, market, redis_client):
    live_state_write(redis_client, market, prices=("2.00", "3.50", "3.60"))
    home = first_selection(market)
    response = api.post_json("/api/bets", bet_body((home.id, "2.10"), policy="none"))
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "price_changed"
    assert error["field"] == "selections"
    assert error["selections"] == [{"selection_id": home.id, "price_seen": "2.10", "price": "2.00"}]
    assert balance(punter) == Decimal("100.00")


def test_policy_none_rejects_a_better_price_too(api, market, redis_client):
    live_state_write(redis_client, market, prices=("2.20", "3.30", "3.40"))
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10"), policy="none"))
    assert response.json()["error"]["code"] == "price_changed"


def test_policy_any_accepts_a_worse_price_at_the_current_price(api, market, redis_client):
    live_state_write(redis_client, market, prices=("1.90", "3.60", "3.80"))
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10"), policy="any"))
    assert response.status_code == 201, response.json()
    leg = response.json()["bet"]["legs"][0]
    assert (leg["price"], leg["price_seen"]) == ("1.90", "2.10")


def test_policy_better_accepts_a_higher_price(api, market, redis_client):
    live_state_write(redis_client, market, prices=("2.20", "3.30", "3.40"))
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10"), policy="better"))
    assert response.status_code == 201, response.json()
    assert response.json()["bet"]["odds"] == "2.20"


def test_policy_better_rejects_a_lower_price_with_the_current_price(api, market, redis_client):
    live_state_write(redis_client, market, prices=("2.04", "3.50", "3.60"))
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10"), policy="better"))
    assert response.status_code == 409
    assert response.json()["error"]["selections"][0]["price"] == "2.04"


def test_suspended_market_rejects_the_bet(api, punter):
    market = market_create(status=Market.Status.SUSPENDED)
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "market_suspended"
    assert balance(punter) == Decimal("100.00")


def test_market_suspended_in_the_live_state_rejects_the_bet(api, market, redis_client):
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), status="suspended")
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    assert response.json()["error"]["code"] == "market_suspended"


def test_closed_market_rejects_the_bet(api):
    market = market_create(status=Market.Status.CLOSED)
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    assert response.json()["error"]["code"] == "market_closed"


def test_removed_selection_rejects_the_bet(api, market):
    home = first_selection(market)
    Selection.objects.filter(id=home.id).update(status=Selection.Status.REMOVED)
    response = api.post_json("/api/bets", bet_body((home.id, "2.10")))
    assert response.json()["error"]["code"] == "selection_unavailable"


def test_stake_above_the_balance_is_rejected_as_insufficient_funds(api, punter, market):
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10"), stake="100.01"))
    assert error_of(response) == (409, "insufficient_funds", "stake")
    assert balance(punter) == Decimal("100.00")


def test_rejected_bet_is_recorded_with_its_reason(api, punter, market, redis_client):
    live_state_write(redis_client, market, prices=("2.00", "3.50", "3.60"))
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    bet = Bet.objects.get(id=response.json()["bet"]["id"])
    assert (bet.status, bet.reject_code) == (Bet.Status.REJECTED, "price_changed")
    assert not bet.entries.exists()


def test_a_rejected_bet_goes_on_the_bets_topic_with_its_reason_for_the_ticker(api, market, redis_client):
    live_state_write(redis_client, market, prices=("2.00", "3.50", "3.60"))
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    bet = Bet.objects.get(id=response.json()["bet"]["id"])
    message = OutboxMessage.objects.get(topic=topics.bets(), key=str(bet.id).encode())
    assert message.value is not None
    event = decode_bet_event(bytes(message.value))
    assert (event.type, event.event_id, event.until) == ("rejected", f"{bet.id}:rejected", None)
    assert event.reason == bet.reject_message == "the price moved from 2.10 to 2.00"
    # What the database wrote is what the schema writes, byte for byte.
    assert bytes(message.value) == event.encode()


def test_accepted_bet_queues_its_placed_event_in_the_outbox(api, market):
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "2.10")))
    bet_id = response.json()["bet"]["id"]
    message = OutboxMessage.objects.get(topic=topics.bets(), key=str(bet_id).encode())
    assert message.value is not None
    event = decode_bet_event(bytes(message.value))
    assert (event.type, event.event_id, event.stake) == ("placed", f"{bet_id}:placed", Decimal("10.00"))
    assert (event.reason, event.until) == ("", None)
    assert bytes(message.value) == event.encode()


def test_retry_with_the_same_key_returns_the_same_bet_and_charges_once(api, punter, market):
    body = bet_body((first_selection(market).id, "2.10"), key="slip-1")
    first = api.post_json("/api/bets", body)
    second = api.post_json("/api/bets", body)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["bet"]["id"] == second.json()["bet"]["id"]
    assert second.json()["created"] is False
    assert Bet.objects.filter(user=punter).count() == 1
    assert balance(punter) == Decimal("90.00")


def test_retry_of_a_rejected_bet_returns_the_same_rejection(api, punter, market, redis_client):
    live_state_write(redis_client, market, prices=("2.00", "3.50", "3.60"))
    body = bet_body((first_selection(market).id, "2.10"), key="slip-2")
    first = api.post_json("/api/bets", body)
    live_state_write(redis_client, market, prices=("2.10", "3.40", "3.50"), seq=2)
    second = api.post_json("/api/bets", body)
    assert second.status_code == 409
    assert second.json()["bet"]["id"] == first.json()["bet"]["id"]


def test_a_key_reused_for_a_different_bet_is_refused(api, market):
    home = first_selection(market)
    api.post_json("/api/bets", bet_body((home.id, "2.10"), key="slip-3", stake="5.00"))
    response = api.post_json("/api/bets", bet_body((home.id, "2.10"), key="slip-3", stake="6.00"))
    assert error_of(response) == (400, "idempotency_key_reused", "idempotency_key")


def test_ledger_sum_matches_the_balance_after_bets(api, punter, market):
    home = first_selection(market)
    for stake in ("10.00", "2.50", "0.10"):
        api.post_json("/api/bets", bet_body((home.id, "2.10"), stake=stake))
    wallet = Wallet.objects.get(user=punter)
    assert wallet.balance == Decimal("87.40")
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance


@pytest.mark.parametrize(
    ("mutate", "field", "code"),
    [
        (lambda b: b.update(stake="0.09"), "stake", "stake_too_low"),
        (lambda b: b.update(stake="10000.01"), "stake", "stake_too_high"),
        (lambda b: b.update(stake="1.005"), "stake", "invalid"),
        (lambda b: b.update(stake="ten"), "stake", "invalid"),
        (lambda b: b.update(stake="NaN"), "stake", "invalid"),
        (lambda b: b.update(stake=True), "stake", "invalid"),
        (lambda b: b.pop("stake"), "stake", "required"),
        (lambda b: b.pop("idempotency_key"), "idempotency_key", "required"),
        (lambda b: b.update(idempotency_key="x" * 65), "idempotency_key", "invalid"),
        (lambda b: b.update(price_policy="sometimes"), "price_policy", "invalid"),
        (lambda b: b.update(selections=[]), "selections", "invalid"),
        (lambda b: b.update(selections="all"), "selections", "invalid"),
        (lambda b: b["selections"][0].update(price="2.101"), "selections[0].price", "invalid"),
        (lambda b: b["selections"][0].update(price="0.5"), "selections[0].price", "invalid"),
        (lambda b: b["selections"][0].pop("selection_id"), "selections[0].selection_id", "required"),
        (lambda b: b["selections"][0].update(selection_id="7"), "selections[0].selection_id", "invalid"),
        (lambda b: b.update(v=2), "v", "invalid"),
    ],
)
def test_malformed_bet_gets_a_400_naming_the_field(api, market, mutate, field, code):
    body = bet_body((first_selection(market).id, "2.10"))
    mutate(body)
    response = api.post_json("/api/bets", body)
    assert error_of(response) == (400, code, field)


def test_unknown_selection_gets_a_400_naming_the_leg(api, market):
    body = bet_body((first_selection(market).id, "2.10"), (987_654_321, "2.00"))
    response = api.post_json("/api/bets", body)
    assert error_of(response) == (400, "unknown_selection", "selections[1].selection_id")


def test_accumulator_legs_from_one_event_are_refused(api, market):
    home, draw = list(market.selections.order_by("display_order"))[:2]
    response = api.post_json("/api/bets", bet_body((home.id, "2.10"), (draw.id, "3.40")))
    assert error_of(response) == (400, "same_event", "selections")


def test_the_same_selection_twice_is_refused(api, market):
    home = first_selection(market)
    response = api.post_json("/api/bets", bet_body((home.id, "2.10"), (home.id, "2.10")))
    assert response.json()["error"]["field"] == "selections[1].selection_id"


def test_potential_return_above_the_maximum_payout_is_refused(api, punter):
    market = market_create(prices=("900", "1.01", "1.01"))
    wallet_deposit(user=punter, amount=Decimal("1000.00"), reference="top-up")
    response = api.post_json("/api/bets", bet_body((first_selection(market).id, "900"), stake="500.00"))
    assert error_of(response) == (400, "return_too_high", "stake")


def test_body_that_is_not_json_gets_a_400(api):
    response = api.post("/api/bets", data=b"{stake: 10", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_json"


def test_body_that_is_not_an_object_gets_a_400_naming_the_body(api):
    response = api.post_json("/api/bets", [1, 2])
    assert response.json()["error"]["field"] == "body"


def test_json_numbers_are_read_as_exact_decimals(api, punter, market):
    body = bet_body((first_selection(market).id, "2.10"))
    raw = orjson.dumps(body).replace(b'"10.00"', b"10.10").replace(b'"2.10"', b"2.10")
    response = api.post("/api/bets", data=raw, content_type="application/json")
    assert response.status_code == 201, response.json()
    assert response.json()["bet"]["stake"] == "10.10"


def test_anonymous_user_gets_a_401(client, market):
    response = client.post(
        "/api/bets", data=bet_body((first_selection(market).id, "2.10")), content_type="application/json"
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_post_without_a_csrf_token_gets_a_403_in_json(punter, market):
    client = Client(enforce_csrf_checks=True)
    client.force_login(punter)
    response = client.post(
        "/api/bets", data=bet_body((first_selection(market).id, "2.10")), content_type="application/json"
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "csrf_failed"


def test_post_with_the_csrf_token_is_accepted(punter, market):
    client = Client(enforce_csrf_checks=True)
    client.force_login(punter)
    client.get("/login/")
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/api/bets",
        data=bet_body((first_selection(market).id, "2.10")),
        content_type="application/json",
        headers={"X-CSRFToken": token},
    )
    assert response.status_code == 201, response.json()


def test_unsupported_method_gets_a_405_in_json(api):
    response = api.delete("/api/bets")
    assert response.status_code == 405
    assert response["Allow"] == "GET, POST"
