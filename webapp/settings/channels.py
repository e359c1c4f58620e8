from store.clients import channel_layer_host
from webapp.settings.env import read
from webapp.settings.redis import REDIS_URL

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [channel_layer_host(REDIS_URL)]},
    }
}

WS_MAX_FRAME_BYTES = read.whole("WS_MAX_FRAME_BYTES", 16 * 1024)
WS_MAX_MARKETS = read.whole("WS_MAX_MARKETS", 500)
# Events whose match states one websocket follows at most (``watch`` with ``events``).
WS_MAX_EVENTS = read.whole("WS_MAX_EVENTS", 500)
# A subscriber channel with no attached websocket for this long is ended (its maps cleaned).
STREAM_IDLE_EXPIRY_S = read.whole("STREAM_IDLE_EXPIRY_S", 120)
# Clients that watch with "batch": true get each tick's market updates in one frame.
EDGE_TICK_MS = read.whole("EDGE_TICK_MS", 20)
# Every process refreshes the sign of life of each channel with a websocket attached this often,
# whatever the traffic: a channel lives as long as a client is attached.
STREAM_KEEPALIVE_S = read.whole("STREAM_KEEPALIVE_S", max(1, STREAM_IDLE_EXPIRY_S // 4))
# How often the sweeper (Celery beat) looks for idle channels.
STREAM_SWEEP_INTERVAL_S = read.whole("STREAM_SWEEP_INTERVAL_S", 30)

# The stream control API, per punter: begin (and resync) and change requests in a fixed window,
# and channels alive at once per punter and per browser session.
STREAM_CONTROL_LIMIT = read.whole("STREAM_CONTROL_LIMIT", 30)
STREAM_CONTROL_WINDOW_S = read.whole("STREAM_CONTROL_WINDOW_S", 10)
STREAM_MAX_CHANNELS_PER_USER = read.whole("STREAM_MAX_CHANNELS_PER_USER", 64)
STREAM_MAX_CHANNELS_PER_SESSION = read.whole("STREAM_MAX_CHANNELS_PER_SESSION", 32)

# Redis connections of each web process's websocket hub for commands, and how long a command
# waits for one when all are busy (a burst of connects queues for them instead of failing).
EDGE_REDIS_MAX_CONNECTIONS = read.whole("EDGE_REDIS_MAX_CONNECTIONS", 64)
EDGE_REDIS_POOL_TIMEOUT_S = read.whole("EDGE_REDIS_POOL_TIMEOUT_S", 10)
# Websocket connections open at once, counted across every worker process.
WS_MAX_CONNECTIONS_PER_USER = read.whole("WS_MAX_CONNECTIONS_PER_USER", 16)
WS_MAX_CONNECTIONS_PER_IP = read.whole("WS_MAX_CONNECTIONS_PER_IP", 256)
WS_MAX_ANONYMOUS_CONNECTIONS_PER_IP = read.whole("WS_MAX_ANONYMOUS_CONNECTIONS_PER_IP", 64)
# Client addresses exempt from the per-address caps; comma-separated. Loopback by default: a
# client seen there is a local proxy whose clients' addresses were not forwarded (every punter
# would share one cap) or a local load generator; per-user caps still apply.
WS_CONNECTION_CAP_EXEMPT_IPS = tuple(read.names("WS_CONNECTION_CAP_EXEMPT_IPS", "127.0.0.1,::1"))
# Client frames (watch, unwatch, attach, ping) per connection per second.
WS_MAX_FRAMES_PER_S = read.whole("WS_MAX_FRAMES_PER_S", 20)
# Markets one connection may be sent images of within a sliding minute.
WS_MAX_IMAGE_MARKETS_PER_MIN = read.whole("WS_MAX_IMAGE_MARKETS_PER_MIN", 2000)

# View snapshots (GET /api/views/…): how long a cache may serve one without asking, and how much
# longer it may serve a stale one while it fetches the next. Short: prices move, and the stream
# (watch with since) brings the page up to date from the snapshot's sequences anyway.
VIEW_SNAPSHOT_MAX_AGE_S = read.whole("VIEW_SNAPSHOT_MAX_AGE_S", 2)
VIEW_SNAPSHOT_STALE_S = read.whole("VIEW_SNAPSHOT_STALE_S", 10)
