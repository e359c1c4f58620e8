"""Resettlement of a wrongly resulted market: compensating entries only (nothing posted is
edited), bets already paid or cashed out, an accumulator open again, a claw-back that never takes
a balance below zero, a confirmation that must match its preview, the audit entry."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection

from odds.audit.models import AuditEntry
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.services.bets import bet_cash_out
from odds.betting.services.resettlement import ResettlementRefused, market_resettle, resettlement_preview
from odds.betting.services.settlement import market_bets_settle
from odds.betting.services.wallet import ledger_post
from odds.catalogue.models import Market, Selection
from odds.catalogue.services.markets import market_result
from odds.models import OutboxMessage
from reducers import resettlement, topics
from reducers.schemas import decode_bet_event
from tests.factories import live_state_write, market_create, user_create
from tests.integration.betting.helpers import bet_accepted, corrected, resettle, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

Kind = LedgerEntry.Kind


@pytest.fixture
def trader(services):
    return user_create(balance="0", staff=True)


def settled(market: Market, winner: Selection | None) -> Market:
    market_result(market=market, winners=None if winner is None else [winner.id])
    market_bets_settle(market_id=market.id)
    market.refresh_from_db()
    assert market.status == Market.Status.SETTLED
    return market


def balance(user) -> Decimal:
    return Wallet.objects.get(user=user).balance


def entries_of(bet: Bet) -> list[tuple[str, str, str, Decimal]]:
    return list(bet.entries.order_by("id").values_list("kind", "debit", "credit", "amount"))


def test_a_winner_that_lost_is_clawed_back_and_a_loser_that_won_is_paid(punter, market, trader):
    home, draw, _ = selections_of(market)
    other = user_create(balance="100.00")
    paid = bet_accepted(punter, home, stake="10.00")  # 2.10: paid 21.00
    unpaid = bet_accepted(other, draw, stake="10.00")  # 3.40: lost
    settled(market, home)
    assert balance(punter) == Decimal("111.00")
    first_entries = entries_of(paid)

    preview = resettlement_preview(market=market, results=corrected(market, draw))
    moves = {line.bet_id: (line.move.what, line.move.wallet) for line in preview.lines}
    assert moves == {paid.id: ("clawed back", Decimal("-21.00")), unpaid.id: ("paid more", Decimal("34.00"))}
    assert balance(punter) == Decimal("111.00"), "a preview moves nothing"

    market_resettle(market_id=market.id, results=corrected(market, draw), digest=preview.digest, by=trader)
    paid.refresh_from_db()
    unpaid.refresh_from_db()
    assert (paid.status, paid.payout) == (Bet.Status.LOST, Decimal("0.00"))
    assert (unpaid.status, unpaid.payout) == (Bet.Status.WON, Decimal("34.00"))
    assert balance(punter) == Decimal("90.00")
    assert balance(other) == Decimal("124.00")
    # The first settlement's entries are all still there, unchanged; one entry compensates.
    assert entries_of(paid)[: len(first_entries)] == first_entries
    assert entries_of(paid)[len(first_entries) :] == [(Kind.RESETTLE, "wallet", "house", Decimal("21.00"))]
    assert entries_of(unpaid)[-1] == (Kind.RESETTLE, "house", "wallet", Decimal("34.00"))
    for user in (punter, other):
        wallet = Wallet.objects.get(user=user)
        assert wallet_ledger_balance(wallet=wallet) == wallet.balance
    assert {s.id: s.result for s in Selection.objects.filter(market=market)} == corrected(market, draw)
    assert list(paid.legs.values_list("result", flat=True)) == ["lost"]


def bet_events(bet: Bet) -> list[tuple[str, str, str]]:
    messages = OutboxMessage.objects.filter(topic=topics.bets(), key=str(bet.id).encode()).order_by("id")
    decoded = [decode_bet_event(bytes(m.value)) for m in messages if m.value is not None]
    return [(e.type, e.event_id, e.reason) for e in decoded]


def test_every_resettled_bet_goes_on_the_ticker_once_per_correction(punter, market, trader):
    home, draw, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")
    settled(market, home)
    first = resettle(market, corrected(market, draw), trader)
    second = resettle(market, corrected(market, home), trader)
    changes = [e for e in bet_events(bet) if e[0] == "resettled"]
    assert changes == [
        (
            "resettled",
            f"{bet.id}:resettled:{first.reference}-bet{bet.id}",
            "result corrected: won → lost, balance \N{MINUS SIGN}£21.00",
        ),
        (
            "resettled",
            f"{bet.id}:resettled:{second.reference}-bet{bet.id}",
            "result corrected: lost → won, balance +£21.00",
        ),
    ]
    assert balance(punter) == Decimal("111.00")


def test_a_claw_back_takes_what_the_balance_holds_and_reports_the_rest_owed(punter, market, trader):
    home, draw, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")
    settled(market, home)
    wallet = Wallet.objects.get(user=punter)
    # The punter withdrew most of the winnings: 111.00 less 100.00 leaves 11.00 of the 21.00.
    ledger_post(wallet=wallet, kind=Kind.WITHDRAWAL, debit="wallet", credit="cash", amount=Decimal("100.00"))

    applied = resettle(market, corrected(market, draw), trader)
    (line,) = applied.lines
    assert (line.taken, line.owed) == (Decimal("11.00"), Decimal("10.00"))
    assert balance(punter) == Decimal("0.00")
    bet.refresh_from_db()
    assert bet.status == Bet.Status.LOST
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.MARKET_RESETTLE)
    assert entry.after["owed"] == {str(bet.id): "10.00"}
    assert entry.after["totals"]["GBP"]["clawed_back"] == "11.00"


def test_a_cash_out_stands_and_moves_nothing(punter, market, trader, redis_client):
    other_market = market_create(prices=("1.50", "4.00", "6.00"))
    home, draw, _ = selections_of(market)
    acca = bet_accepted(punter, home, selections_of(other_market)[0], stake="10.00")
    settled(market, home)
    live_state_write(redis_client, other_market, prices=("1.50", "4.00", "6.00"))
    bet_cash_out(user=punter, bet_id=acca.id, quote_seen=Decimal("29.92"), policy="any")
    acca.refresh_from_db()
    assert acca.status == Bet.Status.CASHED_OUT
    before = (balance(punter), entries_of(acca))

    applied = resettle(market, corrected(market, draw), trader)
    assert [(line.bet_id, line.move.what, line.move.moves) for line in applied.lines] == [
        (acca.id, resettlement.CASH_OUT_STANDS, False)
    ]
    acca.refresh_from_db()
    assert acca.status == Bet.Status.CASHED_OUT
    assert (balance(punter), entries_of(acca)) == before


def test_a_lost_accumulator_opens_again_and_settles_later_once(punter, market, trader):
    other_market = market_create(prices=("1.50", "4.00", "6.00"))
    home, draw, _ = selections_of(market)
    acca = bet_accepted(punter, home, selections_of(other_market)[0], stake="10.00")
    settled(market, draw)  # the home leg lost: the accumulator lost with its other leg undecided
    acca.refresh_from_db()
    assert acca.status == Bet.Status.LOST

    applied = resettle(market, corrected(market, home), trader)
    assert [line.move.what for line in applied.lines] == [resettlement.REOPENED]
    acca.refresh_from_db()
    assert (acca.status, acca.reopened) == (Bet.Status.ACCEPTED, 1)
    assert entries_of(acca)[-1] == (Kind.RESETTLE, "house", "bets_held", Decimal("10.00"))
    assert balance(punter) == Decimal("90.00")

    # The other leg wins: the accumulator settles as any bet does, its entries told apart from
    # the first settlement's by a reference.
    settled(other_market, selections_of(other_market)[0])
    acca.refresh_from_db()
    assert (acca.status, acca.payout) == (Bet.Status.WON, Decimal("31.50"))
    assert balance(punter) == Decimal("121.50")
    releases = acca.entries.filter(kind=Kind.STAKE_RELEASE).order_by("id")
    assert [e.reference for e in releases] == ["", f"bet{acca.id}-reopened1"]
    # On the bets topic: back in the books when opened again, out when settled again (an event id
    # of its own: the first settlement's is taken).
    assert [(kind, event_id) for kind, event_id, _ in bet_events(acca)] == [
        ("placed", f"{acca.id}:placed"),
        ("settled", f"{acca.id}:settled"),
        ("reopened", f"{acca.id}:reopened:1"),
        ("settled", f"{acca.id}:settled:reopened1"),
    ]
    wallet = Wallet.objects.get(user=punter)
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance


def test_an_open_accumulator_settles_when_its_corrected_leg_loses(punter, market, trader):
    other_market = market_create(prices=("1.50", "4.00", "6.00"))
    home, draw, _ = selections_of(market)
    acca = bet_accepted(punter, home, selections_of(other_market)[0], stake="10.00")
    settled(market, home)
    acca.refresh_from_db()
    assert acca.status == Bet.Status.ACCEPTED

    resettle(market, corrected(market, draw), trader)
    acca.refresh_from_db()
    assert (acca.status, acca.payout) == (Bet.Status.LOST, Decimal("0.00"))
    assert entries_of(acca)[-1] == (Kind.STAKE_RELEASE, "bets_held", "house", Decimal("10.00"))


def test_a_void_correction_refunds_and_the_audit_names_both_results(punter, market, trader):
    home, draw, away = selections_of(market)
    bet = bet_accepted(punter, draw, stake="10.00")
    settled(market, home)
    assert balance(punter) == Decimal("90.00")
    resettle(market, {home.id: "void", draw.id: "void", away.id: "void"}, trader, reason="match abandoned")
    bet.refresh_from_db()
    assert (bet.status, bet.payout) == (Bet.Status.VOID, Decimal("10.00"))
    assert balance(punter) == Decimal("100.00")
    entry = AuditEntry.objects.get(kind=AuditEntry.Kind.MARKET_RESETTLE)
    assert entry.actor == trader.username
    assert entry.reason == "match abandoned"
    assert entry.before["results"] == {home.name: "won", draw.name: "lost", away.name: "lost"}
    assert entry.after["results"] == {home.name: "void", draw.name: "void", away.name: "void"}


@pytest.mark.parametrize(
    ("results", "refusal"),
    [
        pytest.param("same", "the result already settled", id="unchanged"),
        pytest.param("missing", "give every selection a result", id="missing"),
        pytest.param("bad", "won, lost or void", id="unknown-result"),
        pytest.param("foreign", "not in this market", id="foreign-selection"),
    ],
)
def test_bad_corrections_are_refused_and_change_nothing(punter, market, trader, results, refusal):
    home, draw, away = selections_of(market)
    bet_accepted(punter, home, stake="10.00")
    settled(market, home)
    given = {
        "same": corrected(market, home),
        "missing": {home.id: "lost", draw.id: "won"},
        "bad": {home.id: "lost", draw.id: "half", away.id: "lost"},
        "foreign": {**corrected(market, draw), 10**9: "won"},
    }[results]
    with pytest.raises(ResettlementRefused, match=refusal):
        resettlement_preview(market=market, results=given)
    with pytest.raises(ResettlementRefused, match=refusal):
        market_resettle(market_id=market.id, results=given, digest="x", by=trader)
    assert balance(punter) == Decimal("111.00")
    assert not AuditEntry.objects.filter(kind=AuditEntry.Kind.MARKET_RESETTLE).exists()


def test_an_unsettled_market_is_not_resettled(punter, market, trader):
    _, draw, _ = selections_of(market)
    with pytest.raises(ResettlementRefused, match="only a settled market"):
        resettlement_preview(market=market, results=corrected(market, draw))


def test_a_confirmation_after_the_bets_changed_is_refused_and_a_new_preview_applies(
    punter, market, trader, redis_client
):
    other_market = market_create(prices=("1.50", "4.00", "6.00"))
    home, draw, _ = selections_of(market)
    acca = bet_accepted(punter, home, selections_of(other_market)[0], stake="10.00")
    settled(market, home)
    stale = resettlement_preview(market=market, results=corrected(market, draw))
    assert [line.move.what for line in stale.lines] == [resettlement.SETTLED_NOW]
    # The punter cashes out between the trader's preview and confirmation.
    live_state_write(redis_client, other_market, prices=("1.50", "4.00", "6.00"))
    bet_cash_out(user=punter, bet_id=acca.id, quote_seen=Decimal("29.92"), policy="any")
    cashed = balance(punter)
    with pytest.raises(ResettlementRefused, match="changed since the preview"):
        market_resettle(market_id=market.id, results=corrected(market, draw), digest=stale.digest, by=trader)
    assert Selection.objects.get(id=home.id).result == "won", "nothing changed"
    applied = resettle(market, corrected(market, draw), trader)
    assert [line.move.what for line in applied.lines] == [resettlement.CASH_OUT_STANDS]
    assert balance(punter) == cashed


@pytest.mark.django_db(transaction=True)
def test_a_resettlement_and_a_cash_out_at_once_leave_one_consistent_outcome(services, redis_client):
    """Both lock the punter's wallet and then the bet: whichever is second sees what the first did
    (a cash-out of a bet already settled by the resettlement is refused; a resettlement whose bet
    was cashed out first is refused as changed since its preview, and moves no money)."""
    from odds.betting.services.bets import CashOutRejected

    punter = user_create(balance="100.00")
    trader = user_create(balance="0", staff=True)
    market = market_create(prices=("2.10", "3.40", "3.50"))
    other_market = market_create(prices=("1.50", "4.00", "6.00"))
    home, draw, _ = selections_of(market)
    acca = bet_accepted(punter, home, selections_of(other_market)[0], stake="10.00")
    settled(market, home)
    live_state_write(redis_client, other_market, prices=("1.50", "4.00", "6.00"))
    preview = resettlement_preview(market=market, results=corrected(market, draw))
    outcomes: dict[str, object] = {}
    start = threading.Barrier(2)

    def run(name, work):
        start.wait()
        try:
            outcomes[name] = work()
        except (ResettlementRefused, CashOutRejected) as exc:
            outcomes[name] = exc
        finally:
            connection.close()

    threads = [
        threading.Thread(
            target=run,
            args=(
                "resettle",
                lambda: market_resettle(
                    market_id=market.id, results=corrected(market, draw), digest=preview.digest, by=trader
                ),
            ),
        ),
        threading.Thread(
            target=run,
            args=(
                "cash_out",
                lambda: bet_cash_out(user=punter, bet_id=acca.id, quote_seen=Decimal("29.92"), policy="any"),
            ),
        ),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    acca.refresh_from_db()
    refused = [name for name, outcome in outcomes.items() if isinstance(outcome, Exception)]
    assert len(refused) == 1, outcomes
    if acca.status == Bet.Status.CASHED_OUT:
        assert refused == ["resettle"]
        assert balance(punter) == Decimal("90.00") + acca.payout
    else:
        assert refused == ["cash_out"]
        assert (acca.status, balance(punter)) == (Bet.Status.LOST, Decimal("90.00"))
    wallet = Wallet.objects.get(user=punter)
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance
