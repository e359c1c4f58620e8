"""Email: SMTP in production, files under var/mail in development."""

from webapp.settings.base import BASE_DIR
from webapp.settings.env import PRODUCTION, read

EMAIL_BACKEND = read.text(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if PRODUCTION else "django.core.mail.backends.filebased.EmailBackend",
)
EMAIL_FILE_PATH = read.text("EMAIL_FILE_PATH", str(BASE_DIR / "var" / "mail"))
EMAIL_HOST = read.text("EMAIL_HOST", "localhost")
EMAIL_PORT = read.whole("EMAIL_PORT", 25)
EMAIL_HOST_USER = read.text("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = read.text("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = read.flag("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = read.text("DEFAULT_FROM_EMAIL", "Sportsbook <no-reply@sportsbook.local>")
