"""One websocket's protocol state, as plain data and decisions: what it follows, what it owes its
client and in which order, and what to do when a frame arrives, the client writes, or the hub's
Redis subscription comes back. Nothing here reads, writes or waits: the consumer
(``odds.streaming.consumers``) carries out the actions a decision returns, the pattern of the
reducers' ``reducers.channels``. Unit-tested without Redis (tests/unit/test_socket_session.py).

The queue's rules (docs/protocol.md):

* market states are latest-wins per market (a slow client gets the newest state of each, and is
  told how many were replaced with a ``conflated`` frame); so are match states, per event;
* the frames of an event's predictor game (its questions, its leaderboard's top) are queued in
  order, never conflated;
* status changes, channel frames and the punter's news are never conflated: they are queued in
  order; a channel more than ``CHANNEL_QUEUE_LIMIT`` frames behind has its queue dropped and a
  resync image asked for (never a silent gap);
* while a channel is recovered from its log (the hub's subscription came back), its new frames
  are held, then queued after the missed ones, each sequence once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

import orjson

from odds.core import events
from reducers import frames

CHANNEL_QUEUE_LIMIT = 2000
IMAGE_WINDOW_S = 60.0


# --- what the consumer is asked to do ---


@dataclass(frozen=True)
class Detach:
    """Stop following the channel (it ended): leave its pub-sub channel."""

    name: bytes
    channel_id: str


@dataclass(frozen=True)
class Resync:
    """Get the channel a fresh image (the queue behind it was dropped, or its log did not reach).
    ``floor``: the channel's numbering went back (a Redis failover lost frames its clients had
    seen): its sequence is raised to at least this first, so the image is numbered past them."""

    channel_id: str
    floor: int | None = None


@dataclass(frozen=True)
class Recover:
    """Read back what the channel published while the hub's subscription was away (its log), then
    call ``Session.recovered``."""

    name: bytes
    channel_id: str
    last_seq: int | None


@dataclass(frozen=True)
class Reimage:
    """Read the stored states of every watched market, followed event and followed game again and
    queue them."""

    markets: tuple[int, ...]
    events: tuple[int, ...]
    games: tuple[int, ...] = ()


@dataclass(frozen=True)
class EndSession:
    """The socket's session ended (logout, password change, deactivation, self-exclusion): send
    ``session.ended`` with the reason, then close (``CLOSE_SESSION_ENDED``)."""

    reason: frames.SessionEndReason


Action = Detach | Resync | Recover | Reimage | EndSession


def session_digest(session_key: str) -> str:
    """How a ``session.close`` message names a session: the key itself never goes on pub-sub."""
    return hashlib.sha256(session_key.encode()).hexdigest()[:32]


def session_close_reason(message: str | bytes, *, digest: str | None) -> frames.SessionEndReason | None:
    """The reason a socket of the session named by ``digest`` must close, when ``message`` (on the
    punter's channel) is a ``session.close`` for it (or for every session); None otherwise."""
    if frames.kind(message) != "session.close":
        return None
    close: frames.SessionCloseMessage = orjson.loads(message)
    named = close.get("session")
    if named is not None and named != digest:
        return None
    return close["reason"]


@dataclass(frozen=True)
class Limits:
    frames_per_s: int
    image_markets_per_min: int
    markets: int
    events: int


@dataclass
class Tick:
    """The hub's tick frame waiting to be written: the frame, its markets and their states, so a
    socket that is behind can fold it into the latest-wins queue instead."""

    frame: str
    channels: tuple[bytes, ...]
    moved: dict[bytes, str]


@dataclass
class Session:
    limits: Limits
    # The punter's own news channel (logged in), never conflated.
    punter: bytes | None = None
    # This socket's browser session (``session_digest`` of its key), for a session that ends.
    session_digest: str | None = None
    # The markets watched, as the keys of a dict (an ordered set): built from a list of 20 ids a
    # dict takes 0.6 KiB where a set takes 2.2, on every socket.
    watched: dict[int, None] = field(default_factory=dict)
    # Events whose match states the socket follows: their public channel → event id.
    followed: dict[bytes, int] = field(default_factory=dict)
    # Events whose predictor games the socket follows: their public game channel → event id.
    games: dict[bytes, int] = field(default_factory=dict)
    # The trading desk's staff channels the socket follows (a staff user's socket only).
    desk: set[bytes] = field(default_factory=set)
    # Subscriber channels attached: pub-sub name → channel id; the newest sequence queued for
    # each; the frames held back while one is recovered from its log.
    attached: dict[bytes, str] = field(default_factory=dict)
    channel_seqs: dict[bytes, int] = field(default_factory=dict)
    holding: dict[bytes, list[str]] = field(default_factory=dict)
    # Channels whose numbering went back below what this socket queued (a Redis failover lost
    # frames the client has seen): the newest sequence queued; frames numbered at or below it are
    # dropped until the resync image asked for, numbered past it, arrives.
    regressed: dict[bytes, int] = field(default_factory=dict)
    # Frames read back from a channel's log after the hub reconnected, which the new connection may
    # still bring live (published just before the read): their sequences and hashes, and the
    # newest, past which none can come.
    echoes: dict[bytes, tuple[int, dict[int, int]]] = field(default_factory=dict)
    # Market frames of a batched socket: one tick's markets in one frame.
    batched: bool = False
    # What the client is owed: in-order frames, the newest state per market and per event, the
    # waiting tick frame, and how many market states were replaced.
    # Lists, not deques: an empty deque holds a block of 64 slots (0.7 KiB a socket); ``ordered``
    # is only appended to and taken whole, ``images`` holds a minute's few watches.
    ordered: list[str] = field(default_factory=list)
    latest: dict[bytes, str] = field(default_factory=dict)
    latest_matches: dict[bytes, str] = field(default_factory=dict)
    ready: Tick | None = None
    merged: int = 0
    heartbeat_due: bool = False
    frames_window: tuple[int, int] = (0, 0)  # (second, client frames in it)
    images: list[tuple[float, int]] = field(default_factory=list)

    # --- frames from the hub ---

    def deliver(self, channel: bytes, payload: str) -> list[Action]:
        """A message on a pub-sub channel this socket wants."""
        if channel == self.punter:
            if frames.kind(payload) == "session.close":
                reason = session_close_reason(payload, digest=self.session_digest)
                return [EndSession(reason)] if reason is not None else []
            self.ordered.append(payload)
        elif channel in self.holding:
            self.holding[channel].append(payload)
        elif channel in self.followed:
            self.latest_matches[channel] = payload
        elif channel in self.games or channel in self.desk:
            # A question settled or the top moved, a bet on the ticker, books that moved: each
            # frame says what changed, none is dropped.
            self.ordered.append(payload)
        elif channel in self.attached:
            return self._channel_frame(channel, payload)
        elif frames.kind(payload) == "market.status":
            # Suspensions and reopenings are never conflated away; they precede the market's state.
            self.ordered.append(payload)
        else:
            if channel in self.latest:
                self.merged += 1
            self.latest[channel] = payload
        return []

    def _channel_frame(self, channel: bytes, payload: str) -> list[Action]:
        channel_id = self.attached[channel]
        if frames.kind(payload) == "ended":
            # The channel is gone: the news goes after the frames before it, and the socket stops
            # following it (a new channel is the client's to create).
            self.ordered.append(payload)
            self.forget(channel)
            return [Detach(channel, channel_id)]
        seq = frames.frame_seq(payload)
        last = self.channel_seqs.get(channel)
        echoes = self.echoes.get(channel)
        if echoes is not None:
            newest, hashes = echoes
            if seq > newest:
                del self.echoes[channel]
            elif hashes.get(seq) == hash(payload):
                return []  # the live copy of a frame already read back from the log
        if channel in self.regressed:
            if seq <= self.regressed[channel]:
                return []
            del self.regressed[channel]
        elif last is not None and seq <= last:
            # Numbered at or below a frame already queued: the channel's sequence went back (a
            # Redis failover lost frames the client has seen; Redis pub-sub never repeats one).
            # The client would drop these as repeats and miss what they say: it gets an image
            # numbered past them instead.
            self.regressed[channel] = last
            return [Resync(channel_id, floor=last + 1)]
        if len(self.ordered) >= CHANNEL_QUEUE_LIMIT:
            # Too slow for the bound: the queue goes and a fresh image comes, flagged as a resync,
            # so the client knows frames were skipped rather than lost.
            self.ordered.clear()
            return [Resync(channel_id)]
        self.ordered.append(payload)
        self.channel_seqs[channel] = seq
        return []

    def deliver_tick(
        self, frame: str, channels: tuple[bytes, ...], moved: dict[bytes, str], replaced: int, *, idle: bool
    ) -> bool:
        """One tick's frame for a batched socket. True: nothing is owed and nothing is being
        written, so the consumer writes it now; else it is queued (or folded into the latest-wins
        queue while an earlier tick is still waiting)."""
        self.merged += replaced
        if idle and not self.merged:
            return True
        if self.ready is None and not self.latest:
            self.ready = Tick(frame, channels, moved)
        else:
            if self.ready is not None:
                self.latest.update((c, self.ready.moved[c]) for c in self.ready.channels)
                self.ready = None
            for channel in channels:
                if channel in self.latest:
                    self.merged += 1
                self.latest[channel] = moved[channel]
        return False

    # --- the hub's subscription came back ---

    def hub_reconnected(self) -> list[Action]:
        """What was published meanwhile never reached this process: each attached channel's new
        frames are held while its log is read back, and the watched states are read again."""
        actions: list[Action] = []
        for name, channel_id in self.attached.items():
            if name not in self.holding:
                self.holding[name] = []
                actions.append(Recover(name, channel_id, self.channel_seqs.get(name)))
        if self.watched or self.followed or self.games:
            watched, followed, games = sorted(self.watched), sorted(self.followed.values()), sorted(self.games.values())
            actions.append(Reimage(tuple(watched), tuple(followed), tuple(games)))
        return actions

    def recovered(self, name: bytes, *, logged: list[str] | None, ended: str | None) -> list[Action]:
        """The channel's log as read back (oldest first; None when it could not be read), or why it
        ended meanwhile: the missed frames and the held ones are queued in sequence order, each
        once; a log that does not reach back to the frame after the last one queued means a
        resync image."""
        held = self.holding.pop(name, [])
        channel_id = self.attached.get(name)
        if channel_id is None:
            return []
        if ended is not None:
            # Nothing will come for the channel: the client is told why (``lost`` when Redis came
            # back without it) and subscribes again.
            return self.deliver(name, events.ended(channel=channel_id, reason=ended))
        last = self.channel_seqs.get(name)
        actions: list[Action] = []
        complete = logged is not None and (last is None or not logged or frames.frame_seq(logged[0]) <= last + 1)
        if not complete:
            actions.append(Resync(channel_id))
            logged = []
        elif logged and last is not None and frames.frame_seq(logged[-1]) < last:
            # The log ends below what was queued: the channel's numbering went back while the hub
            # was away (a failover lost frames the client has seen). Nothing after it would be
            # shown until the numbers pass the client's: an image numbered past them instead.
            self.regressed[name] = last
            actions.append(Resync(channel_id, floor=last + 1))
        self._echoes_expect(name, logged or [])
        newest = last if last is not None else -1
        for frame in [*(logged or []), *held]:
            if frames.kind(frame) == "ended":
                actions.extend(self.deliver(name, frame))
                continue
            seq = frames.frame_seq(frame)
            if seq > newest:
                self.ordered.append(frame)
                self.channel_seqs[name] = newest = seq
        return actions

    # --- what the socket follows ---

    def attach(self, name: bytes, channel_id: str) -> bool:
        """Follow a channel; True when it is new to this socket."""
        new = name not in self.attached
        self.attached[name] = channel_id
        return new

    def forget(self, name: bytes) -> str | None:
        """Stop following a channel; its id when it was followed."""
        self.channel_seqs.pop(name, None)
        self.holding.pop(name, None)
        self.regressed.pop(name, None)
        self.echoes.pop(name, None)
        return self.attached.pop(name, None)

    def resumed(self, name: bytes, missed: list[str], *, logged: list[str] | None = None) -> None:
        """Frames sent straight to the client from the channel's log (an attach with ``last_seq``),
        out of the log as read (``logged``, oldest first; the hub may still bring those live)."""
        if missed:
            self.channel_seqs[name] = max(frames.frame_seq(missed[-1]), self.channel_seqs.get(name, 0))
        self._echoes_expect(name, logged if logged is not None else missed)

    def _echoes_expect(self, name: bytes, logged: list[str]) -> None:
        """Frames read from the channel's log (oldest first) that the hub may still bring live."""
        if logged:
            self.echoes[name] = (
                frames.frame_seq(logged[-1]),
                {frames.frame_seq(frame): hash(frame) for frame in logged},
            )

    def follow(self, names: Iterable[str], event_ids: Iterable[int]) -> None:
        self.followed.update((name.encode(), event_id) for name, event_id in zip(names, event_ids, strict=True))

    def follow_desk(self, names: Iterable[str]) -> None:
        self.desk.update(name.encode() for name in names)

    def follow_games(self, names: Iterable[str], event_ids: Iterable[int]) -> None:
        self.games.update((name.encode(), event_id) for name, event_id in zip(names, event_ids, strict=True))

    def unfollow_games(self, names: Iterable[str]) -> list[str]:
        """Stop following games; the names of those that were followed."""
        gone = [name for name in names if name.encode() in self.games]
        for name in gone:
            self.games.pop(name.encode(), None)
        return gone

    def unfollow(self, names: Iterable[str]) -> list[str]:
        """Stop following events; the names of those that were followed."""
        gone = [name for name in names if name.encode() in self.followed]
        for name in gone:
            self.followed.pop(name.encode(), None)
            self.latest_matches.pop(name.encode(), None)
        return gone

    # --- the client's frames and what they may cost ---

    def frame_allowed(self, *, second: int) -> bool:
        """Count one client frame in the current second; False above the per-second limit."""
        window, count = self.frames_window
        count = count + 1 if window == second else 1
        self.frames_window = (second, count)
        return count <= self.limits.frames_per_s

    def image_allowed(self, *, markets: int, now: float) -> bool:
        """Whether images of ``markets`` more markets (or events) fit the per-minute budget; counted
        when they do."""
        self.images = [image for image in self.images if image[0] > now - IMAGE_WINDOW_S]
        if sum(n for _, n in self.images) + markets > self.limits.image_markets_per_min:
            return False
        self.images.append((now, markets))
        return True

    def watch(self, market_ids: list[int]) -> None:
        self.watched.update(dict.fromkeys(market_ids))

    def unwatch(self, market_ids: list[int]) -> None:
        for market_id in market_ids:
            self.watched.pop(market_id, None)

    def watch_refusal(
        self, market_ids: Iterable[int], event_names: Iterable[str], game_names: Iterable[str] = ()
    ) -> tuple[str, str] | None:
        """The error a ``watch`` gets for going over a socket's limits, None when it fits (a game
        counts as an event)."""
        if len(self.watched.keys() | set(market_ids)) > self.limits.markets:
            return "too_many_markets", f"at most {self.limits.markets} markets"
        if len(self.followed.keys() | {name.encode() for name in event_names}) > self.limits.events:
            return "too_many_events", f"at most {self.limits.events} events"
        if len(self.games.keys() | {name.encode() for name in game_names}) > self.limits.events:
            return "too_many_events", f"at most {self.limits.events} games"
        return None

    # --- the writer ---

    def owes(self) -> bool:
        """Whether anything waits to be written."""
        return bool(
            self.ready is not None
            or self.latest
            or self.latest_matches
            or self.ordered
            or self.merged
            or self.heartbeat_due
        )

    def take(self, *, now_ms: int) -> list[str]:
        """Everything owed, in the order it goes out: in-order frames (statuses, channel frames,
        news), the waiting tick frame, the newest match states, the newest market states (one
        ``markets`` frame for a batched socket), how many states were replaced, a heartbeat."""
        out, self.ordered = self.ordered, []
        if self.ready is not None:
            out.append(self.ready.frame)
            self.ready = None
        out.extend(self.latest_matches.values())
        self.latest_matches = {}
        states, self.latest = self.latest, {}
        if self.batched and len(states) > 1:
            out.append(events.markets_batch(items=states.values()))
        else:
            out.extend(states.values())
        if self.merged:
            # Older states replaced before they were sent: say how many, never drop silently.
            out.append(events.conflated(merged=self.merged))
            self.merged = 0
        if self.heartbeat_due:
            # Only for the client: the channels' sign of life is the hub's keep-alive.
            out.append(events.heartbeat(ts=now_ms))
            self.heartbeat_due = False
        return out
