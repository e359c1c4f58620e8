"""Input limits and security controls: JSON numbers, failed-login throttling, the
Content-Security-Policy header of HTML pages."""

from webapp.settings.env import read

# A JSON number with a fraction or an exponent is read as an exact Decimal; beyond these bounds
# it is refused (400 number_out_of_range) before any arithmetic, which would fail on it.
JSON_NUMBER_MAX_CHARS = 64
JSON_NUMBER_MAX_EXPONENT = 64

# Failed logins: after this many failures within the window for one username (or from one
# client address), the login form answers 429 without checking the password until the window
# has passed since the first failure counted.
LOGIN_FAILURES_PER_USERNAME = read.whole("LOGIN_FAILURES_PER_USERNAME", 5)
LOGIN_FAILURES_PER_IP = read.whole("LOGIN_FAILURES_PER_IP", 20)
LOGIN_FAILURE_WINDOW_S = read.whole("LOGIN_FAILURE_WINDOW_S", 900)

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
