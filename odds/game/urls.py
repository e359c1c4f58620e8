"""The predictor game's pages: the leaderboard, and the staff page of questions."""

from django.urls import path

from odds.game import views

urlpatterns = [
    path("game/leaderboard/", views.leaderboard_page, name="game-leaderboard"),
]

# Staff only (checked with the other staff pages by odds.urls' staff_urlpatterns).
staff_urlpatterns = [
    path("trading/game/", views.staff_questions_page, name="game-staff"),
    path("trading/game/void", views.staff_void_view, name="game-staff-void"),
]
