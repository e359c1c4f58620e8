"""Write the cross-language test vectors the TypeScript tests check against the Python rules.

    .venv/bin/python frontend/tests/vectors/generate.py          # rewrite the vectors
    .venv/bin/python frontend/tests/vectors/generate.py --check  # fail when they are stale

Odds formats come from ``odds/core/formatting.py``, bet maths from ``reducers/betting.py`` and
scoreboards from ``odds/catalogue/scoreboard.py``, so the browser shows exactly what the server would.
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
from odds.catalogue.scoreboard import board_of  # noqa: E402
from odds.core.formatting import decimal_text, decimal_to_american, decimal_to_fractional  # noqa: E402
from reducers.betting import combined_odds, potential_return  # noqa: E402

OUT = Path(__file__).with_name("python_rules.json")


def _prices() -> list[Decimal]:
    cents = [Decimal(n) / 100 for n in range(101, 1001)]  # 1.01 .. 10.00 by 0.01
    tenths = [Decimal(n) / 10 for n in range(101, 1001)]  # 10.1 .. 100.0 by 0.1
    units = [Decimal(n) for n in range(101, 1001)]  # 101 .. 1000
    return [p.quantize(Decimal("0.01")) for p in cents + tenths + units]


AT = 1_795_000_000_000


def _match(sport: str, **fields: object) -> dict[str, object]:
    match: dict[str, object] = {
        "type": "match",
        "v": 1,
        "event_id": 7,
        "seq": 41,
        "sport": sport,
        "status": "in_play",
        "period": 1,
        "score": {"home": 0, "away": 0},
        "clock": None,
        "incidents": [],
        "suspension": None,
    }
    match.update(fields)
    return match


def _clock(elapsed: int, *, down: bool = False, running: bool = True, rate: int = 1) -> dict[str, object]:
    return {
        "running": running,
        "elapsed_s": elapsed,
        "at": AT,
        "direction": "down" if down else "up",
        "limit_s": 720 if down else None,
        "rate": rate,
    }


def _boards() -> list[object]:
    """Match messages of each sport and phase, with the board each layout draws at a moment."""
    red = {"kind": "red_card", "side": "away", "period": 2, "at": AT}
    tennis = {"sets": [1, 0], "games": [5, 4], "points": ["AD", "40"], "set_games": [[7, 6]], "server": "away"}
    cases: list[tuple[dict[str, object] | None, int, str, dict[str, object]]] = [
        (_match("football", clock=_clock(600), score={"home": 1, "away": 0}), AT + 59_000, "row", {}),
        (_match("football", period=2, clock=_clock(5_390), incidents=[red]), AT + 120_000, "row", {}),
        (_match("football", status="break", clock=_clock(2_700, running=False)), AT + 60_000, "head", {}),
        (_match("football", status="finished", score={"home": 3, "away": 2}), AT, "head", {}),
        (
            _match("football", clock=_clock(1_200), suspension={"reason": "goal", "since": AT - 4_000}),
            AT,
            "row",
            {},
        ),
        (_match("football", clock=_clock(0, rate=60)), AT + 90_000, "row", {}),
        (
            _match(
                "basketball",
                period=3,
                clock=_clock(95, down=True),
                score={"home": 70, "away": 66, "periods": [[30, 28], [22, 25], [18, 13]]},
            ),
            AT + 7_500,
            "head",
            {},
        ),
        (_match("basketball", period=2, status="break", clock=_clock(720, down=True, running=False)), AT, "row", {}),
        (_match("basketball", status="finished", score={"home": 101, "away": 99}), AT, "row", {}),
        (_match("tennis", period=2, score=tennis), AT, "row", {}),
        (_match("tennis", period=2, score=tennis), AT, "head", {}),
        (
            _match("tennis", score={"sets": [0, 0], "games": [6, 6], "points": ["5", "3"], "server": "home"}),
            AT,
            "row",
            {},
        ),
        (
            _match("tennis", status="finished", score={**tennis, "sets": [2, 0], "set_games": [[7, 6], [6, 4]]}),
            AT,
            "head",
            {},
        ),
        (_match("basketball", period=4, clock=_clock(720, down=True)), AT, "row", {"status": "finished"}),
        (None, AT, "row", {"sport": "tennis", "status": "in_play", "home_score": 1, "away_score": 0}),
        (None, AT, "row", {"sport": "football", "status": "scheduled"}),
        (None, AT, "head", {"sport": "basketball", "status": "finished", "home_score": 90, "away_score": 88}),
    ]
    out: list[object] = []
    for match, now_ms, layout, fallback in cases:
        sport = str(match["sport"]) if match else str(fallback["sport"])
        board = board_of(
            event_id=7,
            sport=sport,
            home="Home Side",
            away="Away Side",
            match=match,
            now_ms=now_ms,
            layout=layout,  # type: ignore[arg-type]
            status=str(fallback.get("status", "scheduled")),
            home_score=int(fallback.get("home_score", 0)),  # type: ignore[call-overload]
            away_score=int(fallback.get("away_score", 0)),  # type: ignore[call-overload]
        )
        out.append({"match": match, "now": now_ms, "layout": layout, "fallback": fallback, "board": board.to_json()})
    return out


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
    return {"formats": formats, "slips": slips, "boards": _boards()}


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
