"""The site's routes: the sportsbook pages, each domain's pages and the REST API."""

from allauth.account import urls as account_urls
from django.contrib.auth import views as auth_views
from django.urls import URLPattern, URLResolver, include, path, re_path

from odds.api.api import urlpatterns_under
from odds.api.http import api_not_found
from odds.betting import urls as betting_urls
from odds.game import urls as game_urls
from odds.ops import urls as ops_urls
from odds.trading import urls as trading_urls
from odds.views import pages

# allauth's account pages (sign-up, email verification, password reset and change) without its own
# login page (the site's is /login/), and allauth.mfa's (TOTP, recovery codes) under 2fa/.
accounts_urlpatterns: list[URLPattern | URLResolver] = [
    *(pattern for pattern in account_urls.urlpatterns if getattr(pattern, "name", None) != "account_login"),
    path("2fa/", include("allauth.mfa.urls")),
]

urlpatterns: list[URLPattern | URLResolver] = [
    path("", pages.home, name="home"),
    path("sport/<slug:sport_slug>/", pages.home, name="sport"),
    path("event/<int:event_id>/", pages.event_page, name="event"),
    *urlpatterns_under("healthz"),
    path("api/", include("odds.api.urls")),
    path("login/", pages.LoginView.as_view(), name="login"),
    # allauth's name for the same page: its flows (the second factor's, a reset's) come back here.
    path("login/", pages.LoginView.as_view(), name="account_login"),
    path("accounts/", include(accounts_urlpatterns)),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("in-play/", pages.in_play, name="in-play"),
    path("starting-soon/", pages.starting_soon, name="starting-soon"),
    path("sport/<slug:sport_slug>/<int:competition_id>/", pages.competition_page, name="competition"),
    path("my-bets/", pages.my_bets, name="my-bets"),
    path("live/events", pages.events_live, name="events-live"),
    *betting_urls.urlpatterns,
    *game_urls.urlpatterns,
]

# Every staff page and staff API (trader and operator areas); each is checked for 401/403 by the
# tests. The staff JSON APIs are odds/api/ops.py.
staff_urlpatterns: list[URLPattern] = [
    *trading_urls.urlpatterns,
    *game_urls.staff_urlpatterns,
    *ops_urls.staff_urlpatterns,
    *urlpatterns_under("trading/api/"),
    *urlpatterns_under("ops/api/"),
]
urlpatterns += [*staff_urlpatterns, *ops_urls.scrape_urlpatterns]

# Last: any other path under the JSON APIs (a bet or market id that is not a number included) is a
# 404 in JSON, not Django's HTML page.
urlpatterns += [re_path(r"^(?:api|trading/api|ops/api)/", api_not_found, name="api-not-found")]
