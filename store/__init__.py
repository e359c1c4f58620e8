"""The one owner of every Redis layout, and the factory of every Redis and Kafka client.

The reducers' decisions (``reducers/``) are pure: they read plain data and return effects. The
modules here carry those effects out against Redis and read what the decisions need, for the
Spark jobs (sync) and the site (sync and asyncio) alike: markets and their states
(``store.markets``), match states (``store.matches``), subscriber channels (``store.channels``),
and the pipeline's bookkeeping: counters, heartbeats, the reducer queries' progress
(``store.pipeline``). Nothing outside this package spells a Redis key.
"""
