from webapp.settings.env import env

REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379/0", required_in_production=True)

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "cache",
    }
}
