"""The predictor game's pages: the leaderboard (anyone), and the staff page of undecided questions
with their void (staff only)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from odds.catalogue.selectors.catalogue import sport_nav
from odds.core.staff import staff_page
from odds.core.text import id_from_text
from odds.game.selectors.game import game_leaderboard, games_live
from odds.game.services.game import GameRefused, game_question_void


def leaderboard_page(request: HttpRequest) -> HttpResponse:
    """Today's leaderboard, or an event's (``?event=<id>``), and the punter's place on it."""
    event_id = id_from_text(text=request.GET.get("event", ""))
    user_id = request.user.pk if request.user.is_authenticated else None
    board = game_leaderboard(event_id=event_id, user_id=user_id)
    context = {"board": board, "event_id": event_id, "games": games_live(limit=12), "nav": sport_nav()}
    return render(request, "odds/game/leaderboard.html", context)


@staff_page
def staff_questions_page(request: HttpRequest) -> HttpResponse:
    return render(request, "odds/game/staff.html", {"games": games_live(), "page": "game"})


@staff_page
@require_POST
def staff_void_view(request: HttpRequest) -> HttpResponse:
    event_id = id_from_text(text=request.POST.get("event_id", ""))
    question_id = id_from_text(text=request.POST.get("question_id", ""))
    if event_id is None or question_id is None:
        messages.error(request, "No such question.")
    else:
        try:
            game_question_void(event_id=event_id, question_id=question_id, reason=request.POST.get("reason", ""))
        except GameRefused as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Question {question_id} voided: its answers score nothing.")
    return redirect(reverse("game-staff"))
