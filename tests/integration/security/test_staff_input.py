"""Staff forms (trader pages and admin actions) given values no browser form would send: names
with NUL or longer than their column, selections and winners that are not ids, prices that are
not decimals. Each is the form again with the error in words, never a 500, and nothing changes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from odds.catalogue.models import Event, Market, Selection
from tests.factories import market_create
from tests.integration.betting.helpers import selections_of
from tests.integration.security.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EVENT = {"sport": "football", "competition": "Cup", "home": "Reds", "away": "Blues", "starts_at": "2030-01-01T15:00"}
ARABIC_INDIC_7 = "\u0667"


@pytest.fixture(autouse=True)
def _celery_inline():
    from webapp.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("home", "Re\x00ds", "Null characters are not allowed"),
        ("competition", "C\x00up", "Null characters are not allowed"),
        ("away", "B" * 129, "at most 128 characters"),
        ("competition", "C" * 5000, "at most 128 characters"),
        ("sport", "curling", "Select a valid choice"),
        ("starts_at", "tomorrow", "Enter a valid date/time"),
    ],
)
def test_a_new_event_form_that_cannot_be_stored_is_shown_again_with_the_error(staff, field, value, words):
    response = logged_in(staff).post(reverse("trading-event-create"), {**EVENT, field: value})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Event not created" in page
    assert words in page
    assert not Event.objects.filter(away__startswith="B", home__startswith="Re").exists()


def test_two_identical_participants_are_refused_in_words(staff):
    response = logged_in(staff).post(reverse("trading-event-create"), {**EVENT, "away": "Reds"})
    assert response.status_code == 400
    assert "two different participants" in response.content.decode()


@pytest.mark.parametrize("selection_id", ["abc", "", "-1", "1.5", ARABIC_INDIC_7, "9" * 5000, "\x00"])
def test_a_price_for_a_selection_that_is_not_an_id_is_refused_in_words(staff, selection_id):
    market = market_create()
    url = reverse("trading-market-price", args=[market.id])
    response = logged_in(staff).post(url, {"selection_id": selection_id, "price": "2.50"})
    assert response.status_code == 400
    assert "must be a selection of this market" in response.content.decode()
    assert Market.objects.get(id=market.id).version == market.version


@pytest.mark.parametrize("price", ["NaN", "Infinity", "1E+99999999999999999999", "2,50", "\u0662.\u0665", "", "\x00"])
def test_a_price_that_is_not_a_decimal_is_refused_in_words(staff, price):
    market = market_create()
    home = selections_of(market)[0]
    url = reverse("trading-market-price", args=[market.id])
    response = logged_in(staff).post(url, {"selection_id": str(home.id), "price": price})
    assert response.status_code == 400
    assert "not a valid price" in response.content.decode()
    assert Selection.objects.get(id=home.id).price == home.price


@pytest.mark.parametrize("winner", ["abc", "", "1; DROP TABLE odds_market", ARABIC_INDIC_7, "9" * 30, "\x00"])
def test_a_result_whose_winner_is_not_an_id_is_refused_in_words(staff, winner):
    market = market_create()
    response = logged_in(staff).post(reverse("trading-market-result", args=[market.id]), {"winner": winner})
    assert response.status_code == 400
    assert "the winner must be a selection of this market" in response.content.decode()
    assert Market.objects.get(id=market.id).status == Market.Status.OPEN


def test_a_winner_of_another_market_is_not_found(staff):
    market, other = market_create(), market_create()
    winner = str(selections_of(other)[0].id)
    response = logged_in(staff).post(reverse("trading-market-result", args=[market.id]), {"winner": winner})
    assert response.status_code == 404
    assert Market.objects.get(id=market.id).status == Market.Status.OPEN


ADMIN_MARKETS = "/admin/catalogue/market/"


@pytest.mark.parametrize("winner", ["abc", "", "-1", ARABIC_INDIC_7, "9" * 30, "\x00"])
def test_the_admin_settle_action_with_a_winner_not_of_the_market_shows_the_form_again(staff, winner):
    market = market_create()
    body = {"action": "settle", "_selected_action": [str(market.id)], "apply": "1", f"winner_{market.id}": winner}
    response = logged_in(staff).post(ADMIN_MARKETS, body)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Select a valid choice" in page or "This field is required" in page
    assert Market.objects.get(id=market.id).status == Market.Status.OPEN


@pytest.mark.parametrize("selected", ["abc", "-1", ARABIC_INDIC_7, "9" * 30, "\x00"])
def test_an_admin_action_on_ids_that_are_not_market_ids_changes_nothing(staff, selected):
    market = market_create()
    body = {"action": "suspend", "_selected_action": [str(market.id), selected]}
    response = logged_in(staff).post(ADMIN_MARKETS, body, follow=True)
    assert response.status_code == 200
    assert "not a list of row ids" in response.content.decode()
    assert Market.objects.get(id=market.id).status == Market.Status.OPEN


@pytest.mark.parametrize(("name", "words"), [("Foot\x00ball", "Null characters"), ("F" * 65, "at most 64")])
def test_the_admin_add_form_refuses_a_name_it_cannot_store(staff, name, words):
    response = logged_in(staff).post("/admin/catalogue/sport/add/", {"name": name, "slug": "x", "display_order": "0"})
    assert response.status_code == 200
    assert words in response.content.decode()


@pytest.mark.parametrize("query", ["\x00", "a\x00b", ARABIC_INDIC_7, "9" * 5000])
@pytest.mark.parametrize("changelist", [ADMIN_MARKETS, "/admin/betting/bet/", "/admin/catalogue/event/"])
def test_an_admin_search_for_any_text_answers(staff, changelist, query):
    response = logged_in(staff).get(changelist, {"q": query})
    assert response.status_code in (200, 400)


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/", "//evil.example/", "http://testserver.evil.example/", "javascript:alert(1)", "\\\\evil"],
)
def test_a_staff_action_does_not_follow_next_to_another_host(staff, target):
    market = market_create()
    response = logged_in(staff).post(reverse("trading-market-suspend", args=[market.id]), {"next": target})
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('trading-markets')}#market-{market.id}"


def test_a_staff_action_follows_next_to_a_path_of_this_site(staff):
    market = market_create()
    target = reverse("trading-settlement", args=[market.id])
    response = logged_in(staff).post(reverse("trading-market-suspend", args=[market.id]), {"next": target})
    assert response["Location"] == f"{target}#market-{market.id}"
