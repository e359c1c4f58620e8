"""What a restored database makes of the bet events Kafka kept (reducers/restore.py)."""

from reducers.restore import BetRow, Verdict, bet_event_verdict, bet_id_floor, liability_marks
from tests.factories import bet_event_build as event


def test_an_event_of_a_bet_the_database_never_saw_is_a_lost_bet_marked_seen():
    verdict = bet_event_verdict(event("placed", event_id="7:placed", bet_id=7), None)
    assert verdict.verdict is Verdict.LOST_BET
    assert verdict.dead_letter
    assert verdict.seen
    assert "bet 7" in verdict.detail
    assert "restored wallet holds its stake" in verdict.detail


def test_a_placed_event_is_held_by_an_open_or_settled_bet():
    for status in ("accepted", "won", "lost", "void", "cashed_out"):
        verdict = bet_event_verdict(event("placed", event_id="1:placed"), BetRow(1, 1, status))
        assert verdict.verdict is Verdict.HELD
        assert not verdict.dead_letter
        assert verdict.seen


def test_a_settlement_the_database_does_not_hold_is_a_lost_change_left_unseen():
    verdict = bet_event_verdict(event("settled", event_id="1:settled"), BetRow(1, 1, "accepted"))
    assert verdict.verdict is Verdict.LOST_CHANGE
    assert verdict.dead_letter
    assert not verdict.seen
    assert "accepted in the restored database" in verdict.detail


def test_a_placed_event_of_a_bet_still_held_by_the_in_play_delay_is_a_lost_change():
    verdict = bet_event_verdict(event("placed", event_id="1:placed"), BetRow(1, 1, "pending"))
    assert verdict.verdict is Verdict.LOST_CHANGE


def test_each_change_is_held_only_by_its_own_outcome():
    assert bet_event_verdict(event("voided", event_id="v"), BetRow(1, 1, "void")).verdict is Verdict.HELD
    assert bet_event_verdict(event("voided", event_id="v"), BetRow(1, 1, "won")).verdict is Verdict.LOST_CHANGE
    assert bet_event_verdict(event("cashed_out", event_id="c"), BetRow(1, 1, "cashed_out")).verdict is Verdict.HELD
    assert bet_event_verdict(event("settled", event_id="s"), BetRow(1, 1, "lost")).verdict is Verdict.HELD
    assert bet_event_verdict(event("settled", event_id="s"), BetRow(1, 1, "void")).verdict is Verdict.LOST_CHANGE


def test_a_held_bet_is_held_by_any_later_state_and_a_refusal_only_by_a_rejected_bet():
    for status in ("pending", "accepted", "rejected", "won", "lost", "void", "cashed_out"):
        assert bet_event_verdict(event("pending", event_id="p"), BetRow(1, 1, status)).verdict is Verdict.HELD
    assert bet_event_verdict(event("rejected", event_id="r"), BetRow(1, 1, "rejected")).verdict is Verdict.HELD
    assert bet_event_verdict(event("rejected", event_id="r"), BetRow(1, 1, "pending")).verdict is Verdict.LOST_CHANGE


def test_a_bet_id_the_database_gave_another_punter_is_a_lost_bet():
    verdict = bet_event_verdict(event("placed", event_id="1:placed"), BetRow(1, 2, "accepted"))
    assert verdict.verdict is Verdict.LOST_BET


def test_the_bet_id_floor_is_the_highest_id_kafka_has_seen():
    assert bet_id_floor([event("placed", event_id="a", bet_id=4), event("placed", event_id="b", bet_id=9)]) == 9
    assert bet_id_floor([]) == 0


def test_marks_hold_the_open_bets_and_every_event_but_lost_changes():
    verdicts = [
        bet_event_verdict(event("placed", event_id="1:placed", bet_id=1), BetRow(1, 1, "accepted")),
        bet_event_verdict(event("settled", event_id="1:settled", bet_id=1), BetRow(1, 1, "accepted")),
        bet_event_verdict(event("placed", event_id="9:placed", bet_id=9), None),
    ]
    marks = liability_marks(verdicts, open_bet_events=["1:placed", "2:placed"])
    assert marks.seen == {"1:placed", "2:placed", "9:placed"}
    assert marks.unseen == {"1:settled"}


def test_an_offer_is_held_by_the_bet_in_any_state_after_it():
    for status in ("pending", "accepted", "rejected", "won", "lost", "void", "cashed_out"):
        assert bet_event_verdict(event("offered", event_id="o"), BetRow(1, 1, status)).verdict is Verdict.HELD


def test_a_corrected_result_is_held_by_a_bet_taken_and_lost_by_one_still_pending():
    for kind in ("reopened", "resettled"):
        for status in ("accepted", "won", "lost", "void", "cashed_out"):
            assert bet_event_verdict(event(kind, event_id=kind), BetRow(1, 1, status)).verdict is Verdict.HELD
        assert bet_event_verdict(event(kind, event_id=kind), BetRow(1, 1, "pending")).verdict is Verdict.LOST_CHANGE
