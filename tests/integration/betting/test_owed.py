"""What a corrected result's claw-back leaves owed, and how the wallet's next credits recover it:
oldest claim first, never below a zero balance, each recovery a ``resettle`` entry against the
claim's bet, shown to the punter and to traders."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from odds.betting.models import LedgerEntry, OwedClaim, Wallet
from odds.betting.models.wallet import RECOVERY_PREFIX
from odds.betting.selectors.bets import wallet_ledger_balance
from odds.betting.selectors.wallet import limit_window
from odds.betting.services.settlement import market_bets_settle
from odds.betting.services.wallet import ledger_post, wallet_deposit
from odds.catalogue.models import Market, Selection
from odds.catalogue.services.markets import market_result
from reducers import limits
from tests.factories import market_create, staff_sign_in, user_create
from tests.integration.betting.helpers import bet_accepted, corrected, resettle, selections_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

Kind = LedgerEntry.Kind


@pytest.fixture
def trader(services):
    return user_create(balance="0", staff=True)


def settled(market: Market, winner: Selection) -> None:
    market_result(market=market, winners=[winner.id])
    market_bets_settle(market_id=market.id)
    market.refresh_from_db()


def wallet_of(user) -> Wallet:
    return Wallet.objects.get(user=user)


def withdraw(user, amount: str) -> None:
    wallet = wallet_of(user)
    ledger_post(wallet=wallet, kind=Kind.WITHDRAWAL, debit="wallet", credit="cash", amount=Decimal(amount))


def recoveries(user) -> list[tuple[int | None, Decimal]]:
    """The recovery entries of the punter's wallet, oldest first: (bet, amount)."""
    entries = LedgerEntry.objects.filter(wallet__user=user, reference__startswith=RECOVERY_PREFIX).order_by("id")
    assert all((e.kind, e.debit, e.credit) == (Kind.RESETTLE, "wallet", "house") for e in entries)
    return [(e.bet_id, e.amount) for e in entries]


@pytest.fixture
def owing(punter, market, trader):
    """The punter was paid £21.00 on Home, withdrew all but £11.00 of it, and the result was
    corrected to a draw: £11.00 taken, £10.00 owed. The clawed bet."""
    home, draw, _ = selections_of(market)
    bet = bet_accepted(punter, home, stake="10.00")  # 2.10: paid 21.00
    settled(market, home)
    withdraw(punter, "100.00")
    resettle(market, corrected(market, draw), trader)
    return bet


def test_what_a_claw_back_cannot_take_is_an_owed_claim_on_the_wallet(punter, owing):
    wallet = wallet_of(punter)
    assert (wallet.balance, wallet.owed) == (Decimal("0.00"), Decimal("10.00"))
    (claim,) = OwedClaim.objects.filter(wallet=wallet)
    assert (claim.bet_id, claim.amount, claim.outstanding, claim.recovered_at) == (
        owing.id,
        Decimal("10.00"),
        Decimal("10.00"),
        None,
    )
    assert claim.reference.startswith("resettle-")
    assert claim.reference.endswith(f"-bet{owing.id}")


def test_a_deposit_recovers_what_is_owed_first_and_the_api_answers_the_balance_left(api, punter, owing):
    response = api.post_json("/api/wallet/deposits", {"v": 1, "amount": "25.00", "request_id": "after-claw"})
    assert response.status_code == 201, response.content
    body = response.json()
    # The deposit's own entry shows the 25.00 arriving; the balance left is what the punter holds.
    assert (body["entry"]["amount"], body["entry"]["balance_after"]) == ("25.00", "25.00")
    assert body["wallet"]["balance"] == "15.00"
    wallet = wallet_of(punter)
    assert (wallet.balance, wallet.owed) == (Decimal("15.00"), Decimal("0.00"))
    assert recoveries(punter) == [(owing.id, Decimal("10.00"))]
    claim = OwedClaim.objects.get(wallet=wallet)
    assert claim.outstanding == Decimal("0.00")
    assert claim.recovered_at is not None
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance
    assert api.get("/api/wallet").json()["owed"] == "0.00"
    # A repeat of the same deposit pays nothing and recovers nothing again.
    again = api.post_json("/api/wallet/deposits", {"v": 1, "amount": "25.00", "request_id": "after-claw"})
    assert again.status_code == 200
    assert wallet_of(punter).balance == Decimal("15.00")
    assert recoveries(punter) == [(owing.id, Decimal("10.00"))]


def test_payouts_and_deposits_while_owing_recover_the_oldest_claim_first(punter, trader):
    first_market, second_market, third_market = (
        market_create(prices=("2.10", "3.40", "3.50")),
        market_create(prices=("1.60", "3.80", "5.00")),
        market_create(prices=("2.00", "3.00", "4.00")),
    )
    first = bet_accepted(punter, selections_of(first_market)[0], stake="10.00")  # pays 21.00
    second = bet_accepted(punter, selections_of(second_market)[0], stake="5.00")  # pays 8.00
    third = bet_accepted(punter, selections_of(third_market)[0], stake="3.00")  # pays 6.00
    settled(first_market, selections_of(first_market)[0])
    settled(second_market, selections_of(second_market)[0])
    withdraw(punter, "111.00")  # 100 - 18 staked + 29 paid: nothing left
    resettle(first_market, corrected(first_market, selections_of(first_market)[1]), trader)
    resettle(second_market, corrected(second_market, selections_of(second_market)[1]), trader)
    wallet = wallet_of(punter)
    assert (wallet.balance, wallet.owed) == (Decimal("0.00"), Decimal("29.00"))

    # A payout smaller than what is owed is taken whole, against the oldest claim.
    settled(third_market, selections_of(third_market)[0])
    assert third.entries.get(kind=Kind.PAYOUT).amount == Decimal("6.00")
    wallet = wallet_of(punter)
    assert (wallet.balance, wallet.owed) == (Decimal("0.00"), Decimal("23.00"))
    # A deposit finishes the first claim and goes on to the second; the next leaves money over.
    wallet_deposit(user=punter, amount=Decimal("20.00"), reference="first")
    wallet_deposit(user=punter, amount=Decimal("10.00"), reference="second")
    wallet = wallet_of(punter)
    assert (wallet.balance, wallet.owed) == (Decimal("7.00"), Decimal("0.00"))
    assert recoveries(punter) == [
        (first.id, Decimal("6.00")),
        (first.id, Decimal("15.00")),
        (second.id, Decimal("5.00")),
        (second.id, Decimal("3.00")),
    ]
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance
    claims = OwedClaim.objects.filter(wallet=wallet).order_by("id")
    assert [(c.bet_id, c.amount, c.outstanding) for c in claims] == [
        (first.id, Decimal("21.00"), Decimal("0.00")),
        (second.id, Decimal("8.00"), Decimal("0.00")),
    ]
    assert all(c.recovered_at is not None for c in claims)


def test_a_result_corrected_back_cancels_the_debt_through_its_own_credit(punter, market, owing, trader):
    home, _, _ = selections_of(market)
    resettle(market, corrected(market, home), trader)  # lost → won again: +21.00, of which 10.00 is owed
    wallet = wallet_of(punter)
    assert (wallet.balance, wallet.owed) == (Decimal("11.00"), Decimal("0.00"))
    assert recoveries(punter) == [(owing.id, Decimal("10.00"))]
    assert wallet_ledger_balance(wallet=wallet) == wallet.balance


def test_a_recovery_counts_in_the_loss_limit_as_the_claw_back_it_completes(punter, owing):
    wallet = wallet_of(punter)
    window = limit_window(wallet=wallet, kind=limits.LimitKind.LOSS, period="day", now=timezone.now())
    # Staked 10.00; paid 21.00, of which 11.00 was taken back so far: 10.00 returned.
    assert (window.counted, window.returned) == (Decimal("10.00"), Decimal("10.00"))
    wallet_deposit(user=punter, amount=Decimal("30.00"), reference="later")
    window = limit_window(wallet=wallet_of(punter), kind=limits.LimitKind.LOSS, period="day", now=timezone.now())
    assert (window.counted, window.returned) == (Decimal("10.00"), Decimal("0.00"))


def test_the_punter_and_traders_see_what_is_owed(client, punter, owing, trader):
    client.force_login(punter)
    page = client.get(reverse("wallet")).content.decode()
    assert 'id="wallet-owed"' in page
    assert "£10.00" in page
    wallet_deposit(user=punter, amount=Decimal("4.00"), reference="part")
    page = client.get(reverse("wallet")).content.decode()
    assert 'You owe <strong class="num">£6.00</strong>' in page
    assert "<td>Owed recovered</td>" in page
    desk = Client()
    staff_sign_in(desk, trader)
    page = desk.get(reverse("trading-customer", args=[punter.id])).content.decode()
    assert "Owes £6.00" in page
    assert f'<tr data-bet="{owing.id}">' in page
    assert "£10.00" in page
    wallet_deposit(user=punter, amount=Decimal("6.00"), reference="rest")
    page = desk.get(reverse("trading-customer", args=[punter.id])).content.decode()
    assert 'id="customer-owed"' not in page


def test_operators_see_the_claims_in_the_admin_and_cannot_edit_them(punter, owing, trader):
    desk = Client()
    staff_sign_in(desk, trader)
    claim = OwedClaim.objects.get(bet=owing)
    listing = desk.get("/admin/betting/owedclaim/", {"q": punter.username})
    assert listing.status_code == 200
    assert f"/admin/betting/owedclaim/{claim.id}/change/" in listing.content.decode()
    response = desk.post(f"/admin/betting/owedclaim/{claim.id}/change/", {"outstanding": "0.00"})
    claim.refresh_from_db()
    assert (response.status_code, claim.outstanding) == (403, Decimal("10.00"))
    wallets = desk.get("/admin/betting/wallet/", {"q": punter.username}).content.decode()
    assert "10.00" in wallets
