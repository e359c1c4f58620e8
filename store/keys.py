"""The only place Redis keys and pub-sub channel names are spelled."""

from __future__ import annotations

from collections.abc import Iterable

from reducers.topics import namespace


def market_state(market_id: int) -> str:
    """Hash: ``seq`` (last applied sequence) and ``state`` (JSON of the market's latest state)."""
    return f"{market_state_prefix()}{market_id}"


def market_state_prefix() -> str:
    """What every ``market_state`` key starts with (a script that names markets by id)."""
    return f"{namespace()}:mkt:"


def match_state(event_id: int) -> str:
    """Hash: ``seq`` (last applied sequence) and ``state`` (JSON of the event's latest match state)."""
    return f"{namespace()}:match:{event_id}"


def match_channel(event_id: int) -> str:
    """Pub-sub channel carrying every applied match state of one event (public, like a market's)."""
    return f"{namespace()}:mt:{event_id}"


def event_markets(event_id: int) -> str:
    """Set: ids of the markets of one event the markets table has held (match states reach the
    channels showing any of them)."""
    return f"{namespace()}:evmkts:{event_id}"


def trader_decision(market_id: int) -> str:
    """Hash: ``seq`` and ``state`` (the market's state as the reducers write it) of the newest
    trader decision on the market, written before it is published. Bets and cash-outs read it
    beside ``market_state`` and go by it until the reducers have applied a newer sequence."""
    return f"{namespace()}:trader:{market_id}"


def market_channel(market_id: int) -> str:
    """Pub-sub channel carrying every applied update of one market."""
    return f"{namespace()}:px:{market_id}"


def market_channel_pattern() -> str:
    return f"{namespace()}:px:*"


def subscriber_channel(channel_id: str) -> str:
    """Pub-sub channel carrying one subscriber's view (image, deltas, control messages)."""
    return f"{namespace()}:ch:{channel_id}"


def heartbeat(component: str) -> str:
    """String: epoch seconds of the component's last sign of life (with an expiry)."""
    return f"{namespace()}:hb:{component}"


def store_mark() -> str:
    """String: JSON written once the store holds what Kafka retains (spark/rebuild.py); its
    absence means Redis came back empty and the reducers rebuild it."""
    return f"{namespace()}:store-mark"


def backup_status() -> str:
    """String: JSON of the PostgreSQL backups as the backup scheduler last read the repository
    (``odds.core.backups``)."""
    return f"{namespace()}:backups"


def replication_mark() -> str:
    """Counter written just before waiting for replicas: once they acknowledge it, they hold
    every write made before it, on any connection (replication is one ordered stream)."""
    return f"{namespace()}:replication-mark"


def reducer_progress(query: str) -> str:
    """String: JSON of the latest streaming-query progress of one reducer query."""
    return f"{namespace()}:progress:{query}"


def reducer_progress_recent(query: str) -> str:
    """List: JSON of one reducer query's last progress reports, newest first (capped at
    ``spark.progress.PROGRESS_RECENT``), so no batch is missed by a reader that polls."""
    return f"{namespace()}:progress:{query}:recent"


def bench_rows(consumer: str) -> str:
    """Integer: price records a benchmark consumer (the Spark ceiling, the plain consumer) has read."""
    return f"{namespace()}:bench:rows:{consumer}"


def counter(name: str) -> str:
    """Hash of counters of one family (e.g. dead letters by reason)."""
    return f"{namespace()}:count:{name}"


def source_sequences() -> str:
    """Hash market id → last sequence handed out at the source (feed and trader overrides share it)."""
    return f"{namespace()}:srcseq"


# --- subscriber channels (control API → command topic → reducers → pub-sub) ---


def channel_meta(channel_id: str) -> str:
    """Hash: ``user``, ``spec`` (JSON), ``view`` (the spec's), ``status`` (pending|streaming),
    ``seq``, ``logbytes`` (the log's size), ``created``."""
    return f"{namespace()}:chmeta:{channel_id}"


def channel_log(channel_id: str) -> str:
    """List of the channel's most recent frames, newest first, for resume after a reconnect."""
    return f"{namespace()}:chlog:{channel_id}"


def channel_markets(channel_id: str) -> str:
    """Set: market ids the channel receives (the channel → markets map)."""
    return f"{namespace()}:sub:ch:{channel_id}"


def fanout_journal(query: str) -> str:
    """Set: ids of the markets (or events) whose new states one reducer query has written and not
    yet fanned out to the subscriber channels; written by the same script as the states, deleted
    with the batch's last frame, so a batch that fails in between is fanned out again."""
    return f"{namespace()}:fanout:{query}"


def fanout_routed(token: str) -> str:
    """Set, for one fan-out's routes round trip: the channels already answered with their spec
    and states, so that a channel met again in a later script call of the same batch is answered
    once; deleted at the end of that round trip (and expires if the round trip is cut short)."""
    return f"{namespace()}:routed:{token}"


def market_channels(market_id: int) -> str:
    """Set: channel ids receiving the market (the market → channels map)."""
    return f"{namespace()}:sub:mkt:{market_id}"


def channels_index() -> str:
    """Sorted set: every live channel id scored by its last sign of life (epoch ms), for expiry."""
    return f"{namespace()}:sub:channels"


def query_channels() -> str:
    """Set: channel ids whose subscription is a query (resolved by the query stage)."""
    return f"{namespace()}:sub:queries"


def market_definition(market_id: int) -> str:
    """Hash: ``version``, ``status`` and ``def`` (JSON of the market definition) from the markets table."""
    return f"{namespace()}:mktdef:{market_id}"


def unknown_market_price(market_id: int) -> str:
    """Hash with an expiry: the newest price (``seq``, ``value``, ``merged``, ``kafka_ts``) of a market
    the markets table did not know, applied by the markets query when the definition arrives."""
    return f"{namespace()}:unkmkt:{market_id}"


def markets_by_start() -> str:
    """Sorted set: the markets of scheduled events in the markets table, scored by kick-off (epoch
    ms), for the query channels of a kick-off window."""
    return f"{namespace()}:mktstart"


def market_definitions_index() -> str:
    """Set: ids of every market present in the markets table."""
    return f"{namespace()}:mktdefs"


def liability(selection_id: int) -> str:
    """Hash for one selection: ``c:<currency>`` (open exposure in pence of that currency, exact),
    ``bets`` (open bet count) and ``pence`` (their sum in book pence at the current rates)."""
    return f"{namespace()}:liab:{selection_id}"


def liability_index() -> str:
    """Sorted set: selection id scored by exposure in book pence at the current rates, for the trader pages."""
    return f"{namespace()}:liab:index"


def market_book(market_id: int) -> str:
    """Hash: one market's book from open bets (reducers/liability.py, docs/liability.md), exact per
    currency: ``s:<currency>`` (pence of it staked by bets with a leg in the market) and
    ``r:<currency>:<selection>`` (pence of it returned if that selection wins); ``bets`` (their
    count), ``event`` (its event id), and in book pence at the current rates ``worst`` (the book's
    P/L on its worst outcome) and ``worst_sel`` (that outcome). Absent while no bet is open on it."""
    return f"{namespace()}:book:{market_id}"


def market_books_index() -> str:
    """Sorted set: market id scored by its worst-case loss in book pence (minus its worst P/L)."""
    return f"{namespace()}:book:index"


def event_book(event_id: int) -> str:
    """Hash: market id → that market's worst P/L in book pence, for each market of one event with open bets."""
    return f"{namespace()}:evbook:{event_id}"


def event_books_index() -> str:
    """Sorted set: event id scored by its worst-case loss in pence (minus the sum of its markets'
    worst P/L), for the risk view."""
    return f"{namespace()}:evbook:index"


def exchange_rates() -> str:
    """Hash: currency → its rate into the book's currency in millionths (reducers/rates.py), the
    operator's current rates as PostgreSQL holds them (odds.trading.ExchangeRate), mirrored here for
    the liability reducer's scripts and the desk's reads."""
    return f"{namespace()}:fx:rates"


def desk_ticker_channel() -> str:
    """Pub-sub channel, staff only: one ``desk.bet`` frame per bet event the liability reducer
    counted (the trading desk's ticker)."""
    return f"{namespace()}:desk:ticker"


def desk_liability_channel() -> str:
    """Pub-sub channel, staff only: one ``desk.liability`` frame per micro-batch that moved some
    market's book, with those markets' figures."""
    return f"{namespace()}:desk:liability"


def desk_ticker_log() -> str:
    """List, newest first and capped: the latest ``desk.bet`` frames, for the ticker page's first image."""
    return f"{namespace()}:desk:ticker:log"


def bet_event_seen(event_id: str) -> str:
    """Marker that a bet event was aggregated (de-duplication of at-least-once delivery)."""
    return f"{namespace()}:betevt:{event_id}"


def movers(window_start_ms: int) -> str:
    """Sorted set: market id scored by absolute price movement (basis points) in one event-time window."""
    return f"{namespace()}:movers:{window_start_ms}"


def movers_moves(window_start_ms: int) -> str:
    """Hash: market id → its largest move in one event-time window (``reducers.movers.Move``: the
    selection, its first and last price, the signed move), beside the window's ranking."""
    return f"{namespace()}:movers:{window_start_ms}:moves"


def desk_movers_channel() -> str:
    """Pub-sub channel, staff only: one ``desk.movers`` frame per movers batch that ranked a market."""
    return f"{namespace()}:desk:movers"


def movers_index() -> str:
    """Sorted set: window starts (ms) that have movers, for the trader pages and expiry."""
    return f"{namespace()}:movers:index"


def reducer_lag(query: str) -> str:
    """String: JSON of the query's lag per partition at its latest progress report."""
    return f"{namespace()}:lag:{query}"


def watermark(query: str) -> str:
    """String: the query's event-time watermark (epoch ms) for counting late records."""
    return f"{namespace()}:wm:{query}"


def channel_owner(channel_id: str) -> str:
    """String ``<user id>:<session key>``: who may attach a websocket to the channel (set by the API)."""
    return f"{channel_owner_prefix()}{channel_id}"


def channel_owner_prefix() -> str:
    """What every ``channel_owner`` key starts with (the script that admits a channel under the caps)."""
    return f"{namespace()}:chowner:"


def rate_limits() -> str:
    """Prefix of every rate-limit counter (``odds.core.ratelimits``, the ``limits`` library's Redis
    storage): ``<prefix>:<limit>/<caller>/<amount>/<window>/second``, a counter with an expiry
    per limit, caller and fixed window (the window starts with the caller's first hit)."""
    return f"{namespace()}:rl"


def lag_window(query: str) -> str:
    """List: the query's recent lag readings (JSON), newest first — the lag-status window."""
    return f"{namespace()}:ops:lagwin:{query}"


def lag_window_lock(query: str) -> str:
    """String with a short expiry: a reading was just added to the window (spacing)."""
    return f"{namespace()}:ops:lagwin:lock:{query}"


def browser_latency() -> str:
    """List: end-to-end latency samples (JSON) acknowledged by operators' browsers, newest first."""
    return f"{namespace()}:ops:latency:browser"


def digest_sent(*, week: str, user_id: int) -> str:
    """Cache marker: the weekly digest of that ISO week went to that user."""
    return f"{namespace()}:digest:{week}:{user_id}"


def celery_prefix(of_namespace: str | None = None) -> str:
    """Prefix of every Celery key on the broker, so stacks sharing one Redis keep their own queues."""
    return f"{of_namespace or namespace()}:celery:"


def reducer_queries() -> str:
    """Hash: reducer query name → JSON of its supervision state (``state``, ``restarts``,
    ``last_error``, ``since``), written by the reducer process that runs the queries."""
    return f"{namespace()}:reducers:queries"


def reducer_seen() -> str:
    """Hash: reducer query name → epoch ms of its last sign of life (a progress report or an
    idle event), so a quiet query is told apart from a silent one."""
    return f"{namespace()}:reducers:seen"


def channel_ended(channel_id: str) -> str:
    """Hash with an expiry: ``owner`` (``<user id>:<session key>``) and ``reason`` of an ended channel,
    so its owner's next attach is told why it ended instead of meeting silence."""
    return f"{namespace()}:chended:{channel_id}"


def punter_channel(user_id: int) -> str:
    """Pub-sub channel: news for one punter's websockets (a held bet decided)."""
    return f"{namespace()}:punter:{user_id}"


def live_channels_of_user(user_id: int) -> str:
    """Sorted set: the user's channel ids by creation time (the live-channel cap per punter)."""
    return f"{namespace()}:live:user:{user_id}"


def live_channels_of_session(session_key: str) -> str:
    """Sorted set: the browser session's channel ids by creation time (the cap per session)."""
    return f"{namespace()}:live:session:{session_key}"


def websocket_connections(kind: str, who: str) -> str:
    """Sorted set: open websocket ids of one user or client address, scored by when each entry lapses
    unless its process refreshes it (connection caps across worker processes)."""
    return f"{namespace()}:wsconn:{kind}:{who}"


def dead_letter_replayed(digest: str) -> str:
    """String: JSON of the replay headers a record was re-sent to its source topic with, by the
    record's digest (``store.dead_letters.ReplayLedger``), kept while its dead letters are."""
    return f"{namespace()}:dlq:replayed:{digest}"


# --- the predictor game (seed 000's third variation; the layout is store/game.py's) ---


def game_questions(event_id: int) -> str:
    """Hash: question id → JSON of the question (``reducers.frames.GameQuestion``) of one event's
    game, as the game reducer last wrote it; expires ``reducers.game.RESULTS_KEEP_S`` after the
    game's last change, as the event's board, top and ranks do."""
    return f"{namespace()}:game:q:{event_id}"


def game_events_index() -> str:
    """Sorted set: events that have a game, scored by the time of their latest question change
    (epoch ms): the leaderboard page's and the staff page's list of games (a game unchanged for
    ``reducers.game.RESULTS_KEEP_S`` leaves it)."""
    return f"{namespace()}:game:events"


def game_punter(user_id: int) -> str:
    """String: JSON of one punter's game state in the game reducer's encoding
    (``reducers.game.State``; ``store.game.stored_punter`` reads it) as the reducer last wrote it,
    for the images of the punter's game channels and the pages."""
    return game_punters((user_id,))[0]


def game_punters(user_ids: Iterable[int]) -> list[str]:
    """``game_punter`` of each id, the namespace read once (a goal writes every punter of its
    match)."""
    prefix = game_punter_prefix()
    return [f"{prefix}{user_id}" for user_id in user_ids]


def game_punter_prefix() -> str:
    """What every ``game_punter`` key starts with (a script that names punters by id)."""
    return f"{namespace()}:game:p:"


def game_board(scope: str) -> str:
    """Sorted set: punter id scored by points, one per leaderboard (``ev:<event id>`` for a
    match's, ``day:<YYYY-MM-DD>`` for a day's); expires ``reducers.game.RESULTS_KEEP_S`` after
    its last change."""
    return f"{namespace()}:game:lb:{scope}"


def game_board_prefix() -> str:
    """What every ``game_board`` key starts with."""
    return f"{namespace()}:game:lb:"


def game_top(event_id: int) -> str:
    """String: JSON of the match leaderboard's top as last published on the event's public game
    channel (with the batch that made it), for images and to publish only a change."""
    return f"{namespace()}:game:top:{event_id}"


def game_names() -> str:
    """Hash: punter id → the name leaderboards show (the API writes it when the punter answers)."""
    return f"{namespace()}:game:names"


def game_channel(event_id: int) -> str:
    """Pub-sub channel of one event's game, public like a market's: question changes and the
    match leaderboard's top (any page showing the event follows it, a visitor's too)."""
    return f"{namespace()}:gm:{event_id}"


def game_punter_channels() -> str:
    """Hash: punter id → JSON list of ``[channel id, event id]`` of the punter's game channels
    (one field read per changed punter, many in one ``HMGET``)."""
    return f"{namespace()}:game:chs"


def game_event_channels(event_id: int) -> str:
    """Hash: channel id → punter id of every game channel showing one event (whose ranks move
    when the event's leaderboard does)."""
    return f"{namespace()}:game:chs:{event_id}"


def game_ranks(event_id: int) -> str:
    """Hash: channel id → the punter's ranks (``<match>:<day>``) last sent on the channel, so a
    rank is sent only when it moved."""
    return f"{namespace()}:game:ranks:{event_id}"


def game_answer_claim(user_id: int, question_id: int) -> str:
    """String with an expiry: the API took the punter's answer to the question and sent it to the
    game reducer (a second answer is refused before the reducer has counted the first)."""
    return f"{namespace()}:game:claim:{user_id}:{question_id}"
