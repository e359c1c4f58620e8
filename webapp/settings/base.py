from __future__ import annotations

from pathlib import Path

from webapp.settings.env import PRODUCTION, env

BASE_DIR = Path(__file__).resolve().parent.parent.parent

SECRET_KEY = env.secret_key
# Django's debug pages (the technical 404 listing every route, the technical 500) only when a
# developer asks for them; never in production.
DEBUG = env.debug
# Demo data (seed_demo: punters, a trader and an operator with the published demo password, the
# demo catalogue) and the login page's list of demo accounts: only with this development flag.
DEMO = env.demo
ALLOWED_HOSTS = env.allowed_hosts
CSRF_TRUSTED_ORIGINS = env.csrf_trusted_origins

INSTALLED_APPS = [
    "daphne",
    # Before the admin, whose base and error templates it overrides (favicon, the site's look).
    "odds",
    # The domains, each an app inside the odds package (docs/architecture.md has the map).
    "odds.audit",
    "odds.catalogue",
    "odds.betting",
    "odds.streaming",
    "odds.game",
    "odds.trading",
    "odds.feed",
    "odds.ops",
    "odds.accounts",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "allauth",
    "allauth.account",
    "allauth.mfa",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "webapp.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # Staff pages and actions only after a second factor (odds/accounts/gate.py).
    "webapp.middleware.StaffSecondFactorMiddleware",
    # A login past its session time limit is signed out on its next request (odds/accounts/play.py).
    "webapp.middleware.PlaySessionMiddleware",
    # Every login form's POST is counted before its password is checked (odds/core/auth.py).
    "webapp.middleware.LoginThrottleMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "webapp.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "odds.betting.context_processors.currency",
            ],
        },
    },
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = env.whitenoise_use_finders

# The web server (webapp/serve.py, `make up`): where it listens and how many worker processes.
WEB_HOST = env.web_host
WEB_PORT = env.web_port
WEB_WORKERS = env.web_workers
# Open files each server process asks for (a websocket holds one; Redis and PostgreSQL
# connections a few more), and the listen backlog of connections not yet accepted — a web host's
# reconnect storm after a restart arrives at once (docs/reliability.md, "A host for many sockets").
WEB_OPEN_FILES = env.web_open_files
WEB_BACKLOG = env.web_backlog
# Container objects allocated between two young-generation collections in a server process
# (Python's default: 700). A web host's thousands of sockets keep hundreds of thousands of objects
# alive; at the default, a frame that lives one hub tick survives into the old generation and the
# full collections it brings pause every socket of the process for half a second (docs/performance.md).
WEB_GC_YOUNG = env.web_gc_young
WEB_GC_FULL_GROWTH = env.web_gc_full_growth
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024

if PRODUCTION:
    SECURE_SSL_REDIRECT = env.secure_ssl_redirect
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = 31536000
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
