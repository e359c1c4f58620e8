"""The predictor game's endpoints: an answer (``/api/game/answers``), an event's game and the
leaderboards (public reads), a trader's void (``/trading/api/game/…``). Thin: one service or
selector each (docs/protocol.md, "The predictor game")."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from ninja import Router, Status

from odds.api.http import Session, answers, error_response
from odds.api.schemas import common
from odds.api.schemas import game as s
from odds.api.schemas.common import ApiError
from odds.game.selectors.game import game_leaderboard, game_state
from odds.game.services.game import GameRefused, game_answer, game_question_void

router = Router(auth=Session(), tags=["game"])
public = Router(tags=["game"])
trading = Router(auth=Session(staff=True), tags=["trading"])


def _refused(exc: GameRefused) -> HttpResponse:
    return error_response(ApiError(exc.status, exc.code, exc.message))


@router.post(
    "game/answers",
    summary="Answer an open question of an event's game",
    url_name="game-answers",
    **answers(
        {202: (s.GameAnswerTaken, "Sent to the game; its decision comes on the punter's game channel.")},
        {
            400: (s.GameChoiceRefused, "The body is invalid, or the question does not offer this choice."),
            404: (s.GameNotFound, "No such question in this event's game."),
            409: (s.GameAnswerRefused, "The question has closed or was voided, or the punter answered it."),
            503: (s.GameUnavailable, "Kafka did not take the answer (`not_sent`); try again."),
        },
        access="write",
        body=True,
        examples={"answer": {"event_id": 42, "question_id": 42001, "choice": "home"}},
    ),
)
def game_answers(request: HttpRequest, body: s.GameAnswerIn) -> HttpResponse | Status[s.GameAnswerTaken]:
    user = request.user
    assert isinstance(user.pk, int)  # Session() admits only logged-in users
    try:
        taken = game_answer(
            user_id=user.pk,
            name=user.get_username(),
            event_id=body.event_id,
            question_id=body.question_id,
            choice=body.choice,
        )
    except GameRefused as exc:
        return _refused(exc)
    return Status(
        202,
        s.GameAnswerTaken(answer_id=taken.answer_id, question_id=taken.question_id, choice=taken.choice, status="sent"),
    )


@public.get(
    "game/events/{event_id}",
    summary="An event's game: its questions and its leaderboard's top",
    url_name="game-event",
    **answers(
        {200: (s.GameState, "The game (no questions before the game has any).")},
        {400: (common.QueryRefused, "`event_id` is not an id.")},
        access="public",
    ),
)
def game_event(request: HttpRequest, event_id: common.PathId) -> s.GameState:
    return s.GameState.model_validate(game_state(event_id=event_id))


@public.get(
    "game/leaderboard",
    summary="A leaderboard: an event's (`event`) or a day's (`day`, today by default)",
    url_name="game-leaderboard",
    **answers(
        {200: (s.GameBoard, "The top 50, and the punter's place when logged in.")},
        {400: (common.QueryRefused, "A query parameter is invalid (`field` names it).")},
        access="public",
    ),
)
def game_board(request: HttpRequest, event: common.PathId | None = None, day: s.GameDay | None = None) -> s.GameBoard:
    user_id = request.user.pk if request.user.is_authenticated else None
    board = game_leaderboard(event_id=event, day=day, user_id=user_id)
    me = s.GameMe(rank=board.rank, points=board.points) if user_id is not None else None
    top = [dict(leader) for leader in board.top]
    return s.GameBoard(scope=board.scope, title=board.title, top=top, players=board.players, me=me)


@trading.post(
    "game/questions/{question_id}/void",
    summary="Void an undecided question of a game",
    url_name="trading-api-game-void",
    **answers(
        {202: (s.GameVoidRequested, "Sent to the game; every answer to the question scores nothing.")},
        {
            400: (s.GameVoidRefused, "The body is invalid or the reason is empty."),
            404: (s.GameNotFound, "No such question in this event's game."),
            409: (s.GameDecided, "The question is settled or voided already."),
            503: (s.GameUnavailable, "Kafka did not take the void (`not_sent`); try again."),
        },
        access="staff_write",
        body=True,
        examples={"void": {"event_id": 42, "reason": "the feed missed a goal"}},
    ),
)
def game_void(
    request: HttpRequest, question_id: common.PathId, body: s.GameVoidIn
) -> HttpResponse | Status[s.GameVoidRequested]:
    try:
        game_question_void(event_id=body.event_id, question_id=question_id, reason=body.reason)
    except GameRefused as exc:
        return _refused(exc)
    return Status(202, s.GameVoidRequested(question_id=question_id, status="void requested"))
