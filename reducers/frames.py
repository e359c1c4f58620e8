"""Every websocket frame, one typed definition each (docs/protocol.md, version 1).

Server → client frames are built by the reducers (market states, status messages, match
messages, channel frames) and by the edge (``odds/core/events.py``); client → server messages are read
by the edge (``odds/streaming/consumers.py``). Each is a ``TypedDict`` here: builders are type-checked
against it, frames are encoded with orjson (a frame is a plain dict, so the reducers' hot paths
pay nothing for it), and decoded and validated with pydantic (``SERVER_FRAME``, ``CLIENT_MESSAGE``,
``head``). The browser's types are generated from these (``frontend/src/contract/frames.ts``,
``make contract``); ``tests/unit/test_frames.py`` checks that both sides know the same ``type``s
and that every frame round-trips through its definition.

To add a field to a frame, add it here: mypy then names every builder that must set it, and
``make contract`` gives it to the browser's type (the TypeScript check names every reader).

Prices and money are decimal strings, never floats; timestamps are epoch milliseconds.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Annotated, Any, Literal, NotRequired

import orjson
from annotated_types import Ge, Le, Len
from pydantic import BeforeValidator, ConfigDict, Discriminator, Strict, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict

PROTOCOL_VERSION = 1
# The largest integer the JSON decoders read as one (orjson reads larger ones as floats).
MAX_WIRE_INT = 2**64 - 1

# --- server → client ---


class Timestamps(TypedDict):
    """When a state happened at the source, was produced, reached Kafka and was applied."""

    event: int
    produce: int
    kafka: int
    reducer: int


class SelectionState(TypedDict):
    id: int
    price: str
    status: str


class MarketFrame(TypedDict):
    """``market``: one market's state, as the price reducer stores and publishes it. ``merged``
    and ``ts`` are absent from a trader's decision kept for bets (``sb:trader:<market>``)."""

    type: Literal["market"]
    v: int
    market_id: int
    seq: int
    status: str
    tradable: bool
    selections: list[SelectionState]
    merged: NotRequired[int]
    ts: NotRequired[Timestamps]


class MarketStatusFrame(TypedDict):
    """``market.status``: a market's status changed; sent just before its state, never conflated."""

    type: Literal["market.status"]
    v: int
    market_id: int
    seq: int
    status: str
    tradable: bool
    ts: Timestamps


class ClockState(TypedDict):
    """A match clock (``reducers.schemas.MatchClock``)."""

    running: bool
    elapsed_s: int
    at: int
    direction: str
    limit_s: int | None
    rate: int


class IncidentState(TypedDict):
    """An incident of the match (``reducers.schemas.Incident``)."""

    kind: str
    side: str
    period: int
    at: int


class SuspensionState(TypedDict):
    """Why an event's markets are suspended (``reducers.schemas.MatchSuspension``)."""

    reason: str
    since: int


class MatchMessage(TypedDict):
    """``match``: an event's match state, in a channel frame's ``matches``."""

    type: Literal["match"]
    v: int
    event_id: int
    seq: int
    sport: str
    status: str
    period: int
    score: dict[str, Any]
    clock: ClockState | None
    incidents: list[IncidentState]
    ts: Timestamps
    suspension: NotRequired[SuspensionState | None]


class ErrorBody(TypedDict):
    code: str
    message: str


class SlipLegSummary(TypedDict):
    selection_id: int
    market_id: int
    price: str | None
    suspended: bool


class SlipSummary(TypedDict):
    legs: list[SlipLegSummary]
    placeable: bool
    combined_odds: NotRequired[str]
    potential_return: NotRequired[str]
    error: NotRequired[ErrorBody]


class BetCashOut(TypedDict):
    bet_id: int
    cash_out: str | None
    error: NotRequired[ErrorBody]


class ViewFrameBody(TypedDict):
    """A channel's image or delta as the reducers build it; the publishing script stamps ``seq``
    (the channel's own sequence) in front (``store/channels.py``)."""

    type: Literal["view.image", "view.delta"]
    v: int
    channel: str
    markets: list[MarketFrame]
    resync: NotRequired[bool]
    since: NotRequired[bool]
    matches: NotRequired[list[MatchMessage]]
    slip: NotRequired[SlipSummary]
    bets: NotRequired[list[BetCashOut]]
    error: NotRequired[ErrorBody]


class ViewFrame(ViewFrameBody):
    """``view.image`` (every market of the channel) or ``view.delta`` (the markets that changed)."""

    seq: int


class MatchFrameBody(TypedDict):
    type: Literal["view.match"]
    v: int
    channel: str
    matches: list[MatchMessage]


class MatchFrame(MatchFrameBody):
    """``view.match``: new match states of the channel's events."""

    seq: int


class QueryFrameBody(TypedDict):
    type: Literal["view.query"]
    v: int
    channel: str
    image: NotRequired[bool]
    markets: NotRequired[list[int]]
    added: NotRequired[list[int]]
    removed: NotRequired[list[int]]
    changed: NotRequired[list[int]]


class QueryFrame(QueryFrameBody):
    """``view.query``: a shared query channel's markets: all of them (``image``), or those that
    joined, left, or changed in what an event list shows."""

    seq: int


class HelloFrame(TypedDict):
    type: Literal["hello"]
    v: int
    user: str | None


class ImageFrame(TypedDict):
    type: Literal["image"]
    v: int
    markets: list[MarketFrame]


class MatchesFrame(TypedDict):
    """The stored match states of the events a socket started following (``watch`` with
    ``events``); each later state comes as its own ``match`` message."""

    type: Literal["matches"]
    v: int
    items: list[MatchMessage]


class MarketsFrame(TypedDict):
    """Several market frames in one websocket frame (clients that asked for ``batch``)."""

    type: Literal["markets"]
    items: list[MarketFrame]


class ConflatedFrame(TypedDict):
    type: Literal["conflated"]
    merged: int


class PongFrame(TypedDict):
    type: Literal["pong"]
    ts: int


class HeartbeatFrame(TypedDict):
    type: Literal["heartbeat"]
    ts: int


class ErrorFrame(TypedDict):
    type: Literal["error"]
    code: str
    message: str


class AttachedFrame(TypedDict):
    """A channel is followed (``query``: the query of a shared channel followed by its query)."""

    type: Literal["attached"]
    channel: str
    query: NotRequired[dict[str, Any]]


class ResumedFrame(TypedDict):
    type: Literal["resumed"]
    channel: str
    after: int
    count: int
    resync: bool


class EndedFrame(TypedDict):
    """A subscriber channel ended; published by the reducers as they remove it."""

    type: Literal["ended"]
    channel: str
    reason: str


class BetDecision(TypedDict):
    id: int
    status: Literal["accepted", "rejected"]
    reject: ErrorBody | None


class BetDecidedFrame(TypedDict):
    """A bet held by the in-play delay was decided (the punter's own news)."""

    type: Literal["bet.decided"]
    bet: BetDecision


class BetOffer(TypedDict):
    """A trader's counter-offer: ``stake``, the single's new ``price`` (null: the prices taken)
    and what it returns, decimal strings in the wallet's currency; ``until`` when it runs out
    (epoch ms, the server's clock) and ``seconds`` how long that was when it was sent (a client
    counts down from when the frame arrived)."""

    id: int
    stake: str
    price: str | None
    potential_return: str
    until: int
    seconds: int


class BetOfferedFrame(TypedDict):
    """A trader offers the punter another stake or price on their referred bet (the punter's own
    news; docs/referral.md)."""

    type: Literal["bet.offered"]
    bet: BetOffer


class SettledBet(TypedDict):
    id: int
    status: Literal["won", "lost", "void", "cashed_out"]
    title: str
    stake: str
    payout: str


class Wallet(TypedDict):
    currency: str
    balance: str


class BetSettledFrame(TypedDict):
    """A bet of the punter closed, with the balance it left (the punter's own news)."""

    type: Literal["bet.settled"]
    v: int
    bet: SettledBet
    wallet: Wallet


class DecidedLeg(TypedDict):
    selection_id: int
    result: Literal["won", "lost", "void"]


class LegsDecidedBet(TypedDict):
    id: int
    legs: list[DecidedLeg]


class BetLegsFrame(TypedDict):
    """Legs of a bet of the punter were decided while the bet stays open (an accumulator with a
    leg won or void): the punter's own news, so a bets view counts those legs as decided."""

    type: Literal["bet.legs"]
    v: int
    bet: LegsDecidedBet


# Why a punter's sessions end (their sockets are closed and their channels ended).
SessionEndReason = Literal["logged_out", "password_changed", "deactivated", "self_excluded"]


class SessionEndedFrame(TypedDict):
    """The last frame of a socket whose session ended (logout, a password change, the account
    deactivated or self-excluded); the server then closes it (``CLOSE_SESSION_ENDED``)."""

    type: Literal["session.ended"]
    v: int
    reason: SessionEndReason


class SessionCloseMessage(TypedDict):
    """On the punter's pub-sub channel only, never sent to a client: every socket of the punter
    whose session is ``session`` (a digest of its key; ``None``: every session) sends
    ``session.ended`` with ``reason`` and closes."""

    type: Literal["session.close"]
    v: int
    reason: SessionEndReason
    session: str | None


# --- the predictor game (docs/protocol.md, "The predictor game") ---


# A question's life: open, closed (no more answers), then settled or void.
QuestionStatus = Literal["open", "closed", "settled", "void"]


class GameQuestion(TypedDict):
    """A question of an event's game (``reducers.game.question_frame``)."""

    id: int
    event_id: int
    kind: str
    title: str
    options: list[str]
    points: dict[str, int]
    status: QuestionStatus
    day: str
    opened_at: int
    until_minute: int | None
    close_minute: int | None
    closed_at: int | None
    outcome: str | None
    void_reason: str | None


class GameLeader(TypedDict):
    """One line of a leaderboard's top."""

    rank: int
    name: str
    points: int


class GameAnswerState(TypedDict):
    event_id: int
    choice: str
    result: str
    points: int


class GamePunter(TypedDict):
    """A punter's game state (``reducers.game.state_doc``): points per day and per event, the
    streak of correct answers, the answers by question id (their results once decided)."""

    version: int
    streak: int
    best_streak: int
    answered: int
    correct: int
    days: dict[str, int]
    matches: dict[str, int]
    answers: dict[str, GameAnswerState]


class GameNews(TypedDict):
    """What happened to one of the punter's answers: ``accepted``, ``refused`` (``reason``) or
    ``settled`` (``result``, ``points``)."""

    kind: Literal["accepted", "refused", "settled"]
    question_id: int
    event_id: int
    choice: str
    answer_id: str
    result: NotRequired[str]
    points: NotRequired[int]
    reason: NotRequired[str]


class GameRank(TypedDict):
    """The punter's place on the event's leaderboard and on the day's (1 is first; ``None``
    before the punter is on it), out of how many players."""

    match: int | None
    day: int | None
    players: int
    day_players: int


class GameStateFrame(TypedDict):
    """``game.state``: an event's game as a page starts following it (``watch`` with ``games``):
    every question and the leaderboard's top. ``batch`` orders it with the game's later frames."""

    type: Literal["game.state"]
    v: int
    event_id: int
    questions: list[GameQuestion]
    top: list[GameLeader]
    players: int
    batch: int


class GameQuestionsFrame(TypedDict):
    """``game.questions``: questions of the event opened, closed, settled or voided."""

    type: Literal["game.questions"]
    v: int
    event_id: int
    questions: list[GameQuestion]
    batch: int


class GameTopFrame(TypedDict):
    """``game.top``: the event's leaderboard's top moved."""

    type: Literal["game.top"]
    v: int
    event_id: int
    top: list[GameLeader]
    players: int
    batch: int


class GameViewBody(TypedDict):
    """A game channel's image or delta as the reducers build it (the publishing script stamps
    ``seq``). An image carries the questions, the top, the punter's state and ranks; a delta what
    changed of the punter's: their state (``me``), what happened to their answers (``news``),
    their ranks."""

    type: Literal["game.image", "game.delta"]
    v: int
    channel: str
    event_id: int
    me: NotRequired[GamePunter | None]
    news: NotRequired[list[GameNews]]
    rank: NotRequired[GameRank]
    questions: NotRequired[list[GameQuestion]]
    top: NotRequired[list[GameLeader]]
    resync: NotRequired[bool]


class GameViewFrame(GameViewBody):
    """``game.image`` / ``game.delta``: a punter's game channel."""

    seq: int


# --- the trading desk's staff channels (reducers/liability.py builds them; staff sockets only) ---


class DeskBetLeg(TypedDict):
    """One leg of a ticker bet, named from the markets table (empty names for a market it does not know)."""

    market_id: int
    selection_id: int
    event_id: int
    price: str
    sport: str
    event: str
    market: str
    selection: str
    in_play: bool


class DeskBetFrame(TypedDict):
    """``desk.bet``: one bet event the liability reducer counted (the ticker). ``id`` is the bet
    event's id (unique per bet and change); ``kind`` what happened to the bet: ``placed``,
    ``voided``, ``cashed_out`` or ``settled``, or ``pending`` (held by the in-play delay until
    ``until``, epoch ms) or ``rejected`` (refused, ``reason`` in the punter's words), which change
    no book; amounts are decimal strings, ``stake`` and
    ``potential_return`` in the bet's ``currency`` (its wallet's), ``book_stake`` and
    ``book_potential_return`` in the book's currency at the operator's rates when it was counted;
    ``ts`` when the bet event happened and ``reducer_ts`` when the reducer counted it (epoch ms)."""

    type: Literal["desk.bet"]
    v: int
    id: str
    bet_id: int
    kind: str
    user_id: int
    currency: str
    stake: str
    potential_return: str
    book_stake: str
    book_potential_return: str
    legs: list[DeskBetLeg]
    reason: str
    until: int | None
    ts: int
    reducer_ts: int


class DeskOutcome(TypedDict):
    """The book's profit (positive) or loss (negative) in pence if this selection wins."""

    selection_id: int
    name: str
    pl: int


class DeskMarketBook(TypedDict):
    """One market's book in integer pence of the book's currency, every wallet's amounts converted
    at the operator's current rates: ``staked`` by the open bets with a leg in it (``bets``),
    the P/L on each outcome, the worst of them (``worst``, on ``worst_selection``; null when no
    selection carries a return) and its event's worst case (``event_worst``)."""

    market_id: int
    event_id: int
    sport: str
    event: str
    market: str
    in_play: bool
    staked: int
    bets: int
    outcomes: list[DeskOutcome]
    worst: int
    worst_selection: int | None
    event_worst: int


class DeskLiabilityFrame(TypedDict):
    """``desk.liability``: the markets whose books one batch of bet events moved (or, after the
    operator changed a rate, every market with open bets); a market with no open bet left has
    ``bets`` 0 and leaves the risk view. ``currency`` is the book's, which every figure is in."""

    type: Literal["desk.liability"]
    v: int
    currency: str
    markets: list[DeskMarketBook]
    ts: int


class DeskMoversFrame(TypedDict):
    """``desk.movers``: the event-time windows (starts, epoch ms) whose price movers one batch of
    the movers query ranked again; the traders' movers page reads them afresh."""

    type: Literal["desk.movers"]
    v: int
    windows: list[int]
    ts: int


class DeskFollowedFrame(TypedDict):
    """``desk.followed``: the staff socket follows the desk's channels from now on."""

    type: Literal["desk.followed"]
    v: int
    channels: list[str]


ServerFrame = Annotated[
    SessionEndedFrame
    | HelloFrame
    | ImageFrame
    | MarketFrame
    | MarketsFrame
    | MarketStatusFrame
    | ConflatedFrame
    | PongFrame
    | HeartbeatFrame
    | ErrorFrame
    | AttachedFrame
    | ResumedFrame
    | EndedFrame
    | BetDecidedFrame
    | BetOfferedFrame
    | BetSettledFrame
    | BetLegsFrame
    | ViewFrame
    | MatchFrame
    | QueryFrame
    | MatchMessage
    | MatchesFrame
    | GameStateFrame
    | GameQuestionsFrame
    | GameTopFrame
    | GameViewFrame
    | DeskBetFrame
    | DeskLiabilityFrame
    | DeskMoversFrame
    | DeskFollowedFrame,
    Discriminator("type"),
]
SERVER_FRAME: TypeAdapter[ServerFrame] = TypeAdapter(ServerFrame)


# --- client → server ---

WireId = Annotated[int, Strict(), Ge(1), Le(MAX_WIRE_INT)]

# The longest market status a ``since`` may name (the statuses are short words).
MAX_SINCE_STATUS = 16


def held_states(raw: Any) -> dict[int, tuple[int, str]] | None:
    """A ``since`` (of a websocket ``watch`` or a channel's ``begin``): market id → (sequence,
    status) the client already holds (from a view snapshot or its own earlier frames), as
    ``{"42": [17, "open"]}``; ``{}`` when absent, ``None`` when malformed."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        return None
    held: dict[int, tuple[int, str]] = {}
    for key, value in raw.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 18):
            return None
        if not (isinstance(value, list) and len(value) == 2):
            return None
        seq, status = value
        if not (isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq < 2**63):
            return None
        if not (isinstance(status, str) and 0 < len(status) <= MAX_SINCE_STATUS):
            return None
        held[int(key)] = (seq, status)
    return held


def held_to_json(held: dict[int, tuple[int, str]]) -> dict[str, list[Any]]:
    """The wire form of a ``since``: the inverse of ``held_states``."""
    return {str(market_id): [seq, status] for market_id, (seq, status) in sorted(held.items())}


def _held(raw: Any) -> dict[int, tuple[int, str]]:
    held = held_states(raw)
    if held is None:
        raise ValueError("since must map market ids to [seq, status]")
    return held


@with_config(ConfigDict(strict=True))
class WatchMessage(TypedDict):
    """Start streaming markets (an ``image``, then ``market`` frames); ``batch``: one tick's
    frames together; ``since``: market id → [seq, status] the client holds already; ``events``:
    events whose match states to follow (a ``matches`` frame, then ``match`` messages);
    ``games``: events whose predictor games to follow (a ``game.state`` frame each, then
    ``game.questions`` and ``game.top``)."""

    type: Literal["watch"]
    markets: list[WireId]
    batch: NotRequired[Annotated[bool, BeforeValidator(lambda raw: raw is True)]]
    since: NotRequired[Annotated[dict[int, tuple[int, str]], BeforeValidator(_held)]]
    events: NotRequired[list[WireId]]
    games: NotRequired[list[WireId]]


@with_config(ConfigDict(strict=True))
class UnwatchMessage(TypedDict):
    type: Literal["unwatch"]
    markets: list[WireId]
    events: NotRequired[list[WireId]]
    games: NotRequired[list[WireId]]


@with_config(ConfigDict(strict=True))
class AttachMessage(TypedDict):
    """Follow a subscriber channel (resume after ``last_seq`` when given)."""

    type: Literal["attach"]
    channel: Annotated[str, Len(16, 64)]
    last_seq: NotRequired[Annotated[int, Ge(0), Le(MAX_WIRE_INT)] | None]


@with_config(ConfigDict(strict=True))
class QueryMessage(TypedDict):
    """Follow a query's shared channel (``view.query`` frames: which markets it holds), created
    for the query if there is none; resume after ``last_seq`` when given."""

    type: Literal["query"]
    query: dict[str, Any]
    last_seq: NotRequired[Annotated[int, Ge(0), Le(MAX_WIRE_INT)] | None]


class PingMessage(TypedDict):
    type: Literal["ping"]


class DeskMessage(TypedDict):
    """Follow the trading desk's staff channels (``desk.bet`` and ``desk.liability`` frames);
    refused with ``staff_only`` on a socket whose user is not staff, and with
    ``second_factor_required`` on a staff session that has not used its second factor."""

    type: Literal["desk"]


ClientMessage = Annotated[
    WatchMessage | UnwatchMessage | AttachMessage | QueryMessage | PingMessage | DeskMessage, Discriminator("type")
]
CLIENT_MESSAGE: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


# --- the envelope every server frame shares, for routing without decoding the rest ---


class FrameHead(TypedDict):
    """What the edge routes a frame by: its ``type``, and a channel frame's ``seq``."""

    type: str
    seq: NotRequired[int]


_HEAD: TypeAdapter[FrameHead] = TypeAdapter(FrameHead)


@functools.lru_cache(maxsize=64)
def head(frame: str | bytes) -> FrameHead:
    """The envelope of an encoded server frame. The hub hands one string to every websocket of
    the process that wants it, so each frame is decoded once, however many sockets read its head
    (a cached ``str`` hashes in constant time). Raises ``pydantic.ValidationError`` for a frame
    that is not a JSON object with a string ``type``."""
    return _HEAD.validate_json(frame)


def kind(frame: str | bytes) -> str | None:
    """The ``type`` of an encoded server frame; ``None`` for text that is not one (relayed as
    it is, never routed as a frame of some type)."""
    try:
        return head(frame)["type"]
    except ValidationError:
        return None


def stamp(body: bytes, *, seq: int) -> str:
    """A channel frame's body with its sequence in front, as the publishing script stamps it."""
    return f'{{"seq":{seq},' + body[1:].decode()


def frame_seq(frame: str | bytes) -> int:
    """The channel sequence of a stamped channel frame."""
    seq = head(frame).get("seq")
    if seq is None:
        raise ValueError("not a channel frame: no seq")
    return seq


def read_market(raw: str | bytes) -> MarketFrame:
    """A market state the reducers stored (``sb:mkt:<market>``): read as it was written, not
    validated again (the price reducer built it from a validated price record)."""
    state: MarketFrame = orjson.loads(raw)
    return state


def read_match(raw: str | bytes) -> MatchMessage:
    """A match message the reducers stored (``sb:match:<event>``), read as it was written."""
    message: MatchMessage = orjson.loads(raw)
    return message


# --- encoding ---


def encode(
    frame: ServerFrame
    | ViewFrameBody
    | MatchFrameBody
    | QueryFrameBody
    | MatchMessage
    | GameViewBody
    | GameQuestionsFrame
    | GameTopFrame
    | DeskBetFrame
    | DeskLiabilityFrame,
) -> bytes:
    """A frame (or a channel frame's body, or a match message stored for images) as JSON."""
    return orjson.dumps(frame)


def encode_text(frame: ServerFrame) -> str:
    return orjson.dumps(frame).decode()


def image_text(*, markets: Iterable[str | bytes]) -> str:
    """An ``image`` of market states already encoded (stored by the reducers), relayed as they are."""
    return orjson.dumps(
        {"type": "image", "v": PROTOCOL_VERSION, "markets": [orjson.Fragment(m) for m in markets]}
    ).decode()


def matches_text(*, items: Iterable[str | bytes]) -> str:
    """A ``matches`` frame of match states already encoded (stored by the reducers), relayed as they are."""
    return orjson.dumps(
        {"type": "matches", "v": PROTOCOL_VERSION, "items": [orjson.Fragment(m) for m in items]}
    ).decode()


def markets_text(*, items: Iterable[str | bytes]) -> str:
    """A ``markets`` batch of market frames already encoded, relayed as they are."""
    return orjson.dumps({"type": "markets", "items": [orjson.Fragment(m) for m in items]}).decode()
