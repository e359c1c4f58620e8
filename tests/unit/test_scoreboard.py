"""Scoreboards in each sport's shape, from a match message (the server's half of the board; the
browser's half draws the same from the same vectors)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from odds.catalogue.scoreboard import board_of, clock_text

AT = 1_795_000_000_000
ROOT = Path(__file__).resolve().parents[2]


def match(sport: str, **fields) -> dict:
    return {
        "type": "match",
        "event_id": 1,
        "seq": 3,
        "sport": sport,
        "status": "in_play",
        "period": 1,
        "score": {"home": 0, "away": 0},
        "clock": None,
        "incidents": [],
        **fields,
    }


def clock(elapsed: int, *, running: bool = True, down: bool = False, rate: int = 1) -> dict:
    return {
        "running": running,
        "elapsed_s": elapsed,
        "at": AT,
        "direction": "down" if down else "up",
        "limit_s": 720 if down else None,
        "rate": rate,
    }


def board(message: dict | None, *, layout="row", now=AT, **catalogue):
    sport = message["sport"] if message else catalogue.pop("sport")
    return board_of(
        event_id=1, sport=sport, home="Home", away="Away", match=message, now_ms=now, layout=layout, **catalogue
    )


def test_a_running_football_clock_is_rendered_as_it_stands_when_the_page_is_built():
    running = match("football", clock=clock(600))
    assert clock_text(running, AT) == "11'"
    assert clock_text(running, AT + 5 * 60_000) == "16'"
    assert clock_text(match("football", period=2, clock=clock(90 * 60 + 70)), AT) == "90+2'"


def test_each_sport_says_finished_in_its_own_word_and_shows_no_clock():
    for sport, word in (("football", "FT"), ("basketball", "Final"), ("tennis", "Finished")):
        done = board(match(sport, status="finished"))
        assert (done.done, done.clock, done.live) == (word, "", False)


def test_a_tennis_board_has_sets_games_and_points_and_marks_the_server():
    score = {"sets": [1, 0], "games": [2, 3], "points": ["40", "AD"], "set_games": [[6, 4]], "server": "away"}
    row = board(match("tennis", period=2, score=score))
    assert row.columns == ("Sets", "Games", "Points")
    assert (row.home.cells, row.away.cells) == (("1", "2", "40"), ("0", "3", "AD"))
    assert (row.home.serving, row.away.serving) == (False, True)
    head = board(match("tennis", period=2, score=score), layout="head")
    assert head.columns == ("Sets", "S1", "Games", "Points")
    assert head.home.cells == ("1", "6", "2", "40")


def test_a_basketball_page_shows_each_quarter_and_the_total():
    score = {"home": 50, "away": 47, "periods": [[25, 20], [25, 27]]}
    head = board(match("basketball", period=3, clock=clock(30, down=True), score=score), layout="head")
    assert head.columns == ("Q1", "Q2", "T")
    assert head.home.cells == ("25", "25", "50")
    assert head.clock == "Q3 11:30"
    assert board(match("basketball", score=score)).columns == ("",)


def test_red_cards_are_counted_from_the_incidents():
    incidents = [{"kind": "red_card", "side": "home", "period": 1, "at": AT}] * 2
    shown = board(match("football", clock=clock(60), incidents=incidents))
    assert (shown.home.red_cards, shown.away.red_cards) == (2, 0)


def test_a_suspension_is_told_in_the_punters_words_while_the_match_is_live():
    suspended = match("football", clock=clock(60), suspension={"reason": "goal", "since": AT})
    assert board(suspended).note == "Goal — back soon"
    assert board({**suspended, "status": "finished"}).note == ""


def test_without_a_match_state_the_catalogue_score_stands_in_and_no_clock_is_made_up():
    fallback = board(None, sport="football", status="in_play", home_score=2, away_score=1)
    assert (fallback.status, fallback.clock, fallback.home.cells, fallback.away.cells) == (
        "in_play",
        "",
        ("2",),
        ("1",),
    )
    tennis = board(None, sport="tennis", status="in_play", home_score=1, away_score=0)
    assert tennis.columns == ("Sets",)


def test_a_match_the_catalogue_has_finished_is_shown_finished_before_its_last_state_arrives():
    late = board(match("football", clock=clock(95 * 60)), status="finished")
    assert (late.status, late.clock) == ("finished", "")


def test_the_browsers_vectors_are_the_boards_this_module_draws():
    path = ROOT / "frontend" / "tests" / "vectors" / "generate.py"
    spec = importlib.util.spec_from_file_location("vectors_generate", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = json.loads((ROOT / "frontend" / "tests" / "vectors" / "python_rules.json").read_text())
    assert written["boards"] == json.loads(json.dumps(module._boards())), "run frontend/tests/vectors/generate.py"
