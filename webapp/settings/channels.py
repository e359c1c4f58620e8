from store.clients import channel_layer_host
from webapp.settings.env import env
from webapp.settings.redis import REDIS_URL

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {"hosts": [channel_layer_host(REDIS_URL)]},
    }
}

WS_MAX_FRAME_BYTES = env.ws_max_frame_bytes
WS_MAX_MARKETS = env.ws_max_markets
# Events whose match states one websocket follows at most (``watch`` with ``events``).
WS_MAX_EVENTS = env.ws_max_events
# A subscriber channel with no attached websocket for this long is ended (its maps cleaned).
STREAM_IDLE_EXPIRY_S = env.stream_idle_expiry_s
# Clients that watch with "batch": true get each tick's market updates in one frame.
EDGE_TICK_MS = env.edge_tick_ms
# Each web process's hub pings its pub-sub connection this often; a connection that answers
# nothing for two pings in a row is closed and made again (a peer the network lost says nothing).
EDGE_PUBSUB_PING_S = env.edge_pubsub_ping_s
# Every process refreshes the sign of life of each channel with a websocket attached this often,
# whatever the traffic: a channel lives as long as a client is attached.
STREAM_KEEPALIVE_S = env.stream_keepalive_s
# How often the sweeper (Celery beat) looks for idle channels.
STREAM_SWEEP_INTERVAL_S = env.stream_sweep_interval_s

# The stream control API, per punter: begin (and resync) and change requests in a fixed window,
# and channels alive at once per punter and per browser session.
STREAM_CONTROL_LIMIT = env.stream_control_limit
STREAM_CONTROL_WINDOW_S = env.stream_control_window_s
STREAM_MAX_CHANNELS_PER_USER = env.stream_max_channels_per_user
STREAM_MAX_CHANNELS_PER_SESSION = env.stream_max_channels_per_session

# Redis connections of each web process's websocket hub for commands, and how long a command
# waits for one when all are busy (a burst of connects queues for them instead of failing).
EDGE_REDIS_MAX_CONNECTIONS = env.edge_redis_max_connections
EDGE_REDIS_POOL_TIMEOUT_S = env.edge_redis_pool_timeout_s
# permessage-deflate for websockets: off. Browsers offer it on every socket, and the server then
# keeps a compressor per socket (about 300 KiB of zlib state with the server's defaults: 350 KiB a
# socket against 49 KiB without, measured with tracemalloc over 1,000 sockets) and compresses
# each frame once per socket, where the hub otherwise writes one encoded frame to every socket
# that gets it. Price frames are small JSON; a host of 10,000 sockets would hold 3 GiB of
# compressors.
WS_PER_MESSAGE_DEFLATE = env.ws_per_message_deflate
# uvicorn's websocket protocol: the sans-I/O one ("websockets-sansio") writes each frame from the
# send call, where "websockets" keeps a task and a queue per socket; it held less at 5,000 sockets
# (45.0 KiB a socket streaming against 59.9, 0.103 CPU-seconds per 1,000 deliveries against
# 0.137; docs/performance.md). "websockets" and "wsproto" stay available.
WS_PROTOCOL = env.ws_protocol
# Websocket handshakes in each web process's application at a time, and how long one waits for
# its turn before it is dropped with 1013 (the ASGI server's opening timeout: it has closed the
# connection by then); webapp/admission.py.
WS_HANDSHAKES_AT_ONCE = env.ws_handshakes_at_once
WS_HANDSHAKE_WAIT_S = env.ws_handshake_wait_s
# Websocket connections open at once, counted across every worker process.
WS_MAX_CONNECTIONS_PER_USER = env.ws_max_connections_per_user
WS_MAX_CONNECTIONS_PER_IP = env.ws_max_connections_per_ip
WS_MAX_ANONYMOUS_CONNECTIONS_PER_IP = env.ws_max_anonymous_connections_per_ip
# Client addresses exempt from the per-address caps; comma-separated. Loopback by default: a
# client seen there is a local proxy whose clients' addresses were not forwarded (every punter
# would share one cap) or a local load generator; per-user caps still apply.
WS_CONNECTION_CAP_EXEMPT_IPS = tuple(env.ws_connection_cap_exempt_ips)
# Client frames (watch, unwatch, attach, ping) per connection per second.
WS_MAX_FRAMES_PER_S = env.ws_max_frames_per_s
# Markets one connection may be sent images of within a sliding minute.
WS_MAX_IMAGE_MARKETS_PER_MIN = env.ws_max_image_markets_per_min

# View snapshots (GET /api/views/…): how long a cache may serve one without asking, and how much
# longer it may serve a stale one while it fetches the next. Short: prices move, and the stream
# (watch with since) brings the page up to date from the snapshot's sequences anyway.
VIEW_SNAPSHOT_MAX_AGE_S = env.view_snapshot_max_age_s
VIEW_SNAPSHOT_STALE_S = env.view_snapshot_stale_s
