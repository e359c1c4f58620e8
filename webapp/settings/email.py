"""Email: SMTP in production, files under var/mail in development."""

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
