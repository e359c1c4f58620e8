"""The punter's wallet page."""

from django.urls import path

from odds.betting import views

urlpatterns = [path("wallet/", views.wallet_page, name="wallet")]
