"""Money of several currencies on one book: kept exactly per currency, converted into the book's
currency at the operator's rates with one rounding rule, in Python and in the store's Lua alike."""

from decimal import Decimal

import pytest

from reducers.liability import (
    MarketBook,
    SelectionTotal,
    aggregate,
    book_from_hash,
    books_of,
    liability_deltas,
    outcome_deltas,
)
from reducers.rates import LUA_TO_BOOK, RateRefused, book_amount, in_book, rate_check, rate_units, to_book
from reducers.schemas import decode_bet_event
from store import keys
from store.liability import BookChange, BookStore
from tests.factories import bet_event_build as event
from tests.fakes import fake_store_client

EUR_AT_085 = {"EUR": 850_000}


@pytest.fixture
def fake_store():
    return fake_store_client()


def test_a_conversion_rounds_to_the_nearest_penny_half_a_penny_up():
    assert to_book(1000, units=850_000) == 850
    assert to_book(3, units=850_000) == 3  # 2.55p
    assert to_book(1, units=500_000) == 1  # 0.5p up
    assert to_book(-1, units=500_000) == 0  # -0.5p up, towards plus infinity
    assert to_book(-3, units=850_000) == -3  # -2.55p


def test_each_currency_converts_on_its_own_and_the_book_currency_is_always_par():
    assert in_book((("EUR", 3), ("GBP", 5)), EUR_AT_085) == 3 + 5
    assert in_book((("GBP", 101),), {"GBP": 2_000_000}) == 101


def test_a_currency_without_a_rate_counts_at_par():
    assert in_book((("USD", 250),), {}) == 250


def test_the_lua_rule_agrees_with_python_to_the_penny_on_large_and_negative_amounts(fake_store):
    script = fake_store.register_script(LUA_TO_BOOK + "return to_book(tonumber(ARGV[1]), tonumber(ARGV[2]))")
    cases = [
        (pence, units)
        for pence in (0, 1, -1, 3, -3, 999_999, 1_000_001, -1_000_001, 123_456_789_012, -987_654_321_098)
        for units in (1, 500_000, 850_000, 1_234_567, 1_000_000_000)
    ]
    assert [int(script(args=[p, u])) for p, u in cases] == [to_book(p, units=u) for p, u in cases]


@pytest.mark.parametrize(
    ("currency", "rate", "reason"),
    [
        ("EUR", Decimal("0"), "positive"),
        ("EUR", Decimal("-0.85"), "positive"),
        ("EUR", Decimal("NaN"), "positive"),
        ("EUR", Decimal("0.0001"), "between"),
        ("EUR", Decimal("1001"), "between"),
        ("EUR", Decimal("0.8500001"), "decimal places"),
        ("GBP", Decimal("1.1"), "always 1"),
        ("JPY", Decimal("0.005"), "not a currency"),
    ],
)
def test_a_rate_out_of_bounds_or_of_an_unknown_or_the_book_currency_is_refused(currency, rate, reason):
    with pytest.raises(RateRefused, match=reason):
        rate_check(currency=currency, rate=rate)


def test_a_rate_is_kept_to_six_places_and_travels_as_millionths():
    rate = rate_check(currency="USD", rate=Decimal("0.79"))
    assert (str(rate), rate_units(rate)) == ("0.790000", 790_000)


def test_a_bet_event_without_a_currency_is_in_the_book_currency():
    raw = event("placed", event_id="old").encode().replace(b',"currency":"GBP"', b"")
    assert b"currency" not in raw
    assert decode_bet_event(raw).currency == "GBP"


def test_the_desk_amounts_of_a_bet_are_in_its_currency_and_in_the_books():
    assert book_amount(Decimal("10.00"), currency="EUR", rates=EUR_AT_085) == Decimal("8.50")


def test_a_selection_keeps_each_currencys_exposure_apart():
    totals = aggregate(
        [event("placed", event_id="g", stake="10.00"), event("placed", event_id="e", bet_id=2, currency="EUR")]
    )
    assert totals == {1: SelectionTotal((("EUR", 1500), ("GBP", 1500)), 2)}
    assert totals[1].in_book(EUR_AT_085) == 1500 + 1275


def test_a_market_book_converts_each_outcomes_pl_per_currency():
    gbp = event("placed", event_id="g", stake="10.00", legs=((1, "3.00"),))
    eur = event("placed", event_id="e", bet_id=2, stake="20.00", legs=((1, "2.00"),), currency="EUR")
    figures = books_of([gbp, eur])[1].figures(EUR_AT_085)
    # GBP: staked 1000, pays 3000; EUR: staked 2000, pays 4000 → -2000 + (-2000 * 0.85).
    assert (figures.staked, figures.worst, figures.worst_selection) == (1000 + 1700, -2000 - 1700, 1)


def test_the_worst_outcome_follows_the_rates():
    gbp = event("placed", event_id="g", stake="10.00", legs=((1, "3.00"),))
    book = books_of([gbp])[1]
    eur_book = MarketBook(
        1, 1, staked=(("EUR", 2000), ("GBP", 1000)), bets=2, returns=((1, "GBP", 3000), (2, "EUR", 5000))
    )
    assert book.figures({}).worst_selection == 1
    assert eur_book.figures({"EUR": 500_000}).worst_selection == 1  # -2000 + (2000 * 0.5) vs 1000 - 1500
    assert eur_book.figures({"EUR": 1_500_000}).worst_selection == 2  # -2000 + 3000 vs 1000 - 4500


def _changes(*events):
    return [BookChange(e.event_id, liability_deltas(e), outcome_deltas(e), b"{}") for e in events]


def test_the_store_converts_as_the_decision_does_at_any_rate(fake_store):
    store = BookStore(fake_store)
    store.rates_set({"EUR": 853_217, "USD": 790_000})
    events = [
        event("placed", event_id="g", stake="10.01", legs=((1, "3.07"),)),
        event("placed", event_id="e", bet_id=2, stake="7.33", legs=((1, "2.11"),), currency="EUR"),
        event("placed", event_id="u", bet_id=3, stake="3.33", legs=((1, "1.37"),), currency="USD"),
    ]
    assert store.apply(_changes(*events), seen_ttl_s=60) == [1, 1, 1]
    books, worsts, rates = store.books([1])
    figures = books_of(events)[1].figures(rates)
    assert books == books_of(events)
    assert worsts == {1: figures.worst}
    assert int(fake_store.hget(keys.liability(1), "pence")) == aggregate(events)[1].in_book(rates)
    assert fake_store.zscore(keys.liability_index(), "1") == aggregate(events)[1].in_book(rates)


def test_a_rate_change_moves_the_figures_and_the_rankings(fake_store):
    store = BookStore(fake_store)
    store.rates_set({"EUR": 850_000})
    gbp = event("placed", event_id="g", stake="10.00", legs=((1, "3.00"),))  # loses 2000 GBP pence
    eur = event("placed", event_id="e", bet_id=2, stake="10.00", legs=((2, "3.40"),), currency="EUR")  # 2400 EUR
    store.apply(_changes(gbp, eur), seen_ttl_s=60)
    assert store.riskiest_events(limit=2) == [(2, -2040), (1, -2000)]
    assert store.rates_set({"EUR": 800_000})
    assert sorted(store.rerank()) == [1, 2]
    assert store.riskiest_events(limit=2) == [(1, -2000), (2, -1920)]
    assert fake_store.zrevrange(keys.liability_index(), 0, -1) == [b"1", b"2"]
    assert int(fake_store.hget(keys.liability(2), "pence")) == 1920


def test_unchanged_rates_rank_nothing_again(fake_store):
    store = BookStore(fake_store)
    assert store.rates_set({"EUR": 850_000})
    assert not store.rates_set({"EUR": 850_000})


def test_a_void_after_a_rate_change_cancels_its_bet_exactly(fake_store):
    store = BookStore(fake_store)
    store.rates_set({"EUR": 850_000})
    placed = event("placed", event_id="p", stake="3.33", legs=((1, "3.03"),), currency="EUR")
    kept = event("placed", event_id="k", bet_id=2, stake="1.00", legs=((1, "2.00"),))
    store.apply(_changes(placed, kept), seen_ttl_s=60)
    store.rates_set({"EUR": 1_234_567})
    store.rerank()
    voided = event("voided", event_id="v", stake="3.33", legs=((1, "3.03"),), currency="EUR")
    assert store.apply(_changes(voided, voided), seen_ttl_s=60) == [1, 0]
    books, _, _ = store.books([1])
    assert books[1] == books_of([kept])[1]
    assert fake_store.hget(keys.liability(1), "c:EUR") == b"0"
    assert int(fake_store.hget(keys.liability(1), "pence")) == 100


def test_a_book_written_before_currencies_is_kept_in_the_book_currency_and_cancels_exactly(fake_store):
    store = BookStore(fake_store)
    store.rates_set({"EUR": 850_000})
    placed = event("placed", event_id="old", stake="10.00", legs=((1, "3.00"),))
    # As the store held it before currencies: one sum of pence, in pounds.
    fake_store.hset(keys.liability(1), mapping={"pence": 2000, "bets": 1})
    fake_store.zadd(keys.liability_index(), {"1": 2000})
    fake_store.hset(keys.market_book(1), mapping={"staked": 1000, "bets": 1, "event": 1, "r:1": 3000, "worst": -2000})
    euro = event("placed", event_id="e", bet_id=2, stake="10.00", legs=((1, "3.00"),), currency="EUR")
    store.apply(_changes(euro), seen_ttl_s=60)
    assert int(fake_store.hget(keys.liability(1), "pence")) == 2000 + 1700
    assert store.books([1])[0][1] == books_of([placed, euro])[1]
    voided = event("voided", event_id="v", stake="10.00", legs=((1, "3.00"),))
    store.apply(_changes(voided), seen_ttl_s=60)
    assert int(fake_store.hget(keys.liability(1), "pence")) == 1700
    assert store.books([1])[0][1] == books_of([euro])[1]


def test_the_desk_reads_a_book_written_before_currencies_in_the_book_currency():
    raw = {b"staked": b"1000", b"bets": b"1", b"event": b"7", b"r:1": b"3000", b"worst": b"-2000"}
    assert book_from_hash(1, raw) == MarketBook(1, 7, staked=(("GBP", 1000),), bets=1, returns=((1, "GBP", 3000),))
