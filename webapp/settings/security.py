"""Input limits and security controls: JSON numbers, failed-login throttling, the
Content-Security-Policy header of HTML pages."""

from webapp.settings.env import env

# A JSON number with a fraction or an exponent is read as an exact Decimal; beyond these bounds
# it is refused (400 number_out_of_range) before any arithmetic, which would fail on it.
JSON_NUMBER_MAX_CHARS = 64
JSON_NUMBER_MAX_EXPONENT = 64

# Rate limits (odds/core/ratelimits.py): bet placement attempts per punter, stream
# subscriptions per punter; fixed windows counted in Redis.
BET_PLACE_LIMIT = env.bet_place_limit
BET_PLACE_WINDOW_S = env.bet_place_window_s
STREAM_SUBSCRIBE_LIMIT = env.stream_subscribe_limit
STREAM_SUBSCRIBE_WINDOW_S = env.stream_subscribe_window_s

# Logins (every login form, odds/core/auth.py): attempts for one username from one address, and
# failures from one address, within the window that starts with the first; above either the
# form answers 429 without checking the password until the window has passed.
LOGIN_FAILURES_PER_USERNAME = env.login_failures_per_username
LOGIN_FAILURES_PER_IP = env.login_failures_per_ip
LOGIN_FAILURE_WINDOW_S = env.login_failure_window_s

# Every HTML response carries this policy; "'self'" in connect-src does not cover websockets
# in every browser, so the websocket origin of the page's own host is added per request.
CONTENT_SECURITY_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "frame-ancestors": ["'none'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
}

# The reverse proxies whose X-Forwarded-For the ASGI server believes (addresses or networks,
# comma-separated; webapp/serve.py). None by default: a client's address is the peer's. `make up`
# trusts its nginx, which reaches the site from its own loopback address (PROXY_BIND, 127.0.0.2);
# the cluster compose file trusts its proxy's fixed address.
TRUSTED_PROXIES = env.trusted_proxies
