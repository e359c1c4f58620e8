from django.urls import path

from odds.api import openapi, snapshots, views

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
    path("views/home", snapshots.home_view, name="view-home"),
    path("views/in-play", snapshots.in_play_view, name="view-in-play"),
    path("views/starting-soon", snapshots.starting_soon_view, name="view-starting-soon"),
    path("views/sport/<slug:sport_slug>", snapshots.sport_view, name="view-sport"),
    path("views/sport/<slug:sport_slug>/<int:competition_id>", snapshots.competition_view, name="view-competition"),
    path("views/event/<int:event_id>", snapshots.event_view, name="view-event"),
]
