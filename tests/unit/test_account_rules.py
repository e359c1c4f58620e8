"""The age rule of sign-up, on dates around a birthday."""

from __future__ import annotations

from datetime import date

from odds.accounts.rules import MIN_AGE, age_on, old_enough


def test_a_birthday_not_yet_reached_this_year_does_not_count():
    assert age_on(born=date(2000, 6, 2), today=date(2018, 6, 1)) == 17
    assert age_on(born=date(2000, 6, 2), today=date(2018, 6, 2)) == 18


def test_someone_is_old_enough_on_their_eighteenth_birthday_and_not_the_day_before():
    born = date(2008, 3, 15)
    assert not old_enough(born=born, today=date(2008 + MIN_AGE, 3, 14))
    assert old_enough(born=born, today=date(2008 + MIN_AGE, 3, 15))


def test_a_leap_day_birthday_counts_on_the_first_of_march():
    born = date(2008, 2, 29)
    assert not old_enough(born=born, today=date(2026, 2, 28))
    assert old_enough(born=born, today=date(2026, 3, 1))
