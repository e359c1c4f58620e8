from django.urls import path

from odds.api import views

app_name = "api"

urlpatterns = [
    path("bets", views.bets, name="bets"),
    path("bets/<int:bet_id>/cash-out", views.bet_cash_out_view, name="bet-cash-out"),
    path("wallet", views.wallet, name="wallet"),
]
