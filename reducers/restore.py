"""What a restored database makes of the records Kafka kept: decisions over plain data.

PostgreSQL restored to an earlier moment has forgotten what happened after it; Kafka has not.
The bets topic may hold events of bets the database never saw (placed after the restore point:
the restored wallet still holds their stakes), or changes of bets the database holds in an
earlier state (settled, cashed out or voided after the restore point). Neither is replayed into
the database: a bet event carries neither the idempotency key nor the payment that funded the
stake, so a replay would move money the ledger cannot account for. Each is dead-lettered with
the reason below and the detail, for the book to settle with the punter; the bet ids it used are
never handed out again.

The liability figures are rebuilt from the database's open bets. Every event whose change the
database holds, or whose bet it never saw, is marked seen so the liability reducer never counts
it again; an event of a change the database does not hold is left unmarked, so that the same
change, made again, counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from reducers.schemas import BetEvent

DEAD_LETTER_REASON = "not_in_restored_database"

# The bet statuses in which the change of each event type is held.
HELD_IN: dict[str, frozenset[str]] = {
    "placed": frozenset({"accepted", "won", "lost", "void", "cashed_out"}),
    "voided": frozenset({"void"}),
    "cashed_out": frozenset({"cashed_out"}),
    "settled": frozenset({"won", "lost"}),
    # Held until its delay passed, then accepted (and perhaps settled since) or refused.
    "pending": frozenset({"pending", "accepted", "rejected", "won", "lost", "void", "cashed_out"}),
    "referred": frozenset({"pending", "accepted", "rejected", "won", "lost", "void", "cashed_out"}),
    "rejected": frozenset({"rejected"}),
    # A trader's offer on a referred bet: taken, turned down or lapsed since.
    "offered": frozenset({"pending", "accepted", "rejected", "won", "lost", "void", "cashed_out"}),
    # A corrected result (docs/resettlement.md): the bet open again, or settled on another outcome,
    # and perhaps settled or resettled again since.
    "reopened": frozenset({"accepted", "won", "lost", "void", "cashed_out"}),
    "resettled": frozenset({"accepted", "won", "lost", "void", "cashed_out"}),
}


@dataclass(frozen=True)
class BetRow:
    """What the database holds of one bet."""

    bet_id: int
    user_id: int
    status: str


class Verdict(StrEnum):
    HELD = "held"  # the database holds the event's change
    LOST_BET = "lost_bet"  # the database never saw the bet
    LOST_CHANGE = "lost_change"  # the database holds the bet in an earlier state


@dataclass(frozen=True)
class BetEventVerdict:
    event_id: str
    bet_id: int
    verdict: Verdict
    detail: str

    @property
    def dead_letter(self) -> bool:
        return self.verdict is not Verdict.HELD

    @property
    def seen(self) -> bool:
        """Whether the liability reducer must never count this event (again)."""
        return self.verdict is not Verdict.LOST_CHANGE


def bet_event_verdict(event: BetEvent, bet: BetRow | None) -> BetEventVerdict:
    """Whether the restored database holds ``event``'s change, and if not, why."""
    if bet is None or bet.user_id != event.user_id:
        return BetEventVerdict(
            event.event_id,
            event.bet_id,
            Verdict.LOST_BET,
            f"bet {event.bet_id} ({event.type}, stake {event.stake}) is not in the restored database: "
            "it was placed after the restore point, and the restored wallet holds its stake",
        )
    if bet.status in HELD_IN[event.type]:
        return BetEventVerdict(event.event_id, event.bet_id, Verdict.HELD, "")
    return BetEventVerdict(
        event.event_id,
        event.bet_id,
        Verdict.LOST_CHANGE,
        f"bet {event.bet_id} is {bet.status} in the restored database: its {event.type} happened after "
        "the restore point and counts when it happens again",
    )


def bet_id_floor(events: Iterable[BetEvent]) -> int:
    """The highest bet id Kafka has seen: the database must hand out only ids above it."""
    return max((event.bet_id for event in events), default=0)


@dataclass(frozen=True)
class LiabilityMarks:
    """Seen-markers of the liability reducer to set, and to clear, with a rebuilt figure."""

    seen: frozenset[str]
    unseen: frozenset[str]


def liability_marks(verdicts: Iterable[BetEventVerdict], *, open_bet_events: Iterable[str]) -> LiabilityMarks:
    """The markers that go with liability rebuilt from the database: the events the figure holds
    (``open_bet_events``, the ``placed`` events of its open bets) and every event read that it
    holds or must never hold are seen; an event of a change the database lost is not, so the
    change counts when it is made again."""
    seen = set(open_bet_events)
    unseen: set[str] = set()
    for verdict in verdicts:
        (seen if verdict.seen else unseen).add(verdict.event_id)
    return LiabilityMarks(seen=frozenset(seen - unseen), unseen=frozenset(unseen))
