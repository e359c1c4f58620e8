"""What a sign-up must satisfy, declared once: the youngest age that may open an account, the
countries the book takes punters from and the currencies a wallet may hold."""

from __future__ import annotations

from datetime import date

MIN_AGE = 18

# ISO 3166-1 alpha-2 code and name of each country the book takes punters from.
COUNTRIES: tuple[tuple[str, str], ...] = (
    ("GB", "United Kingdom"),
    ("IE", "Ireland"),
    ("MT", "Malta"),
    ("GI", "Gibraltar"),
    ("DE", "Germany"),
    ("ES", "Spain"),
    ("FR", "France"),
    ("IT", "Italy"),
    ("NL", "Netherlands"),
    ("SE", "Sweden"),
    ("US", "United States"),
)

# ISO 4217 code and name of each currency a wallet may hold (one per wallet, chosen at sign-up).
CURRENCIES: tuple[tuple[str, str], ...] = (
    ("GBP", "Pound sterling (£)"),
    ("EUR", "Euro (€)"),
    ("USD", "US dollar ($)"),
)


def age_on(*, born: date, today: date) -> int:
    """Whole years from ``born`` to ``today`` (a birthday on 29 February counts on 1 March in
    other years)."""
    years = today.year - born.year
    if (today.month, today.day) < (born.month, born.day):
        years -= 1
    return years


def old_enough(*, born: date, today: date) -> bool:
    """Whether someone born on ``born`` is ``MIN_AGE`` or older on ``today``."""
    return age_on(born=born, today=today) >= MIN_AGE
