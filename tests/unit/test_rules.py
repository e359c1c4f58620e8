"""The book's rules have one home (reducers/rules.py): the browser's generated copy matches it,
and every place that checks a limit reads it from there."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

from odds.api.schemas import streams
from odds.betting.services import placement
from odds.core import formatting
from reducers import betting, rules

ROOT = Path(__file__).resolve().parents[2]


def test_the_browsers_copy_is_generated_from_the_rules():
    """Fails when reducers/rules.py changed without `make rules`, or the file was edited by hand."""
    assert rules.BROWSER_PATH.read_text() == rules.browser_rules(), "run `make rules`"


def test_the_check_command_fails_on_a_drifted_copy(tmp_path, monkeypatch):
    drifted = tmp_path / "rules.json"
    drifted.write_text(rules.browser_rules().replace('"maxStake": "10000.00"', '"maxStake": "99.00"'))
    monkeypatch.setattr(rules, "BROWSER_PATH", drifted)
    assert rules.main(["--check"]) == 1
    drifted.write_text(rules.browser_rules())
    assert rules.main(["--check"]) == 0


def test_the_check_runs_as_a_command():
    result = subprocess.run(
        [sys.executable, "-m", "reducers.rules", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_every_reader_of_a_limit_has_the_rules_value():
    assert (placement.MIN_STAKE, placement.MAX_STAKE, placement.MAX_RETURN, placement.MAX_LEGS) == (
        rules.MIN_STAKE,
        rules.MAX_STAKE,
        rules.MAX_RETURN,
        rules.MAX_LEGS,
    )
    assert betting.MAX_LEGS == rules.MAX_LEGS
    assert streams.SLIP_VIEW_MAX_STAKE == rules.SLIP_VIEW_MAX_STAKE
    assert tuple(Fraction(rung) for rung in rules.FRACTIONAL_LADDER) == formatting.FRACTIONAL_LADDER


def test_a_slip_view_prices_stakes_above_the_bet_limit_so_it_can_say_why_one_is_refused():
    assert rules.SLIP_VIEW_MAX_STAKE > rules.MAX_STAKE


def test_no_other_module_sets_a_stake_or_leg_limit_of_its_own():
    """A limit is assigned a literal only in reducers/rules.py."""
    offenders = []
    for path in [*ROOT.glob("odds/**/*.py"), *ROOT.glob("reducers/*.py"), *ROOT.glob("webapp/**/*.py")]:
        if path.name == "rules.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith(("MIN_STAKE =", "MAX_STAKE =", "MAX_RETURN =", "MAX_LEGS =")) and (
                "rules." not in stripped
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {stripped}")
    assert offenders == []
