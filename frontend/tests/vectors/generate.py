"""Write the cross-language test vectors the TypeScript tests check against the Python rules.

    .venv/bin/python frontend/tests/vectors/generate.py          # rewrite the vectors
    .venv/bin/python frontend/tests/vectors/generate.py --check  # fail when they are stale

Odds formats come from ``odds/core/formatting.py`` and bet maths from ``reducers/betting.py``, so the
browser shows exactly what the server would.
"""

from __future__ import annotations

import json
import random
import sys
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

# A script run from anywhere: the project root joins the path before the project's imports.
from odds.core.formatting import decimal_text, decimal_to_american, decimal_to_fractional  # noqa: E402
from reducers.betting import combined_odds, potential_return  # noqa: E402

OUT = Path(__file__).with_name("python_rules.json")


def _prices() -> list[Decimal]:
    cents = [Decimal(n) / 100 for n in range(101, 1001)]  # 1.01 .. 10.00 by 0.01
    tenths = [Decimal(n) / 10 for n in range(101, 1001)]  # 10.1 .. 100.0 by 0.1
    units = [Decimal(n) for n in range(101, 1001)]  # 101 .. 1000
    return [p.quantize(Decimal("0.01")) for p in cents + tenths + units]


def vectors() -> dict[str, list[object]]:
    rng = random.Random(20261121)  # fixed: the file is stable between runs
    prices = _prices()
    formats: list[object] = [
        [str(p), decimal_text(p), decimal_to_fractional(p), decimal_to_american(p)] for p in prices
    ]
    slips: list[object] = []
    for _ in range(400):
        legs = [rng.choice(prices[:1500]) for _ in range(rng.randint(1, 6))]
        stake = (Decimal(rng.randint(10, 1_000_000)) / 100).quantize(Decimal("0.01"))
        slips.append(
            {
                "prices": [str(p) for p in legs],
                "stake": str(stake),
                "combined_odds": str(combined_odds(legs)),
                "potential_return": str(potential_return(stake=stake, prices=legs)),
            }
        )
    return {"formats": formats, "slips": slips}


def main() -> int:
    data = vectors()
    # One vector a line: readable diffs when a rule changes.
    parts = [
        f'  "{name}": [\n' + ",\n".join(f"    {json.dumps(item)}" for item in items) + "\n  ]"
        for name, items in data.items()
    ]
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is stale; run {Path(__file__).name} without --check", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
