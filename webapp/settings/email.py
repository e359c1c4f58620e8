"""Email: SMTP in production, files under var/mail in development; and the operations knobs
(metrics history, lag window, /metrics token)."""

from webapp.settings.base import BASE_DIR
from webapp.settings.env import PRODUCTION, env, env_bool

EMAIL_BACKEND = env(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if PRODUCTION else "django.core.mail.backends.filebased.EmailBackend",
)
EMAIL_FILE_PATH = env("EMAIL_FILE_PATH", str(BASE_DIR / "var" / "mail"))
EMAIL_HOST = env("EMAIL_HOST", "localhost")
EMAIL_PORT = int(env("EMAIL_PORT", "25"))
EMAIL_HOST_USER = env("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", "Sportsbook <no-reply@sportsbook.local>")

# Production: always required, and /metrics answers no one without it (a local reverse proxy
# makes every client look like loopback). Development: unset means loopback clients only.
METRICS_TOKEN = env("METRICS_TOKEN", "", required_in_production=True)
METRICS_TOKEN_REQUIRED = PRODUCTION
OPS_SAMPLE_INTERVAL_S = int(env("OPS_SAMPLE_INTERVAL_S", "5"))
OPS_METRICS_RETENTION_HOURS = float(env("OPS_METRICS_RETENTION_HOURS", "168"))
OPS_LAG_WINDOW_SAMPLES = int(env("OPS_LAG_WINDOW_SAMPLES", "8"))
OPS_LAG_WINDOW_SPACING_MS = int(env("OPS_LAG_WINDOW_SPACING_MS", "2000"))
