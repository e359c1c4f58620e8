"""The book's rules, in one place: bet limits, stake and odds precision, the fractional ladder.

Everything that checks or shows one of these reads it from here: bet placement, the slip and
bets views, the API description, the pages. The browser's copy, ``frontend/src/rules.json``,
is generated from this module (``make rules``, or ``python -m reducers.rules --write``) and
``make test`` fails when the two differ (tests/unit/test_rules.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from decimal import Decimal
from pathlib import Path

# --- a bet ---
MIN_STAKE = Decimal("0.10")
MAX_STAKE = Decimal("10000.00")
# The largest potential return of one bet.
MAX_RETURN = Decimal("250000.00")
# The most legs an accumulator has.
MAX_LEGS = 20
# Stakes and returns are money in pence: two decimal places.
STAKE_PLACES = 2
PENNY = Decimal("0.01")
# The symbol of each currency a wallet may hold (odds/accounts/rules.py: CURRENCIES); amounts are
# shown in the punter's wallet currency (reducers/money.py, the browser's formatMoney).
CURRENCY_SYMBOLS: dict[str, str] = {"GBP": "£", "EUR": "€", "USD": "$"}
# The book's own currency: what the trading desk adds every wallet's amounts up in (at the rates the
# operator sets, reducers/rates.py) and what a wallet holds unless chosen otherwise.
BOOK_CURRENCY = "GBP"
# Decimal odds are shown and combined to two places.
ODDS_PLACES = Decimal("0.01")

# --- a slip or bets view (a subscriber channel) ---
# The largest stake a slip view prices: ten times the bet limit, so a slip holding a stake above
# the limit still shows its return and the reason the bet would be refused.
SLIP_VIEW_MAX_STAKE = MAX_STAKE * 10

# --- odds on screen ---
# The traditional fractional ladder (odds-on up to evens, then odds-against), ascending, as the
# platform spells it (6/4 rather than 3/2, 85/40 rather than 17/8).
FRACTIONAL_LADDER: tuple[str, ...] = (
    "1/100", "1/66", "1/50", "1/40", "1/33", "1/25", "1/20", "1/16", "1/14", "1/12", "1/10", "1/9",
    "1/8", "2/15", "1/7", "2/13", "1/6", "2/11", "1/5", "2/9", "1/4", "2/7", "3/10", "1/3",
    "4/11", "2/5", "4/9", "1/2", "8/15", "4/7", "8/13", "4/6", "8/11", "4/5", "5/6", "10/11",
    "1/1", "11/10", "6/5", "5/4", "11/8", "6/4", "13/8", "7/4", "15/8", "2/1", "85/40", "9/4",
    "5/2", "11/4", "3/1", "10/3", "7/2", "4/1", "9/2", "5/1", "11/2", "6/1", "13/2", "7/1",
    "15/2", "8/1", "17/2", "9/1", "10/1", "11/1", "12/1", "14/1", "16/1", "18/1", "20/1", "22/1",
    "25/1", "28/1", "33/1", "40/1", "50/1", "66/1", "80/1", "100/1", "125/1", "150/1", "200/1",
    "250/1", "300/1", "400/1", "500/1", "750/1", "999/1",
)  # fmt: skip

BROWSER_PATH = Path(__file__).resolve().parents[1] / "frontend" / "src" / "rules.json"


def browser_rules() -> str:
    """The browser's copy of the rules, as ``frontend/src/rules.json`` holds it (read through
    ``frontend/src/rules.ts``). Money stays a decimal string."""
    document = {
        "source": "generated from reducers/rules.py by `make rules`; edit that file, not this one",
        "limits": {
            "minStake": str(MIN_STAKE),
            "maxStake": str(MAX_STAKE),
            "maxReturn": str(MAX_RETURN),
            "maxLegs": MAX_LEGS,
        },
        "stakePlaces": STAKE_PLACES,
        "currencySymbols": CURRENCY_SYMBOLS,
        "fractionalLadder": list(FRACTIONAL_LADDER),
    }
    return json.dumps(document, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The browser's copy of the book's rules.")
    parser.add_argument("--write", action="store_true", help=f"write {BROWSER_PATH.name}")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs from the rules")
    args = parser.parse_args(argv)
    text = browser_rules()
    if args.write:
        BROWSER_PATH.write_text(text)
        return 0
    if args.check:
        current = BROWSER_PATH.read_text() if BROWSER_PATH.exists() else ""
        if current != text:
            print(f"{BROWSER_PATH} differs from reducers/rules.py: run `make rules`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
