"""The predictor game in a browser: a punter answers the next-goal question on the event page, the
goal settles it, and the points, the rank and the leaderboard move through the websocket (Kafka →
the Spark game query → Redis → websocket → Chromium)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from odds.catalogue.models import Event
from reducers import game
from store import keys
from store.game import GameStore
from tests.browser.axe import axe_check
from tests.conftest import wait_for
from tests.factories import market_create, user_create
from tests.integration.streaming.test_game import Match, game_running, open_question  # noqa: F401  # the fixture
from tests.integration.streaming.test_streams import logged_in

# The session's game query, started once it has run a batch (its fixture lives with the streaming tests).
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("game_running")]


def test_a_punter_answers_on_the_event_page_and_sees_the_goal_move_them_up_the_leaderboard(
    asgi_server,
    producer,
    redis_client,
    django_user_model,
    login,
    page: Page,
):
    market = market_create()
    event_id = market.event_id
    Event.objects.filter(id=event_id).update(status=Event.Status.IN_PLAY)
    match = Match(producer, event_id)
    match("kick_off")
    goal = open_question(redis_client, event_id, game.NEXT_GOAL)
    card = open_question(redis_client, event_id, game.CARD)

    # A rival leads first: a card they called.
    rival = logged_in(django_user_model, "rival")
    body = {"event_id": event_id, "question_id": card["id"], "choice": "yes"}
    assert rival.post("/api/game/answers", body, content_type="application/json").status_code == 202
    board = keys.game_board(f"ev:{event_id}")
    wait_for(lambda: redis_client.zcard(board) == 1, what="the rival's answer counted")
    match("card", minute=3, side="home")
    rival_id = django_user_model.objects.get(username="rival").pk
    wait_for(lambda: redis_client.zscore(board, str(rival_id)) == 6, what="the rival's card settled")

    login(django_user_model.objects.create_user(username="predictor", password="pw-for-tests-only"))
    page.goto(f"{asgi_server}/event/{event_id}/")
    expect(page.locator("#conn-status")).to_have_attribute("data-state", "live")
    section = page.locator("#game")
    leaders = section.locator("[data-game-top] .game-leader-name")
    expect(leaders).to_have_text(["rival"], timeout=30_000)
    question = section.locator(f'[data-question="{goal["id"]}"]')
    expect(question).to_have_attribute("data-status", "open")

    question.locator('[data-choice="away"]').click()
    expect(question.locator(".game-mine")).to_have_text(f"Your answer: {market.event.away}", timeout=30_000)
    expect(section.locator("[data-game-rank]")).to_have_text("#2 of 2")
    expect(leaders).to_have_text(["rival", "predictor"])

    match("score", minute=9, side="away")
    expect(question).to_have_attribute("data-status", "settled", timeout=30_000)
    expect(question.locator(".game-mine")).to_have_text(f"Your answer: {market.event.away} · correct, +10")
    expect(section.locator("[data-game-points]")).to_have_text("10")
    expect(section.locator("[data-game-rank]")).to_have_text("#1 of 2")
    expect(leaders).to_have_text(["predictor", "rival"])
    expect(section.locator("[data-game-top] .game-leader.you .game-leader-points")).to_have_text("10")
    axe_check(page)


def test_a_visitor_sees_the_questions_and_the_leaderboard_and_is_asked_to_log_in(
    asgi_server,
    producer,
    redis_client,
    page: Page,
):
    market = market_create()
    Event.objects.filter(id=market.event_id).update(status=Event.Status.IN_PLAY)
    Match(producer, market.event_id)("kick_off")
    goal = open_question(redis_client, market.event_id, game.NEXT_GOAL)

    page.goto(f"{asgi_server}/event/{market.event_id}/")
    section = page.locator("#game")
    expect(section.get_by_role("link", name="Log in to play")).to_be_visible()
    options = section.locator(f'[data-question="{goal["id"]}"] [data-choice]')
    expect(options).to_have_count(3, timeout=30_000)
    for at in range(3):
        expect(options.nth(at)).to_be_disabled()
    axe_check(page)


def test_the_leaderboard_page_follows_the_match_and_a_trader_voids_a_question_on_the_staff_page(
    asgi_server,
    producer,
    redis_client,
    django_user_model,
    login,
    page: Page,
):
    market = market_create()
    event_id = market.event_id
    Event.objects.filter(id=event_id).update(status=Event.Status.IN_PLAY)
    match = Match(producer, event_id)
    match("kick_off")
    goal = open_question(redis_client, event_id, game.NEXT_GOAL)
    card = open_question(redis_client, event_id, game.CARD)
    client = logged_in(django_user_model, "leader")
    body = {"event_id": event_id, "question_id": goal["id"], "choice": "home"}
    assert client.post("/api/game/answers", body, content_type="application/json").status_code == 202
    board = keys.game_board(f"ev:{event_id}")
    wait_for(lambda: redis_client.zcard(board) == 1, what="the answer counted")

    login(django_user_model.objects.get(username="leader"))
    page.goto(f"{asgi_server}/game/leaderboard/?event={event_id}")
    rows = page.locator("[data-leaderboard] tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_text("1leader0")
    match("score", minute=4, side="home")
    # The page reads the board again every few seconds.
    expect(rows.first).to_have_text("1leader10", timeout=30_000)
    expect(page.locator("[data-leaderboard-me]")).to_have_text("You are #1 with 10 points.")
    axe_check(page)

    login(user_create(balance="0", staff=True))
    page.goto(f"{asgi_server}/trading/game/")
    row = page.locator(f'tr[data-question="{card["id"]}"]')
    expect(row).to_be_visible()
    axe_check(page)
    row.get_by_label(f'Reason for voiding "{card["title"]}"').fill("the feed lost the match")
    row.get_by_role("button", name="Void").click()
    expect(page.locator(".flash")).to_contain_text(f"Question {card['id']} voided")
    wait_for(
        lambda: (q := GameStore(redis_client).question(card["id"], event_id=event_id)) and q["status"] == "void",
        what="the card question voided",
    )
    page.reload()
    expect(page.locator(f'tr[data-question="{card["id"]}"]')).to_have_count(0)
