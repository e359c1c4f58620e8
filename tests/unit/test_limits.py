"""The limits' rule (reducers/limits.py): how a change takes effect, what a window has used and
left, which breach a refusal names and when it frees room, and the words the punter reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from reducers import limits
from reducers.limits import Breach, Change, LimitKind, LimitTerms, Period, Window
from reducers.money import money_text

NOW = datetime(2026, 11, 28, 18, 40, tzinfo=UTC)
DAY = timedelta(hours=24)


# --- changes ---------------------------------------------------------------------------------


def test_a_first_limit_is_in_force_at_once():
    change = limits.limit_change(current=None, amount=Decimal("50.00"), now=NOW, cooling_off=DAY)
    assert change == limits.LimitChange(LimitTerms(amount=Decimal("50.00")), Change.SET)


def test_a_lower_limit_is_in_force_at_once_and_drops_a_waiting_raise():
    current = LimitTerms(
        amount=Decimal("50.00"), pending_amount=Decimal("80.00"), pending_from=NOW + timedelta(hours=3)
    )
    change = limits.limit_change(current=current, amount=Decimal("20.00"), now=NOW, cooling_off=DAY)
    assert change == limits.LimitChange(LimitTerms(amount=Decimal("20.00")), Change.LOWERED)


def test_a_higher_limit_waits_for_the_cooling_off_and_the_current_one_applies_meanwhile():
    change = limits.limit_change(
        current=LimitTerms(amount=Decimal("50.00")), amount=Decimal("500.00"), now=NOW, cooling_off=DAY
    )
    assert change.change is Change.RAISE_WAITS
    assert change.terms == LimitTerms(amount=Decimal("50.00"), pending_amount=Decimal("500.00"), pending_from=NOW + DAY)
    assert limits.terms_at(change.terms, now=NOW + DAY - timedelta(seconds=1)).amount == Decimal("50.00")
    assert limits.terms_at(change.terms, now=NOW + DAY) == LimitTerms(amount=Decimal("500.00"))


def test_the_same_raise_asked_again_does_not_start_the_cooling_off_over():
    waiting = LimitTerms(
        amount=Decimal("50.00"), pending_amount=Decimal("500.00"), pending_from=NOW + timedelta(hours=2)
    )
    change = limits.limit_change(current=waiting, amount=Decimal("500.00"), now=NOW, cooling_off=DAY)
    assert change.terms == waiting


def test_another_raise_starts_its_own_cooling_off():
    waiting = LimitTerms(
        amount=Decimal("50.00"), pending_amount=Decimal("500.00"), pending_from=NOW + timedelta(hours=2)
    )
    change = limits.limit_change(current=waiting, amount=Decimal("900.00"), now=NOW, cooling_off=DAY)
    assert change.terms == LimitTerms(amount=Decimal("50.00"), pending_amount=Decimal("900.00"), pending_from=NOW + DAY)


def test_a_raise_whose_cooling_off_ended_is_the_limit_a_new_change_starts_from():
    ended = LimitTerms(
        amount=Decimal("50.00"), pending_amount=Decimal("500.00"), pending_from=NOW - timedelta(seconds=1)
    )
    change = limits.limit_change(current=ended, amount=Decimal("400.00"), now=NOW, cooling_off=DAY)
    assert change == limits.LimitChange(LimitTerms(amount=Decimal("400.00")), Change.LOWERED)


# --- what a window has used --------------------------------------------------------------------


def test_a_wager_limit_counts_every_stake_and_a_loss_limit_nets_what_bets_paid_back():
    window = Window(counted=Decimal("30.00"), returned=Decimal("12.50"))
    assert limits.used(kind=LimitKind.WAGER, window=window) == Decimal("30.00")
    assert limits.used(kind=LimitKind.LOSS, window=window) == Decimal("17.50")
    assert limits.left(kind=LimitKind.LOSS, amount=Decimal("20.00"), window=window) == Decimal("2.50")
    assert limits.left(kind=LimitKind.WAGER, amount=Decimal("20.00"), window=window) == Decimal("0.00")


def test_winnings_in_the_window_make_room_under_a_loss_limit():
    window = Window(counted=Decimal("10.00"), returned=Decimal("35.00"))
    assert limits.used(kind=LimitKind.LOSS, window=window) == Decimal("-25.00")
    assert (
        limits.breach_of(kind="loss", period="day", amount=Decimal("20.00"), window=window, more=Decimal("45.00"))
        is None
    )


# --- breaches ----------------------------------------------------------------------------------


def test_a_stake_exactly_at_the_limit_is_taken_and_a_penny_more_is_refused():
    first = NOW - timedelta(hours=5)
    window = Window(counted=Decimal("40.00"), returned=Decimal("0.00"), first_at=first)
    assert (
        limits.breach_of(kind="loss", period="day", amount=Decimal("50.00"), window=window, more=Decimal("10.00"))
        is None
    )
    breach = limits.breach_of(kind="loss", period="day", amount=Decimal("50.00"), window=window, more=Decimal("10.01"))
    assert breach == Breach(
        kind="loss", period="day", amount=Decimal("50.00"), left=Decimal("10.00"), resets_at=first + DAY
    )
    assert breach.code == "over_loss_limit"


def test_the_window_frees_room_when_its_oldest_counted_entry_leaves_it():
    first = NOW - timedelta(days=3)
    window = Window(counted=Decimal("100.00"), first_at=first)
    breach = limits.breach_of(
        kind="wager", period="week", amount=Decimal("100.00"), window=window, more=Decimal("1.00")
    )
    assert breach is not None
    assert breach.resets_at == first + timedelta(days=7)


def test_an_amount_above_the_limit_itself_never_fits_and_has_no_reset_time():
    breach = limits.breach_of(
        kind="wager", period="month", amount=Decimal("20.00"), window=Window(counted=Decimal("0")), more=Decimal("25")
    )
    assert breach is not None
    assert breach.resets_at is None


def test_of_several_breaches_the_one_that_frees_room_last_is_told():
    day = Breach("loss", "day", Decimal("10"), Decimal("0"), NOW + timedelta(hours=2))
    week = Breach("wager", "week", Decimal("50"), Decimal("0"), NOW + timedelta(days=3))
    never = Breach("wager", "month", Decimal("5"), Decimal("5"), None)
    assert limits.breach_reported([day, week]) == week
    assert limits.breach_reported([week, day]) == week
    assert limits.breach_reported([day, never, week]) == never
    assert limits.breach_reported([]) is None


def test_equal_reset_times_tell_the_first_breach_given():
    at = NOW + timedelta(hours=2)
    loss = Breach("loss", "day", Decimal("10"), Decimal("0"), at)
    wager = Breach("wager", "day", Decimal("10"), Decimal("0"), at)
    assert limits.breach_reported([loss, wager]) == loss


# --- words -------------------------------------------------------------------------------------


def test_a_refused_bet_says_which_limit_what_is_left_and_when_it_frees_up_in_the_wallets_currency():
    breach = Breach("loss", "day", Decimal("50.00"), Decimal("10.00"), datetime(2026, 11, 29, 18, 40, tzinfo=UTC))
    assert limits.breach_message(breach, currency="EUR") == (
        "This bet is over your daily loss limit of €50.00: you can stake €10.00 more now,"
        " and the limit frees up from 29 Nov 2026, 18:40 UTC."
    )


def test_a_refused_deposit_says_deposit():
    breach = Breach("deposit", "week", Decimal("60.00"), Decimal("10.00"), datetime(2026, 12, 1, 9, 5, tzinfo=UTC))
    assert limits.breach_message(breach, currency="GBP") == (
        "This deposit is over your weekly deposit limit of £60.00: you can deposit £10.00 more now,"
        " and the limit frees up from 1 Dec 2026, 09:05 UTC."
    )


def test_a_stake_above_the_limit_itself_is_told_what_is_left_and_no_time():
    breach = Breach("wager", "month", Decimal("20.00"), Decimal("12.50"), None)
    assert limits.breach_message(breach, currency="USD") == (
        "This bet is above your monthly wager limit of $20.00: you can stake $12.50 more now."
    )


def test_the_notice_of_a_raise_says_when_it_applies_and_what_applies_until_then():
    change = limits.limit_change(
        current=LimitTerms(amount=Decimal("50.00")), amount=Decimal("500.00"), now=NOW, cooling_off=DAY
    )
    subject, text = limits.change_notice(kind="wager", period="week", change=change, currency="GBP")
    assert subject == "Your weekly wager limit rises on 29 Nov 2026, 18:40 UTC"
    assert "to £500.00" in text
    assert "stays £50.00" in text


def test_the_notice_of_a_lower_limit_says_it_is_in_force_now():
    change = limits.limit_change(
        current=LimitTerms(amount=Decimal("50.00")), amount=Decimal("20.00"), now=NOW, cooling_off=DAY
    )
    subject, text = limits.change_notice(kind="loss", period="day", change=change, currency="EUR")
    assert subject == "Your daily loss limit is lowered"
    assert text.startswith("Your daily loss limit is €20.00, in force now.")


# --- one registry ------------------------------------------------------------------------------


def test_the_model_choices_are_the_rules_kinds_and_periods():
    from odds.betting.models import WalletLimit

    assert WalletLimit.Kind.values == [kind.value for kind in LimitKind]
    assert WalletLimit.Period.values == [period.value for period in Period]
    assert dict(WalletLimit.Period.choices) == limits.PERIOD_LABELS
    assert WalletLimit.LENGTHS is limits.PERIOD_LENGTHS


def test_every_currency_a_wallet_may_hold_has_a_symbol():
    from odds.accounts.rules import CURRENCIES

    assert [money_text(Decimal("1234.5"), code) for code, _ in CURRENCIES] == ["£1,234.50", "€1,234.50", "$1,234.50"]
    assert money_text(Decimal("-3"), "GBP") == "\N{MINUS SIGN}£3.00"
    assert money_text(Decimal("7"), "CHF") == "CHF 7.00"


def test_the_placement_statement_spells_the_rules_period_lengths():
    from odds.betting.sql import CURRENT, sql_file

    text = sql_file(CURRENT["sb_bet_place"])
    for period, length in limits.PERIOD_LENGTHS.items():
        days = length.days
        assert f"WHEN '{period}' THEN interval '{days} day{'s' if days != 1 else ''}'" in text or (
            period == "month" and f"ELSE interval '{days} days'" in text
        ), period


def test_times_are_given_in_exact_milliseconds():
    at = datetime(2026, 11, 29, 18, 40, 0, 999, tzinfo=UTC)
    assert limits.epoch_ms(at) == 1795977600000
    assert limits.epoch_ms(at + timedelta(microseconds=1000)) == 1795977600001
