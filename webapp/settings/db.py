from decimal import Decimal

from webapp.settings.env import database_from_url, env

DATABASES = {
    "default": {
        **database_from_url(env.database_url),
        "CONN_MAX_AGE": 0,
        "OPTIONS": {
            "pool": {"min_size": 2, "max_size": env.database_pool_max, "timeout": 10},
        },
    }
}

# Bet placement on the event loop (odds/api/placement.py): its own pool per web process, large
# enough that a commit waiting for the disk or a busy core does not hold up the bets behind it. When
# BET_POOL_MAX_WAITING requests already wait for a connection, or none frees up within
# BET_POOL_TIMEOUT_MS, a bet is refused at once with 503 and Retry-After: BET_RETRY_AFTER_S.
BET_FAST_PATH = env.bet_fast_path
BET_POOL_SIZE = env.bet_pool_size
BET_POOL_MAX_WAITING = env.bet_pool_max_waiting
BET_POOL_TIMEOUT_MS = env.bet_pool_timeout_ms
# At start-up a web process waits this long for its pool to fill before it takes requests.
BET_POOL_WARM_S = env.bet_pool_warm_s
BET_RETRY_AFTER_S = 1
# A live price older than this (applied, or decided by a trader, this long ago, with no sign of
# life from the price pipe since) prices no bet and no cash-out: its market counts as suspended.
# The reducers give a sign of life at least every 10 s while no price comes (Spark's idle
# progress), so the default leaves them room.
LIVE_PRICE_MAX_AGE_S = env.live_price_max_age_s
# A trader's price more than this many times the live price (or less than it divided by this) is
# applied only once the trader confirms it: the fat-finger check (3.35 typed as 33.50).
PRICE_CHANGE_CONFIRM_RATIO = Decimal(str(env.price_change_confirm_ratio))
# How long a web process trusts what it read of a user (session hash, active) for placing bets.
BET_AUTH_CACHE_S = env.bet_auth_cache_s

# Sessions are read from Redis and written through to PostgreSQL.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# A punter's higher deposit limit applies only this long after they set it (a lower one at once).
DEPOSIT_LIMIT_COOLING_OFF_S = env.deposit_limit_cooling_off_s
