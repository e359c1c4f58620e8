"""Email: SMTP everywhere. In development the mail catcher of `make services` (Mailpit,
infra/bin/mailpit.sh) takes every mail at ``MAILPIT_SMTP_LISTEN``; in production the relay, its
login and the sender come from the environment and are required."""

from webapp.settings.env import env

# Where the development stack's Mailpit takes mail (infra/bin/lib.sh declares the same default).
MAILPIT_SMTP_LISTEN = env.mailpit_smtp_listen

EMAIL_BACKEND = env.email_backend
EMAIL_HOST = env.email_host
EMAIL_PORT = env.email_port
EMAIL_HOST_USER = env.email_host_user
EMAIL_HOST_PASSWORD = env.email_host_password
EMAIL_USE_TLS = env.email_use_tls
EMAIL_USE_SSL = env.email_use_ssl
EMAIL_TIMEOUT = env.email_timeout_s
DEFAULT_FROM_EMAIL = env.default_from_email
SERVER_EMAIL = DEFAULT_FROM_EMAIL
