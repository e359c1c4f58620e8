"""The predictor game in Redis: questions, punters' states, leaderboards, the game channels.

The game reducer keeps the truth in Spark's state store; what it changed each batch is written
here (``write_punters`` from the game query's workers, ``GameStore.publish_batch`` from its
driver), for the pages, the API and the images of game channels:

* each event's questions (``keys.game_questions``), published on the event's public game channel
  (``keys.game_channel``) as ``game.questions`` frames;
* each punter's state (``keys.game_punter``), written whole in the game reducer's own encoding
  (``reducers.game.State``: a goal writes every punter of its match, and the pages read a few;
  ``stored_punter`` reads one as the frames carry it), so a batch replayed after a crash writes
  the same state again;
* leaderboards per event and per day (``keys.game_board``), sorted sets of points written as
  they are (``ZADD`` of the new total, never an increment: a replay changes nothing); an event's
  top is published on its public channel (``game.top``) only when it moved;
* the punters' game channels: the ones of a changed punter get a ``game.delta`` with the
  punter's state and news; every game channel of an event whose leaderboard moved gets its
  punter's ranks, only when they moved (``keys.game_ranks``).

An event's questions, leaderboard, top and ranks, and a day's leaderboard, expire
``reducers.game.RESULTS_KEEP_S`` after the last batch that changed them, and the index of games
forgets a game as old: a finished match's game leaves Redis by itself. Punters' states and names
stay (one of each a punter).

Which channels show which event's game is kept here too, by the command reducer
(``watch``/``unwatch``, from ``store.channels``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, cast

import orjson
import redis

from reducers import frames
from reducers.frames import GameLeader, GameNews, GamePunter, GameQuestion, GameRank
from reducers.game import RESULTS_KEEP_S, News, state_doc
from reducers.views import game_questions_frame, game_top_frame, game_view_frame
from store import keys, packed
from store.markets import script_calls

# The leaderboard's top that frames and images carry.
TOP = 20
# Members per ZADD or keys per MSET: a command holds the server for at most a few milliseconds.
CHUNK = 5000

# One event's leaderboard after a batch: its top (names from the names hash), compared with the
# one stored and stored when it moved; then every game channel of the event: its punter's ranks on
# the event's board and the day's, stored and returned when they moved; the event's keys and the
# day's board then expire that many seconds on (``reducers.game.RESULTS_KEEP_S``).
# KEYS: event board, day board, the event's channels hash, its ranks hash, its stored top hash,
# the names hash, the event's questions hash. ARGV: the top's length, the batch, the keys' life (s).
# Returns {top moved (0/1), top JSON, players, day players, {channel, punter, ranks}...}.
RANKS = """
local players = redis.call('ZCARD', KEYS[1])
local day_players = redis.call('ZCARD', KEYS[2])
local rows = redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
local parts = {}
for i = 1, #rows, 2 do
  local name = redis.call('HGET', KEYS[6], rows[i]) or ('Player ' .. rows[i])
  parts[#parts + 1] = '{"rank":' .. ((i + 1) / 2) .. ',"name":' .. cjson.encode(name)
    .. ',"points":' .. rows[i + 1] .. '}'
end
local top = '[' .. table.concat(parts, ',') .. ']'
local stored = redis.call('HMGET', KEYS[5], 'top', 'players')
local moved = 0
if stored[1] ~= top or tonumber(stored[2]) ~= players then
  moved = 1
  redis.call('HSET', KEYS[5], 'top', top, 'players', players, 'batch', ARGV[2])
end
local changed = {}
local channels = redis.call('HGETALL', KEYS[3])
for i = 1, #channels, 2 do
  local channel, punter = channels[i], channels[i + 1]
  local match = redis.call('ZREVRANK', KEYS[1], punter)
  local day = redis.call('ZREVRANK', KEYS[2], punter)
  local ranks = (match and (match + 1) or 0) .. ':' .. (day and (day + 1) or 0)
  if redis.call('HGET', KEYS[4], channel) ~= ranks then
    redis.call('HSET', KEYS[4], channel, ranks)
    changed[#changed + 1] = channel
    changed[#changed + 1] = punter
    changed[#changed + 1] = ranks
  end
end
for _, at in ipairs({1, 2, 4, 5, 7}) do
  redis.call('EXPIRE', KEYS[at], ARGV[3])
end
return {moved, top, players, day_players, changed}
"""


class PunterOutput(NamedTuple):
    """One punter changed by a batch, as the game reducer hands it over: the state (encoded,
    written as it is; ``None`` when only news changed, an answer refused), what to tell the punter
    and, per event, the event's day and the punter's points on the event's board and the day's."""

    user_id: int
    doc: bytes | None
    news: Sequence[News]
    boards: Mapping[int, tuple[str, int, int]]


@dataclass(frozen=True)
class PunterKeys:
    """The keys a batch's punters are written under, spelled once where the namespace is known
    (the driver) and handed to the game query's workers, which write their buckets' punters."""

    punter_prefix: str
    board_prefix: str
    channels: str

    @classmethod
    def current(cls) -> PunterKeys:
        return cls(keys.game_punter_prefix(), keys.game_board_prefix(), keys.game_punter_channels())


@dataclass
class Written:
    """What writing a batch's punters left for the driver: the punters with a game channel (with
    their ``[channel id, event id]`` list, encoded), the day of every event whose leaderboard
    moved, and how many punters were written."""

    watched: list[tuple[PunterOutput, bytes]] = field(default_factory=list)
    days: dict[int, str] = field(default_factory=dict)
    punters: int = 0


def write_punters(client: redis.Redis, punters: Sequence[PunterOutput], *, names: PunterKeys) -> Written:
    """Write the punters' states and their points on every leaderboard they moved on, and read
    which of them have a game channel (one round trip). Every write is the new value, never an
    increment: written twice, it leaves what it left once. The game query's workers call it for
    their buckets' punters (a goal writes every punter of its match, and the workers share the
    work), the driver then publishes (``GameStore.publish_batch``)."""
    written = Written(punters=len(punters))
    if not punters:
        return written
    # Each board's members and points, found by event and by day (a goal moves every punter of
    # its match on the same two boards). Keys and members are bytes, packed as they are
    # (``store.packed``: redis-py's checks of each argument were half the time of the writes).
    event_boards: dict[int, list[tuple[bytes, int]]] = {}
    day_boards: dict[str, list[tuple[bytes, int]]] = {}
    states: list[tuple[bytes, bytes]] = []
    punter_prefix = names.punter_prefix.encode()
    users = [b"%d" % p.user_id for p in punters]
    for member, punter in zip(users, punters, strict=True):
        if punter.doc is not None:
            states.append((punter_prefix + member, punter.doc))
        for event_id, (day, match_points, day_points) in punter.boards.items():
            board = event_boards.get(event_id)
            if board is None:
                written.days[event_id] = day
                board = event_boards[event_id] = []
            board.append((member, match_points))
            on_day = day_boards.get(day)
            if on_day is None:
                on_day = day_boards[day] = []
            on_day.append((member, day_points))
    boards = {f"{names.board_prefix}{board_scope(event_id=e)}": scores for e, scores in event_boards.items()}
    boards.update({f"{names.board_prefix}{board_scope(day=d)}": scores for d, scores in day_boards.items()})
    commands = state_writes(states)
    for key, scores in boards.items():
        commands.extend(packed.zadd(key.encode(), chunk) for chunk in _chunks(scores))
    lookups = len(commands)
    channels = names.channels.encode()
    commands.extend(packed.hmget(channels, chunk) for chunk in _chunks(users))
    replies = packed.execute(client, commands)
    found = [raw for reply in replies[lookups:] for raw in reply]
    written.watched = [(punter, raw) for punter, raw in zip(punters, found, strict=True) if raw is not None]
    return written


@dataclass(frozen=True)
class Applied:
    """What a batch's write did: punters and questions written, game channel frames sent, the
    events whose top moved."""

    punters: int = 0
    questions: int = 0
    frames: int = 0
    tops: tuple[int, ...] = ()


@dataclass
class Leaderboard:
    top: list[GameLeader]
    players: int
    rank: int | None = None
    points: int | None = None


@dataclass
class _Delta:
    me: GamePunter | None = None
    news: list[GameNews] = field(default_factory=list)
    rank: GameRank | None = None


def stored_punter(raw: bytes) -> GamePunter:
    """A punter's state as stored (``keys.game_punter``), as the frames carry it. A state stored
    as the document itself (by a version of the reducer before the encoding was stored) reads as
    it is, until the punter's next change writes it again."""
    value = orjson.loads(raw)
    if isinstance(value, dict):
        return cast(GamePunter, value)
    return state_doc(value)


def board_scope(*, event_id: int | None = None, day: str | None = None) -> str:
    """The scope of an event's (``ev:<id>``) or a day's (``day:<YYYY-MM-DD>``) leaderboard."""
    return f"ev:{event_id}" if event_id is not None else f"day:{day}"


def _ranks(raw: str, players: int, day_players: int) -> GameRank:
    match, day = (int(x) for x in raw.split(":"))
    return {"match": match or None, "day": day or None, "players": players, "day_players": day_players}


def state_writes(states: Sequence[tuple[bytes, bytes]]) -> list[bytes]:
    """The packed writes (``MSET``, ``CHUNK`` pairs each) of punters' states: their keys
    (``keys.game_punter``) and their documents, as bytes."""
    return [packed.mset(chunk) for chunk in _chunks(states)]


def _chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    return (items[at : at + size] for at in range(0, len(items), size))


class GameStore:
    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self._ranks = client.register_script(RANKS)

    # --- the game reducer's batches ---

    def publish_batch(
        self,
        *,
        questions: Sequence[GameQuestion],
        written: Written,
        batch: int,
        now_ms: int,
        publish: Callable[[Sequence[tuple[str, bytes]]], list[int]],
    ) -> Applied:
        """The rest of a batch once its punters are written: the questions (on each event's
        public channel), then each event's top when it moved and the game channels' deltas
        (``publish``: the channels' publishing, ``ChannelStore.publish_many``). Every write is
        the new value, never an increment, so a batch written twice leaves what it left once."""
        days: dict[int, str] = {}
        by_event: dict[int, list[GameQuestion]] = {}
        for question in questions:
            by_event.setdefault(question["event_id"], []).append(question)
            days[question["event_id"]] = question["day"]
        for event_id, day in written.days.items():
            days.setdefault(event_id, day)
        if by_event:
            pipe = self.r.pipeline(transaction=False)
            for event_id, changed in by_event.items():
                pipe.hset(
                    keys.game_questions(event_id),
                    mapping={str(q["id"]): orjson.dumps(q) for q in changed},
                )
                pipe.zadd(keys.game_events_index(), {str(event_id): now_ms})
                pipe.publish(
                    keys.game_channel(event_id),
                    game_questions_frame(event_id=event_id, questions=changed, batch=batch),
                )
            # Games no batch changed for RESULTS_KEEP_S leave the index (their keys have expired).
            pipe.zremrangebyscore(keys.game_events_index(), "-inf", f"({now_ms - RESULTS_KEEP_S * 1000}")
            pipe.execute()
        deltas = self._punter_deltas(written.watched)
        tops = self._leaderboards(days, batch=batch, deltas=deltas)
        out = [
            (channel_id, game_view_frame(kind="delta", channel_id=channel_id, event_id=event_id, **vars(delta)))
            for (channel_id, event_id), delta in deltas.items()
            if delta.news or delta.rank is not None
        ]
        sent = sum(1 for seq in publish(out) if seq) if out else 0
        return Applied(punters=written.punters, questions=len(questions), frames=sent, tops=tuple(tops))

    def _punter_deltas(self, watched: Sequence[tuple[PunterOutput, bytes]]) -> dict[tuple[str, int], _Delta]:
        """The changed punters' game channels, each with the punter's state and the news of its
        event."""
        deltas: dict[tuple[str, int], _Delta] = {}
        for punter, raw in watched:
            doc = stored_punter(punter.doc) if punter.doc is not None else None
            for channel_id, event_id in orjson.loads(raw):
                mine = [n.to_json() for n in punter.news if n.event_id == event_id]
                if mine:
                    deltas[(channel_id, event_id)] = _Delta(me=doc, news=mine)
        return deltas

    def _leaderboards(self, days: Mapping[int, str], *, batch: int, deltas: dict[tuple[str, int], _Delta]) -> list[int]:
        """Each event's leaderboard after the batch: its top published when it moved, and the
        ranks that moved added to the deltas of their channels; its keys and its day's board set
        to expire ``RESULTS_KEEP_S`` on. Returns the events whose top moved."""
        events = sorted(days)
        calls = [
            (
                [
                    keys.game_board(board_scope(event_id=event_id)),
                    keys.game_board(board_scope(day=days[event_id])),
                    keys.game_event_channels(event_id),
                    keys.game_ranks(event_id),
                    keys.game_top(event_id),
                    keys.game_names(),
                    keys.game_questions(event_id),
                ],
                [TOP, batch, RESULTS_KEEP_S],
            )
            for event_id in events
        ]
        replies = script_calls(self.r, self._ranks, calls)
        moved = []
        pipe = self.r.pipeline(transaction=False)
        for event_id, (top_moved, top, players, day_players, changed) in zip(events, replies, strict=True):
            if int(top_moved):
                moved.append(event_id)
                leaders: list[GameLeader] = orjson.loads(top)
                pipe.publish(
                    keys.game_channel(event_id),
                    game_top_frame(event_id=event_id, top=leaders, players=int(players), batch=batch),
                )
            for at in range(0, len(changed), 3):
                channel_id = changed[at].decode()
                delta = deltas.setdefault((channel_id, event_id), _Delta())
                delta.rank = _ranks(changed[at + 2].decode(), int(players), int(day_players))
        if moved:
            pipe.execute()
        return moved

    # --- the game channels (the command reducer's) ---

    def watch(self, *, channel_id: str, event_id: int, user_id: int) -> None:
        """The channel shows this event's game, and no other."""
        self.unwatch(channel_id=channel_id, user_id=user_id)
        held = self._channels_of(user_id)
        held.append([channel_id, event_id])
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(keys.game_punter_channels(), str(user_id), orjson.dumps(held))
        pipe.hset(keys.game_event_channels(event_id), channel_id, str(user_id))
        pipe.execute()

    def unwatch(self, *, channel_id: str, user_id: int) -> None:
        """The channel shows no game any more (it ended, or shows another)."""
        held = self._channels_of(user_id)
        gone = [event_id for channel, event_id in held if channel == channel_id]
        if not gone:
            return
        kept = [entry for entry in held if entry[0] != channel_id]
        pipe = self.r.pipeline(transaction=False)
        if kept:
            pipe.hset(keys.game_punter_channels(), str(user_id), orjson.dumps(kept))
        else:
            pipe.hdel(keys.game_punter_channels(), str(user_id))
        for event_id in gone:
            pipe.hdel(keys.game_event_channels(event_id), channel_id)
            pipe.hdel(keys.game_ranks(event_id), channel_id)
        pipe.execute()

    def _channels_of(self, user_id: int) -> list[list[Any]]:
        raw = self.r.hget(keys.game_punter_channels(), str(user_id))
        return list(orjson.loads(raw)) if raw else []

    def image(self, *, channel_id: str, event_id: int, user_id: int, resync: bool = False) -> bytes:
        """A game channel's image: the event's questions and top, the punter's state and ranks
        (stored as the ranks last sent, so the deltas after it send only a move)."""
        day = self.event_day(event_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.hvals(keys.game_questions(event_id))
        pipe.hmget(keys.game_top(event_id), ["top"])
        pipe.get(keys.game_punter(user_id))
        pipe.zrevrank(keys.game_board(board_scope(event_id=event_id)), str(user_id))
        pipe.zcard(keys.game_board(board_scope(event_id=event_id)))
        if day is not None:
            pipe.zrevrank(keys.game_board(board_scope(day=day)), str(user_id))
            pipe.zcard(keys.game_board(board_scope(day=day)))
        raw_questions, (raw_top,), raw_me, match, players, *rest = pipe.execute()
        day_rank, day_players = rest if rest else (None, 0)
        ranks = f"{0 if match is None else match + 1}:{0 if day_rank is None else day_rank + 1}"
        self.r.hset(keys.game_ranks(event_id), channel_id, ranks)
        return game_view_frame(
            kind="image",
            channel_id=channel_id,
            event_id=event_id,
            me=stored_punter(raw_me) if raw_me else None,
            rank=_ranks(ranks, int(players), int(day_players)),
            questions=_questions(raw_questions),
            top=orjson.loads(raw_top) if raw_top else [],
            resync=resync,
        )

    # --- reads for the pages and the API ---

    def event_day(self, event_id: int) -> str | None:
        """The day of the event's game (its questions' day); ``None`` before it has one."""
        for raw in self.r.hvals(keys.game_questions(event_id))[:1]:
            day: str = orjson.loads(raw)["day"]
            return day
        return None

    def questions(self, event_id: int) -> list[GameQuestion]:
        """The event's questions, in the order they opened."""
        return _questions(self.r.hvals(keys.game_questions(event_id)))

    def question(self, question_id: int, *, event_id: int) -> GameQuestion | None:
        raw = self.r.hget(keys.game_questions(event_id), str(question_id))
        found: GameQuestion | None = orjson.loads(raw) if raw else None
        return found

    def games(self, *, limit: int = 50) -> list[int]:
        """Events with a game, the most recently active first."""
        return [int(e) for e in self.r.zrevrange(keys.game_events_index(), 0, limit - 1)]

    def punter(self, user_id: int) -> GamePunter | None:
        raw = self.r.get(keys.game_punter(user_id))
        return stored_punter(raw) if raw else None

    def leaderboard(self, scope: str, *, limit: int = TOP, user_id: int | None = None) -> Leaderboard:
        """A leaderboard's top ``limit`` (names from the names hash) and the punter's place on it."""
        board = keys.game_board(scope)
        rows = self.r.zrevrange(board, 0, limit - 1, withscores=True)
        members = [m.decode() for m, _ in rows]
        names = self.r.hmget(keys.game_names(), members) if members else []
        top: list[GameLeader] = [
            {"rank": at + 1, "name": name.decode() if name else f"Player {member}", "points": int(score)}
            for at, ((_, score), member, name) in enumerate(zip(rows, members, names, strict=True))
        ]
        found = Leaderboard(top=top, players=int(self.r.zcard(board)))
        if user_id is not None:
            rank = self.r.zrevrank(board, str(user_id))
            if rank is not None:
                found.rank = int(rank) + 1
                found.points = int(self.r.zscore(board, str(user_id)) or 0)
        return found

    def name_set(self, *, user_id: int, name: str) -> None:
        """The name leaderboards show for the punter."""
        self.r.hset(keys.game_names(), str(user_id), name)

    def answer_claim(self, *, user_id: int, question_id: int, keep_s: int) -> bool:
        """Claim the punter's one answer to the question for ``keep_s`` seconds (until the game
        reducer has counted it); False when it is claimed already."""
        return bool(self.r.set(keys.game_answer_claim(user_id, question_id), 1, nx=True, ex=keep_s))

    def answer_release(self, *, user_id: int, question_id: int) -> None:
        """Give the claim back (the answer could not be sent)."""
        self.r.delete(keys.game_answer_claim(user_id, question_id))


def _questions(raw: Iterable[bytes]) -> list[GameQuestion]:
    found: list[GameQuestion] = [orjson.loads(r) for r in raw]
    return sorted(found, key=lambda q: q["id"])


# --- the public game channels, read by the websocket edge ---


class Pipeline(Protocol):
    """What ``queue_games`` needs of a pipeline (redis-py's, sync or asyncio)."""

    def hvals(self, name: str) -> Any: ...

    def hmget(self, name: str, keys: list[str]) -> Any: ...


def queue_games(pipe: Pipeline, event_ids: Sequence[int]) -> None:
    """Queue on ``pipe`` the reads of each event's public game state; ``game_state_texts`` reads
    the replies."""
    for event_id in event_ids:
        pipe.hvals(keys.game_questions(event_id))
        pipe.hmget(keys.game_top(event_id), ["top", "players", "batch"])


def game_state_texts(event_ids: Sequence[int], replies: Sequence[Any]) -> list[str]:
    """A ``game.state`` frame per event from the replies of ``queue_games`` (questions and the
    top relayed as stored)."""
    texts = []
    for at, event_id in enumerate(event_ids):
        raw_questions, (top, players, batch) = replies[2 * at], replies[2 * at + 1]
        questions = sorted(raw_questions, key=lambda raw: orjson.loads(raw)["id"])
        texts.append(
            orjson.dumps(
                {
                    "type": "game.state",
                    "v": frames.PROTOCOL_VERSION,
                    "event_id": event_id,
                    "questions": [orjson.Fragment(q) for q in questions],
                    "top": orjson.Fragment(top) if top else [],
                    "players": int(players or 0),
                    "batch": int(batch or 0),
                }
            ).decode()
        )
    return texts


def game_channels(event_ids: Sequence[int]) -> list[str]:
    """The public pub-sub channels of the events' games."""
    return [keys.game_channel(event_id) for event_id in event_ids]
