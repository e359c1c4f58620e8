from store.clients import ConnectionPoolOf
from webapp.settings.env import env

REDIS_URL = env.redis_url

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        # A list: Django splits a string at commas, which a Sentinel URL has between its hosts.
        "LOCATION": [REDIS_URL],
        "KEY_PREFIX": "cache",
        # A Sentinel URL (redis+sentinel://…) follows the master through a failover.
        "OPTIONS": {"pool_class": ConnectionPoolOf},
    }
}
