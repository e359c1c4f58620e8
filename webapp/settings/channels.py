from webapp.settings.env import env, env_int
from webapp.settings.redis import REDIS_URL

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL]},
    }
}

# "hub": one Redis subscription per process with in-process fan-out (the fast path);
# "channel_layer": one group_send per update through channels-redis (the plain path).
ODDS_EDGE = env("ODDS_EDGE", "hub")
WS_MAX_FRAME_BYTES = env_int("WS_MAX_FRAME_BYTES", 16 * 1024)
WS_MAX_MARKETS = env_int("WS_MAX_MARKETS", 500)
# A subscriber channel with no attached websocket for this long is ended (its maps cleaned).
STREAM_IDLE_EXPIRY_S = env_int("STREAM_IDLE_EXPIRY_S", 120)
# Clients that watch with "batch": true get each tick's market updates in one frame.
EDGE_TICK_MS = env_int("EDGE_TICK_MS", 20)
