from odds.models.bets import Bet, BetLeg
from odds.models.catalogue import Competition, Event, Market, Selection, Sport
from odds.models.outbox import OutboxMessage
from odds.models.wallet import DepositLimit, LedgerEntry, Wallet

__all__ = [
    "Bet",
    "BetLeg",
    "Competition",
    "DepositLimit",
    "Event",
    "LedgerEntry",
    "Market",
    "OutboxMessage",
    "Selection",
    "Sport",
    "Wallet",
]
from odds.models.ops import MetricSample

__all__ += ["MetricSample"]
