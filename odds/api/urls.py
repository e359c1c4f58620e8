from django.urls import path

from odds.api import openapi, views

app_name = "api"

urlpatterns = [
    path("openapi.json", openapi.openapi_json, name="openapi"),
    path("bets", views.bets, name="bets"),
    path("bets/<int:bet_id>/cash-out", views.bet_cash_out_view, name="bet-cash-out"),
    path("wallet", views.wallet, name="wallet"),
    path("wallet/deposits", views.wallet_deposits, name="wallet-deposits"),
    path("wallet/withdrawals", views.wallet_withdrawals, name="wallet-withdrawals"),
    path("wallet/limits/<str:period>", views.wallet_limit, name="wallet-limit"),
    path("wallet/break", views.wallet_break, name="wallet-break"),
]
