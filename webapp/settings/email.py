"""Email: SMTP everywhere. In development the mail catcher of `make services` (Mailpit,
infra/bin/mailpit.sh) takes every mail at ``MAILPIT_SMTP_LISTEN``; in production the relay, its
login and the sender come from the environment and are required."""

from webapp.settings.env import PRODUCTION, read

# Where the development stack's Mailpit takes mail (infra/bin/lib.sh declares the same default).
MAILPIT_SMTP_LISTEN = read.text("MAILPIT_SMTP_LISTEN", "127.0.0.1:1025")
_mailpit_host, _, _mailpit_port = MAILPIT_SMTP_LISTEN.rpartition(":")

EMAIL_BACKEND = read.text("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = read.text("EMAIL_HOST", _mailpit_host or "127.0.0.1", production_default=False)
EMAIL_PORT = read.whole("EMAIL_PORT", 587 if PRODUCTION else int(_mailpit_port or 1025), minimum=1)
EMAIL_HOST_USER = read.text("EMAIL_HOST_USER", "", production_default=False)
EMAIL_HOST_PASSWORD = read.text("EMAIL_HOST_PASSWORD", "", production_default=False)
EMAIL_USE_TLS = read.flag("EMAIL_USE_TLS", PRODUCTION)
EMAIL_USE_SSL = read.flag("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    read.problems.append("EMAIL_USE_TLS and EMAIL_USE_SSL are exclusive: STARTTLS on 587 or TLS on 465")
EMAIL_TIMEOUT = read.whole("EMAIL_TIMEOUT_S", 10, minimum=1)
DEFAULT_FROM_EMAIL = read.text("DEFAULT_FROM_EMAIL", "Sportsbook <no-reply@sportsbook.local>", production_default=False)
SERVER_EMAIL = DEFAULT_FROM_EMAIL
