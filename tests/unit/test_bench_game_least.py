"""The least game's query (``bench.game_ceiling --least``) does with each answer what every game
must: it decodes and checks it as the game does, and writes one state for its punter. A record that
does not decode is skipped, not written."""

from __future__ import annotations

import pandas as pd

from bench.game_ceiling import least_states
from reducers.schemas import GameAnswer

PREFIX = b"ns:game:p:"


def _answer(user_id: int) -> GameAnswer:
    return GameAnswer(
        answer_id=f"{user_id:032x}", user_id=user_id, event_id=7, question_id=7001, choice="home", ts=1_700_000_000_000
    )


def test_each_answer_that_decodes_is_its_punters_state_and_the_rest_are_skipped():
    first, second = _answer(11), _answer(12)
    frames = [
        pd.DataFrame({"key": [first.key(), b"12"], "value": [first.encode(), b"{not json"]}),
        pd.DataFrame({"key": [second.key()], "value": [second.encode()]}),
    ]
    assert least_states(iter(frames), PREFIX) == [
        (b"ns:game:p:11", first.encode()),
        (b"ns:game:p:12", second.encode()),
    ]


def test_an_answer_under_another_punters_key_is_refused_as_the_game_refuses_it():
    answer = _answer(11)
    frames = [pd.DataFrame({"key": [b"99"], "value": [answer.encode()]})]
    assert least_states(iter(frames), PREFIX) == []
