from __future__ import annotations

from pathlib import Path

from webapp.settings.env import PRODUCTION, read, secret

BASE_DIR = Path(__file__).resolve().parent.parent.parent

SECRET_KEY = secret("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me")
# Django's debug pages (the technical 404 listing every route, the technical 500) only when a
# developer asks for them; never in production.
DEBUG = read.flag("DJANGO_DEBUG", False)
if DEBUG and PRODUCTION:
    read.problems.append("DJANGO_DEBUG must be off when SPORTSBOOK_ENV=production")
# Demo data (seed_demo: punters, a trader and an operator with the published demo password, the
# demo catalogue) and the login page's list of demo accounts: only with this development flag.
DEMO = read.flag("SPORTSBOOK_DEMO", False)
if DEMO and PRODUCTION:
    read.problems.append(
        "SPORTSBOOK_DEMO must be off when SPORTSBOOK_ENV=production: demo users have a published password"
    )
ALLOWED_HOSTS = read.names("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = read.names("DJANGO_CSRF_TRUSTED_ORIGINS", "http://127.0.0.1:8000,http://localhost:8000")

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
WHITENOISE_USE_FINDERS = read.flag("WHITENOISE_USE_FINDERS", not PRODUCTION)

# The web server (webapp/serve.py, `make up`): where it listens and how many worker processes.
WEB_HOST = read.text("WEB_HOST", "127.0.0.1")
WEB_PORT = read.whole("WEB_PORT", 8000, minimum=1)
WEB_WORKERS = read.whole("WEB_WORKERS", 2, minimum=1)
# Open files each server process asks for (a websocket holds one; Redis and PostgreSQL
# connections a few more), and the listen backlog of connections not yet accepted — a web host's
# reconnect storm after a restart arrives at once (docs/reliability.md, "A host for many sockets").
WEB_OPEN_FILES = read.whole("WEB_OPEN_FILES", 65_536, minimum=1024)
WEB_BACKLOG = read.whole("WEB_BACKLOG", 4096, minimum=128)
# Container objects allocated between two young-generation collections in a server process
# (Python's default: 700). A web host's thousands of sockets keep hundreds of thousands of objects
# alive; at the default, a frame that lives one hub tick survives into the old generation and the
# full collections it brings pause every socket of the process for half a second (docs/performance.md).
WEB_GC_YOUNG = read.whole("WEB_GC_YOUNG", 50_000, minimum=700)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024

if PRODUCTION:
    SECURE_SSL_REDIRECT = read.flag("DJANGO_SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = 31536000
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
