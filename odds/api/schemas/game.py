"""The predictor game routers' bodies (``odds/api/game.py``): answers, the game's state, the
leaderboards and a trader's void."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import Field

from odds.api.schemas.common import BODY_ERRORS, Answer, Body, Id, Model, Text, refusal
from reducers.schemas import GAME_CHOICES, GAME_VOID_REASON_MAX

# Literal types made at run time are strings to the type checker.
if TYPE_CHECKING:
    GameChoice: TypeAlias = str
else:
    GameChoice = Literal[GAME_CHOICES]


class GameAnswerIn(Body):
    """``POST /api/game/answers``: the punter's answer to one open question of an event's game."""

    event_id: Id
    question_id: Id
    choice: Annotated[GameChoice, Field(description="one of the question's `options`")]


class GameAnswerTaken(Answer):
    """The answer went to the game reducer; its decision (accepted, or refused with its reason,
    then settled) comes on the punter's game channel."""

    answer_id: str
    question_id: int
    choice: str
    status: Literal["sent"]


class GameState(Answer):
    """An event's game: every question (docs/protocol.md, *The predictor game*) and its
    leaderboard's top."""

    event_id: int
    questions: list[dict[str, Any]]
    top: list[dict[str, Any]]
    players: int


class GameMe(Model):
    rank: int | None
    points: int | None


class GameBoard(Answer):
    """A leaderboard: its top, how many play, and the punter's place when logged in."""

    scope: str
    title: str
    top: list[dict[str, Any]]
    players: int
    me: GameMe | None


class GameVoidIn(Body):
    """``POST /trading/api/game/questions/<id>/void``: void one undecided question."""

    event_id: Id
    reason: Annotated[Text, Field(min_length=1, max_length=GAME_VOID_REASON_MAX)]


class GameVoidRequested(Answer):
    question_id: int
    status: Literal["void requested"]


GameAnswerRefused = refusal("GameAnswerRefused", "question_closed", "question_void", "already_answered")
GameNotFound = refusal("GameNotFound", "unknown_question")
GameChoiceRefused = refusal("GameChoiceRefused", *BODY_ERRORS, "bad_choice")
GameDecided = refusal("GameDecided", "question_decided")
GameUnavailable = refusal("GameUnavailable", "database_unavailable", "not_sent")
GameVoidRefused = refusal("GameVoidRefused", *BODY_ERRORS, "bad_reason")
GameDay = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a day, YYYY-MM-DD (UTC)")]
