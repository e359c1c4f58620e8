"""The punter's wallet page and play-time page."""

from django.urls import path

from odds.betting import views

urlpatterns = [
    path("wallet/", views.wallet_page, name="wallet"),
    path("play/", views.play_page, name="play"),
]
