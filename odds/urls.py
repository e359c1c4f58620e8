from django.contrib.auth import views as auth_views
from django.urls import include, path

from odds.views import health, pages

urlpatterns = [
    path("", pages.home, name="home"),
    path("sport/<slug:sport_slug>/", pages.home, name="sport"),
    path("event/<int:event_id>/", pages.event_page, name="event"),
    path("healthz", health.healthz, name="healthz"),
    path("api/", include("odds.api.urls")),
    path("login/", auth_views.LoginView.as_view(template_name="odds/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
