from odds.betting.models.bets import Bet, BetLeg
from odds.betting.models.play import PlayPreferences, PlaySession
from odds.betting.models.verdicts import LegVerdict
from odds.betting.models.wallet import LedgerEntry, OwedClaim, Wallet, WalletLimit

__all__ = [
    "Bet",
    "BetLeg",
    "LedgerEntry",
    "LegVerdict",
    "OwedClaim",
    "PlayPreferences",
    "PlaySession",
    "Wallet",
    "WalletLimit",
]
