"""The reducer queries, declared once: what each reads, where its refused records go, how it
starts and how often it runs, the fair-scheduler pool it runs in and how far behind it may fall.

The Spark application starts them from this list (``spark.jobs.reducers``), the lag dashboard,
``/metrics`` and the alert rules name them from it, the dead-letter browser lists their
dead-letter topics from it, and the supervision records each by its name. Adding a query is its
decision (a pure module here), its processor (``spark/jobs/<query>.py``) and one entry below
(docs/architecture.md, "How to add a reducer query").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reducers import topics


@dataclass(frozen=True)
class DeadLetters:
    """Where a query sets aside the records it refuses: the topic, the name the operator pages
    give its source, and the prefix of the reasons its reducer counts (``command_undecodable``)."""

    topic: Callable[[], str]
    label: str
    counter_prefix: str


@dataclass(frozen=True)
class ReducerQuery:
    """One reducer query.

    ``source`` names its topic (a function of the namespace), ``dead_letters`` where it sets refused
    records aside; ``starting_offsets``
    is where a query without a checkpoint starts (``earliest``: a table or a log it must read
    whole; ``latest``: commands and windows, whose past means nothing to a new reader);
    ``trigger`` is its processing-time trigger unless the environment variable ``trigger_env``
    says otherwise; ``pool`` its fair-scheduler pool's (weight, minimum share), the punter-facing
    queries first; ``lag_objective_s`` how many seconds behind its source it may fall before the
    lag dashboard and the alerts call it lagging; ``checkpoint`` its checkpoint's name (the price
    query's carries the trigger mode). ``broadcast``: a second topic the query reads whole beside
    its source (the seed's command role: the game's match events beside its answers), with its
    own dead letters; the lag shown is the source's. ``async_progress``: its offset and commit
    logs are written in the background (``spark.jobs.query.async_progress_options``), for a query
    whose effects a replay of the last second's records leaves as they were (sequences, or
    event ids counted once); a restart may replay up to that interval.
    """

    name: str
    source: Callable[[], str]
    dead_letters: DeadLetters | None
    starting_offsets: str
    trigger_env: str
    trigger: str
    pool: tuple[int, int]
    lag_objective_s: float
    checkpoint: str
    job: str
    broadcast: Callable[[], str] | None = None
    broadcast_dead_letters: DeadLetters | None = None
    async_progress: bool = False

    def topics(self) -> tuple[str, ...]:
        """Every topic the query reads: its source, then its broadcast topic."""
        return (self.source(),) if self.broadcast is None else (self.source(), self.broadcast())

    def __post_init__(self) -> None:
        if self.starting_offsets not in ("earliest", "latest"):
            raise ValueError(f"{self.name}: starting offsets are earliest or latest, not {self.starting_offsets!r}")


PRICES = ReducerQuery(
    name="prices",
    source=topics.prices,
    dead_letters=DeadLetters(topics.prices_dead_letter, "prices", ""),
    starting_offsets="earliest",
    trigger_env="SPARK_TRIGGER_INTERVAL",
    trigger="0 seconds",
    pool=(4, 2),
    lag_objective_s=2,
    checkpoint="prices",
    job="spark.jobs.prices",
    async_progress=True,
)
COMMANDS = ReducerQuery(
    name="commands",
    source=topics.commands,
    dead_letters=DeadLetters(topics.commands_dead_letter, "commands", "command_"),
    starting_offsets="latest",
    trigger_env="SPARK_COMMANDS_TRIGGER",
    trigger="0 seconds",
    pool=(4, 1),
    lag_objective_s=2,
    checkpoint="commands",
    job="spark.jobs.commands",
)
MATCHES = ReducerQuery(
    name="matches",
    source=topics.match_states,
    dead_letters=DeadLetters(topics.match_states_dead_letter, "matches", "match_"),
    starting_offsets="earliest",
    trigger_env="SPARK_MATCHES_TRIGGER",
    trigger="500 milliseconds",
    pool=(2, 0),
    lag_objective_s=5,
    checkpoint="matches",
    job="spark.jobs.matches",
)
MARKETS = ReducerQuery(
    name="markets",
    source=topics.markets,
    dead_letters=DeadLetters(topics.markets_dead_letter, "markets", "market_"),
    starting_offsets="earliest",
    trigger_env="SPARK_MARKETS_TRIGGER",
    trigger="1 second",
    pool=(2, 0),
    lag_objective_s=5,
    checkpoint="markets",
    job="spark.jobs.markets",
)
LIABILITY = ReducerQuery(
    name="liability",
    source=topics.bets,
    dead_letters=DeadLetters(topics.bets_dead_letter, "bets", "bet_"),
    starting_offsets="earliest",
    trigger_env="SPARK_LIABILITY_TRIGGER",
    # A batch of the desk's 200 bets a second takes 20-100 ms of the batch function on a warm
    # JVM, so the trigger is most of a bet's way to the trader's ticker. Warm, at 200 bets a
    # second (bench.desk, one run each, 2026-12-05): 500 ms gave ticker p99 548 ms with the JVM at
    # 0.21 of a core, 200 ms 239 ms at 0.30, 100 ms 127 ms at 0.30, back to back (0 s) 61 ms at
    # 0.73 (docs/performance.md, "The trading desk"). 100 ms: a bet is on the ticker within a
    # fifth of a second for a tenth of a core; back to back would cost half a core more.
    trigger="100 milliseconds",
    pool=(1, 0),
    lag_objective_s=30,
    checkpoint="liability",
    job="spark.jobs.liability",
    async_progress=True,
)
# Named for its source: the movers once read the price topic, whose offsets a checkpoint of theirs
# holds. Its refused window partials are the price reducer's own output: no dead-letter topic.
MOVERS = ReducerQuery(
    name="movers",
    source=topics.price_windows,
    dead_letters=None,
    starting_offsets="latest",
    trigger_env="SPARK_MOVERS_TRIGGER",
    trigger="10 seconds",
    pool=(1, 0),
    lag_objective_s=60,
    checkpoint="movers-windows",
    job="spark.jobs.movers",
)

# The predictor game: punters' answers (partitioned by punter: the data role) and the match events
# every bucket of punters reads whole (the broadcast role), each punter's state in Spark's state
# store (spark/jobs/game.py).
GAME = ReducerQuery(
    name="game",
    source=topics.game_answers,
    dead_letters=DeadLetters(topics.game_answers_dead_letter, "game-answers", "game_answer_"),
    starting_offsets="earliest",
    trigger_env="SPARK_GAME_TRIGGER",
    trigger="0 seconds",
    pool=(4, 1),
    lag_objective_s=2,
    checkpoint="game",
    job="spark.jobs.game",
    broadcast=topics.game_events,
    broadcast_dead_letters=DeadLetters(topics.game_events_dead_letter, "game-events", "game_event_"),
)

QUERIES: tuple[ReducerQuery, ...] = (PRICES, COMMANDS, MATCHES, MARKETS, LIABILITY, MOVERS, GAME)
BY_NAME = {query.name: query for query in QUERIES}
# In real-time mode the price query's effect is applied by the applier, which reads the checked
# prices' topic; its lag is its own.
PRICE_APPLIER_OBJECTIVE_S = 2
# The queries that apply prices to the store: a sign of life from either (``keys.reducer_seen``)
# means the live prices are current (a bet or a cash-out may use them, odds.catalogue.selectors.prices).
PRICE_QUERIES = (PRICES.name, topics.PRICE_APPLIER)


def lag_objectives() -> dict[str, float]:
    """Seconds behind its source each query may fall, the real-time applier's included."""
    return {topics.PRICE_APPLIER: PRICE_APPLIER_OBJECTIVE_S, **{q.name: q.lag_objective_s for q in QUERIES}}


def sources() -> dict[str, str]:
    """Each query's name → the topic it reads."""
    return {query.name: query.source() for query in QUERIES}
