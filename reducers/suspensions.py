"""Why a market is suspended, declared once: each reason's words for the punter and the trader,
and whether the suspension ends by itself.

The feed suspends an event's markets while an incident settles (a goal, a red card, a VAR check,
a break of serve, the kick-off) and reopens them itself; a trader's suspension stays until a
trader resumes it; ``feed_lost`` is set when the live feed stops beating and lifted by the feed
when it comes back. The catalogue stores the reason and who set it on the market, the match state
carries the event's current one to punters (``MatchStateUpdate.suspension``), and the trading
pages flag a suspension longer than ``LONG_SUSPENSION_S``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class Reason(StrEnum):
    KICK_OFF = "kick_off"
    GOAL = "goal"
    RED_CARD = "red_card"
    VAR = "var"
    BREAK_OF_SERVE = "break_of_serve"
    TRADER = "trader"
    FEED_LOST = "feed_lost"


@dataclass(frozen=True)
class SuspensionReason:
    reason: Reason
    label: str  # the trader's word for it
    punter: str  # what the punter reads on the market
    ends_by_itself: bool


REASONS: Final[dict[str, SuspensionReason]] = {
    r.reason.value: r
    for r in (
        SuspensionReason(Reason.KICK_OFF, "Kick-off", "Going in play — back soon", True),
        SuspensionReason(Reason.GOAL, "Goal", "Goal — back soon", True),
        SuspensionReason(Reason.RED_CARD, "Red card", "Red card — back soon", True),
        SuspensionReason(Reason.VAR, "VAR check", "VAR check — back soon", True),
        SuspensionReason(Reason.BREAK_OF_SERVE, "Break of serve", "Break of serve — back soon", True),
        SuspensionReason(Reason.TRADER, "Trader", "Suspended by our traders", False),
        SuspensionReason(Reason.FEED_LOST, "Feed lost", "Waiting for the live feed", False),
    )
}
# The catalogue's choices for a market's suspension reason: (stored value, label).
CHOICES: Final = tuple((key, r.label) for key, r in REASONS.items())
# Who suspends on the feed's behalf: the feed itself, and the watch that notices it has stopped.
BY_FEED: Final = "feed"
BY_FEED_WATCH: Final = "feed watch"
FEED_SETTERS: Final = (BY_FEED, BY_FEED_WATCH)
# A suspension older than this is flagged to traders: nothing the feed does lasts so long.
LONG_SUSPENSION_S: Final = 10 * 60
PLAIN = "Suspended"


def punter_text(reason: str) -> str:
    """What a punter reads on a market suspended for ``reason`` ("" or unknown: "Suspended")."""
    found = REASONS.get(reason)
    return found.punter if found is not None else PLAIN


def trader_label(reason: str) -> str:
    found = REASONS.get(reason)
    return found.label if found is not None else "No reason given"


def duration_text(seconds: float) -> str:
    """How long, in the trading pages' words: 45 s, 3 min, 1 h 20 min."""
    whole = max(0, int(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes = whole // 60
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"
