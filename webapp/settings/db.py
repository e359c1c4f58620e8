from webapp.settings.env import database_from_url, read

DATABASES = {
    "default": {
        **database_from_url(
            read.text(
                "DATABASE_URL", "postgres://sportsbook:sportsbook@127.0.0.1:5432/sportsbook", production_default=False
            )
        ),
        "CONN_MAX_AGE": 0,
        "OPTIONS": {
            "pool": {"min_size": 2, "max_size": read.whole("DATABASE_POOL_MAX", 20), "timeout": 10},
        },
    }
}

# Bet placement on the event loop (odds/api/placement.py): its own pool per web process, large
# enough that a commit waiting for the disk or a busy core does not hold up the bets behind it. When
# BET_POOL_MAX_WAITING requests already wait for a connection, or none frees up within
# BET_POOL_TIMEOUT_MS, a bet is refused at once with 503 and Retry-After: BET_RETRY_AFTER_S.
BET_FAST_PATH = read.flag("BET_FAST_PATH", True)
BET_POOL_SIZE = read.whole("BET_POOL_SIZE", 16)
BET_POOL_MAX_WAITING = read.whole("BET_POOL_MAX_WAITING", 64)
BET_POOL_TIMEOUT_MS = read.whole("BET_POOL_TIMEOUT_MS", 250)
# At start-up a web process waits this long for its pool to fill before it takes requests.
BET_POOL_WARM_S = read.whole("BET_POOL_WARM_S", 10)
BET_RETRY_AFTER_S = 1
# A live price older than this (applied, or decided by a trader, this long ago, with no sign of
# life from the price pipe since) prices no bet and no cash-out: its market counts as suspended.
# The reducers give a sign of life at least every 10 s while no price comes (Spark's idle
# progress), so the default leaves them room.
LIVE_PRICE_MAX_AGE_S = read.seconds("LIVE_PRICE_MAX_AGE_S", 15)
# How long a web process trusts what it read of a user (session hash, active) for placing bets.
BET_AUTH_CACHE_S = read.whole("BET_AUTH_CACHE_S", 5)

# Sessions are read from Redis and written through to PostgreSQL.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# A punter's higher deposit limit applies only this long after they set it (a lower one at once).
DEPOSIT_LIMIT_COOLING_OFF_S = read.whole("DEPOSIT_LIMIT_COOLING_OFF_S", 24 * 3600)
