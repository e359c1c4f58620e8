from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from odds.api.api import urlpatterns_under
from odds.api.http import api_not_found
from odds.views import pages, wallet

urlpatterns = [
    path("", pages.home, name="home"),
    path("sport/<slug:sport_slug>/", pages.home, name="sport"),
    path("event/<int:event_id>/", pages.event_page, name="event"),
    *urlpatterns_under("healthz"),
    path("api/", include("odds.api.urls")),
    path("login/", pages.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]

urlpatterns += [
    path("in-play/", pages.in_play, name="in-play"),
    path("starting-soon/", pages.starting_soon, name="starting-soon"),
    path("sport/<slug:sport_slug>/<int:competition_id>/", pages.competition_page, name="competition"),
    path("my-bets/", pages.my_bets, name="my-bets"),
    path("wallet/", wallet.wallet_page, name="wallet"),
    path("live/events", pages.events_live, name="events-live"),
]

# Trader and operator pages and APIs (staff only), and /metrics.
urlpatterns += [path("", include("odds.views.ops"))]

# Last: any other path under the JSON APIs (a bet or market id that is not a number included) is a
# 404 in JSON, not Django's HTML page.
urlpatterns += [re_path(r"^(?:api|trading/api|ops/api)/", api_not_found, name="api-not-found")]
