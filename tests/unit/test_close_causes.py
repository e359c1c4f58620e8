"""A websocket close's cause, as ``sportsbook_websocket_closes_total`` counts it: a name per known
code, and one name for every other code a client may send (the label's values stay few)."""

from odds.core import events


def test_known_codes_have_their_names_and_any_other_code_is_other():
    assert events.close_cause(1000) == "normal"
    assert events.close_cause(1001) == "going_away"
    assert events.close_cause(1006) == "abnormal"
    assert events.close_cause(1009) == "too_big"
    assert events.close_cause(events.CLOSE_TOO_MANY_CONNECTIONS) == "too_many_connections"
    assert events.close_cause(events.CLOSE_TRY_AGAIN) == "try_again"
    assert {events.close_cause(code) for code in (4000, 4999, 3000, 2)} == {"other"}
    assert events.close_cause(None) == "no_status"
