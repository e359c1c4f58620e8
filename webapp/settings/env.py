"""The web processes' environment, read once into one checked model (``SiteEnvironment``, a
``pydantic_settings`` model, with the reducers' field types and production rule from
reducers/config.py): each field is named by its environment variable, typed, defaulted and
checked, and every problem is named at once by ``ImproperlyConfigured`` before the site starts.
The settings modules (``webapp/settings/*.py``) take their values from ``env``. With
``SPORTSBOOK_ENV=production`` a field marked ``NO_PRODUCTION_DEFAULT`` has no default, and a
secret must be neither a published placeholder nor weak."""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Mapping
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured
from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings

from reducers.config import (
    NO_PRODUCTION_DEFAULT,
    PRODUCTION_ENVIRONMENT,
    SETTINGS_CONFIG,
    ConfigError,
    EnvironmentSettings,
    Flag,
    Names,
    Number,
    RedisUrl,
    Seconds,
    problem,
    read,
)
from reducers.queries import lag_objectives


def database_from_url(url: str) -> dict[str, object]:
    """Django's database settings for a ``postgres://user:password@host:port/name`` URL."""
    parts = urlsplit(url)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
    }


def _database_url(url: str) -> str:
    scheme = urlsplit(url).scheme
    if scheme not in {"postgres", "postgresql"}:
        raise problem(f"must be a postgres:// URL, got scheme {scheme!r}")
    return url


# Values published in this repository, its docs and the usual templates: never a production secret.
KNOWN_SECRETS = frozenset(
    {
        "change-me",
        "change-me-in-production",
        "changeme",
        "dev-only-insecure-key-change-me",
        "secret",
        "password",
        "sportsbook-demo",
        "metrics-token",
    }
)
# The least a production secret must carry, estimated from its characters (a 32-character
# random hex token carries about 120 bits by this estimate, 128 in truth).
SECRET_MIN_BITS = 96


def secret_bits(value: str) -> float:
    """An estimate of a secret's entropy: its length times the Shannon entropy of its
    characters (low for short values, repeated patterns and few distinct characters)."""
    if not value:
        return 0.0
    counts = Counter(value)
    per_char = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return per_char * len(value)


def _secret(value: str, info: ValidationInfo) -> str:
    """In production, a secret is not a published placeholder and carries at least
    ``SECRET_MIN_BITS`` (it is required there too: ``NO_PRODUCTION_DEFAULT``)."""
    if info.data.get("environment") != PRODUCTION_ENVIRONMENT:
        return value
    lowered = value.strip().lower()
    if lowered in KNOWN_SECRETS or "change-me" in lowered or "changeme" in lowered:
        raise problem("is a published placeholder; set a random secret")
    if secret_bits(value) < SECRET_MIN_BITS:
        raise problem(
            f"is too weak for production (about {secret_bits(value):.0f} bits; at least"
            f" {SECRET_MIN_BITS}): use a random value such as `python -c 'import secrets;"
            " print(secrets.token_urlsafe(32))'`"
        )
    return value


def _objectives(raw: object) -> object:
    """``name=seconds,…``: how far behind in time each reducer query may fall before it is out
    of its objective (a price stream seconds, a ranking of movers a minute), or how long a
    latency stage may take."""
    if not isinstance(raw, str):
        return raw
    result: dict[str, float] = {}
    for item in raw.split(","):
        query, sep, seconds = item.strip().partition("=")
        try:
            value = float(seconds)
        except ValueError:
            value = -1.0
        if not sep or not query or not value > 0:
            raise problem(f"must be name=seconds pairs separated by commas, got {item!r}")
        result[query.strip()] = value
    return result


def _off_in_production(value: bool, info: ValidationInfo) -> bool:
    if value and info.data.get("environment") == PRODUCTION_ENVIRONMENT:
        raise problem(f"must be off when SPORTSBOOK_ENV={PRODUCTION_ENVIRONMENT}")
    return value


Secret = Annotated[str, NO_PRODUCTION_DEFAULT, AfterValidator(_secret)]
Required = Annotated[str, NO_PRODUCTION_DEFAULT]
Objectives = Annotated[dict[str, float], BeforeValidator(_objectives)]
DevelopmentOnly = Annotated[Flag, AfterValidator(_off_in_production)]


def _in_production(data: dict[str, Any]) -> bool:
    return data.get("environment") == PRODUCTION_ENVIRONMENT


class SiteEnvironment(EnvironmentSettings, BaseSettings):
    """Every setting the web processes read from their environment; the field's
    ``validation_alias`` names its variable."""

    model_config = SETTINGS_CONFIG

    # base.py
    secret_key: Secret = Field(default="dev-only-insecure-key-change-me", validation_alias="DJANGO_SECRET_KEY")
    debug: DevelopmentOnly = Field(default=False, validation_alias="DJANGO_DEBUG")
    # demo users have a published password
    demo: DevelopmentOnly = Field(default=False, validation_alias="SPORTSBOOK_DEMO")
    allowed_hosts: Names = Field(default=["127.0.0.1", "localhost"], validation_alias="DJANGO_ALLOWED_HOSTS")
    csrf_trusted_origins: Names = Field(
        default=["http://127.0.0.1:8000", "http://localhost:8000"], validation_alias="DJANGO_CSRF_TRUSTED_ORIGINS"
    )
    whitenoise_use_finders: Flag = Field(
        default_factory=lambda data: not _in_production(data), validation_alias="WHITENOISE_USE_FINDERS"
    )
    secure_ssl_redirect: Flag = Field(default=True, validation_alias="DJANGO_SECURE_SSL_REDIRECT")
    web_host: str = Field(default="127.0.0.1", validation_alias="WEB_HOST")
    web_port: int = Field(default=8000, ge=1, validation_alias="WEB_PORT")
    web_workers: int = Field(default=2, ge=1, validation_alias="WEB_WORKERS")
    web_open_files: int = Field(default=65_536, ge=1024, validation_alias="WEB_OPEN_FILES")
    web_backlog: int = Field(default=4096, ge=128, validation_alias="WEB_BACKLOG")
    web_gc_young: int = Field(default=50_000, ge=700, validation_alias="WEB_GC_YOUNG")
    web_gc_full_growth: float = Field(default=4.0, ge=1.1, le=100, validation_alias="WEB_GC_FULL_GROWTH")

    # accounts.py
    account_email_confirmation_expire_days: int = Field(
        default=3, ge=1, validation_alias="ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS"
    )
    password_reset_timeout_s: int = Field(default=3600, ge=60, validation_alias="PASSWORD_RESET_TIMEOUT_S")
    signup_per_ip: int = Field(default=10, ge=1, validation_alias="SIGNUP_PER_IP")
    signup_per_email: int = Field(default=3, ge=1, validation_alias="SIGNUP_PER_EMAIL")
    password_reset_per_ip: int = Field(default=10, ge=1, validation_alias="PASSWORD_RESET_PER_IP")
    password_reset_per_email: int = Field(default=3, ge=1, validation_alias="PASSWORD_RESET_PER_EMAIL")
    account_limit_window_s: int = Field(default=3600, ge=1, validation_alias="ACCOUNT_LIMIT_WINDOW_S")

    # redis.py, celery.py (the broker's Redis: by default database 1 beside the data's)
    redis_url: RedisUrl = Field(default="redis://127.0.0.1:6379/0", validation_alias="REDIS_URL")
    celery_broker_url: str | None = Field(default=None, validation_alias="CELERY_BROKER_URL")

    # channels.py
    ws_max_frame_bytes: int = Field(default=16 * 1024, ge=0, validation_alias="WS_MAX_FRAME_BYTES")
    ws_max_markets: int = Field(default=500, ge=0, validation_alias="WS_MAX_MARKETS")
    ws_max_events: int = Field(default=500, ge=0, validation_alias="WS_MAX_EVENTS")
    stream_idle_expiry_s: int = Field(default=120, ge=0, validation_alias="STREAM_IDLE_EXPIRY_S")
    edge_tick_ms: int = Field(default=20, ge=0, validation_alias="EDGE_TICK_MS")
    edge_pubsub_ping_s: float = Field(default=5.0, gt=0, validation_alias="EDGE_PUBSUB_PING_S")
    stream_keepalive_s: int = Field(
        default_factory=lambda data: max(1, data["stream_idle_expiry_s"] // 4),
        ge=0,
        validation_alias="STREAM_KEEPALIVE_S",
    )
    stream_sweep_interval_s: int = Field(default=30, ge=0, validation_alias="STREAM_SWEEP_INTERVAL_S")
    stream_control_limit: int = Field(default=30, ge=0, validation_alias="STREAM_CONTROL_LIMIT")
    stream_control_window_s: int = Field(default=10, ge=0, validation_alias="STREAM_CONTROL_WINDOW_S")
    stream_max_channels_per_user: int = Field(default=64, ge=0, validation_alias="STREAM_MAX_CHANNELS_PER_USER")
    stream_max_channels_per_session: int = Field(default=32, ge=0, validation_alias="STREAM_MAX_CHANNELS_PER_SESSION")
    edge_redis_max_connections: int = Field(default=64, ge=0, validation_alias="EDGE_REDIS_MAX_CONNECTIONS")
    edge_redis_pool_timeout_s: int = Field(default=10, ge=0, validation_alias="EDGE_REDIS_POOL_TIMEOUT_S")
    ws_per_message_deflate: Flag = Field(default=False, validation_alias="WS_PER_MESSAGE_DEFLATE")
    ws_protocol: Literal["websockets-sansio", "websockets", "wsproto"] = Field(
        default="websockets-sansio", validation_alias="WS_PROTOCOL"
    )
    ws_handshakes_at_once: int = Field(default=32, ge=0, validation_alias="WS_HANDSHAKES_AT_ONCE")
    ws_handshake_wait_s: float = Field(default=10, gt=0, validation_alias="WS_HANDSHAKE_WAIT_S")
    ws_max_connections_per_user: int = Field(default=16, ge=0, validation_alias="WS_MAX_CONNECTIONS_PER_USER")
    ws_max_connections_per_ip: int = Field(default=256, ge=0, validation_alias="WS_MAX_CONNECTIONS_PER_IP")
    ws_max_anonymous_connections_per_ip: int = Field(
        default=64, ge=0, validation_alias="WS_MAX_ANONYMOUS_CONNECTIONS_PER_IP"
    )
    ws_connection_cap_exempt_ips: Names = Field(
        default=["127.0.0.1", "::1"], validation_alias="WS_CONNECTION_CAP_EXEMPT_IPS"
    )
    ws_max_frames_per_s: int = Field(default=20, ge=0, validation_alias="WS_MAX_FRAMES_PER_S")
    ws_max_image_markets_per_min: int = Field(default=2000, ge=0, validation_alias="WS_MAX_IMAGE_MARKETS_PER_MIN")
    view_snapshot_max_age_s: int = Field(default=2, ge=0, validation_alias="VIEW_SNAPSHOT_MAX_AGE_S")
    view_snapshot_stale_s: int = Field(default=10, ge=0, validation_alias="VIEW_SNAPSHOT_STALE_S")

    # db.py
    database_url: Annotated[Required, AfterValidator(_database_url)] = Field(
        default="postgres://sportsbook:sportsbook@127.0.0.1:5432/sportsbook", validation_alias="DATABASE_URL"
    )
    database_pool_max: int = Field(default=20, ge=0, validation_alias="DATABASE_POOL_MAX")
    bet_fast_path: Flag = Field(default=True, validation_alias="BET_FAST_PATH")
    bet_pool_size: int = Field(default=16, ge=0, validation_alias="BET_POOL_SIZE")
    bet_pool_max_waiting: int = Field(default=64, ge=0, validation_alias="BET_POOL_MAX_WAITING")
    bet_pool_timeout_ms: int = Field(default=250, ge=0, validation_alias="BET_POOL_TIMEOUT_MS")
    bet_pool_warm_s: int = Field(default=10, ge=0, validation_alias="BET_POOL_WARM_S")
    live_price_max_age_s: Seconds = Field(default=15, validation_alias="LIVE_PRICE_MAX_AGE_S")
    price_change_confirm_ratio: Number = Field(default=3, gt=1, validation_alias="PRICE_CHANGE_CONFIRM_RATIO")
    bet_auth_cache_s: int = Field(default=5, ge=0, validation_alias="BET_AUTH_CACHE_S")
    deposit_limit_cooling_off_s: int = Field(default=24 * 3600, ge=0, validation_alias="DEPOSIT_LIMIT_COOLING_OFF_S")

    # email.py: the development stack's Mailpit takes mail here (infra/bin/lib.sh declares the same default)
    mailpit_smtp_listen: str = Field(default="127.0.0.1:1025", validation_alias="MAILPIT_SMTP_LISTEN")
    email_backend: str = Field(default="django.core.mail.backends.smtp.EmailBackend", validation_alias="EMAIL_BACKEND")
    email_host: Required = Field(
        default_factory=lambda data: data["mailpit_smtp_listen"].rpartition(":")[0] or "127.0.0.1",
        validation_alias="EMAIL_HOST",
    )
    email_port: int = Field(
        default_factory=lambda data: (
            587 if _in_production(data) else int(data["mailpit_smtp_listen"].rpartition(":")[2] or 1025)
        ),
        ge=1,
        validation_alias="EMAIL_PORT",
    )
    email_host_user: Required = Field(default="", validation_alias="EMAIL_HOST_USER")
    email_host_password: Required = Field(default="", validation_alias="EMAIL_HOST_PASSWORD")
    email_use_tls: Flag = Field(default_factory=_in_production, validation_alias="EMAIL_USE_TLS")
    email_use_ssl: Flag = Field(default=False, validation_alias="EMAIL_USE_SSL")
    email_timeout_s: int = Field(default=10, ge=1, validation_alias="EMAIL_TIMEOUT_S")
    default_from_email: Required = Field(
        default="Sportsbook <no-reply@sportsbook.local>", validation_alias="DEFAULT_FROM_EMAIL"
    )

    # kafka.py
    kafka_bootstrap_servers: Required = Field(default="127.0.0.1:9092", validation_alias="KAFKA_BOOTSTRAP_SERVERS")
    kafka_replication_factor: int = Field(default=1, ge=0, validation_alias="KAFKA_REPLICATION_FACTOR")
    kafka_min_insync_replicas: int = Field(default=1, ge=0, validation_alias="KAFKA_MIN_INSYNC_REPLICAS")

    # logging.py
    log_level: str = Field(default="INFO", validation_alias="LOG_LEVEL")

    # ops.py
    metrics_token: Secret = Field(default="", validation_alias="METRICS_TOKEN")
    alerts_webhook_token: Secret = Field(default="", validation_alias="ALERTS_WEBHOOK_TOKEN")
    prometheus_listen: str = Field(default="127.0.0.1:9090", validation_alias="PROMETHEUS_LISTEN")
    prometheus_url: str = Field(
        default_factory=lambda data: "http://" + data["prometheus_listen"], validation_alias="PROMETHEUS_URL"
    )
    health_public_cache_s: Seconds = Field(default=2, validation_alias="HEALTH_PUBLIC_CACHE_S")
    ops_sample_interval_s: int = Field(default=5, ge=0, validation_alias="OPS_SAMPLE_INTERVAL_S")
    ops_metrics_retention_hours: Number = Field(default=168, validation_alias="OPS_METRICS_RETENTION_HOURS")
    ops_lag_window_samples: int = Field(default=8, ge=0, validation_alias="OPS_LAG_WINDOW_SAMPLES")
    ops_lag_window_spacing_ms: int = Field(default=2000, ge=0, validation_alias="OPS_LAG_WINDOW_SPACING_MS")
    ops_lag_objectives_s: Objectives = Field(
        default=lag_objectives(),
        validation_alias="OPS_LAG_OBJECTIVES_S",
    )
    ops_latency_objectives_s: Objectives = Field(
        default={"placement": 0.25, "frame": 1.0}, validation_alias="OPS_LATENCY_OBJECTIVES_S"
    )
    ops_report_stale_s: Number = Field(default=30, validation_alias="OPS_REPORT_STALE_S")
    backup_full_interval_h: Number = Field(default=24, validation_alias="BACKUP_FULL_INTERVAL_H")
    backup_check_interval_s: int = Field(default=60, ge=0, validation_alias="BACKUP_CHECK_INTERVAL_S")
    backup_archive_lag_objective_s: Number = Field(default=300, validation_alias="BACKUP_ARCHIVE_LAG_OBJECTIVE_S")

    # security.py
    bet_place_limit: int = Field(default=20, ge=0, validation_alias="BET_PLACE_LIMIT")
    bet_place_window_s: int = Field(default=10, ge=0, validation_alias="BET_PLACE_WINDOW_S")
    stream_subscribe_limit: int = Field(default=30, ge=0, validation_alias="STREAM_SUBSCRIBE_LIMIT")
    stream_subscribe_window_s: int = Field(default=60, ge=0, validation_alias="STREAM_SUBSCRIBE_WINDOW_S")
    login_failures_per_username: int = Field(default=5, ge=0, validation_alias="LOGIN_FAILURES_PER_USERNAME")
    login_failures_per_ip: int = Field(default=20, ge=0, validation_alias="LOGIN_FAILURES_PER_IP")
    login_failure_window_s: int = Field(default=900, ge=0, validation_alias="LOGIN_FAILURE_WINDOW_S")
    trusted_proxies: Names = Field(default=[], validation_alias="TRUSTED_PROXIES")

    @field_validator("email_use_ssl", mode="after")
    @classmethod
    def _one_kind_of_tls(cls, use_ssl: bool, info: ValidationInfo) -> bool:
        if use_ssl and info.data.get("email_use_tls"):
            raise problem("and EMAIL_USE_TLS are exclusive: STARTTLS on 587 or TLS on 465")
        return use_ssl


def load(environ: Mapping[str, str] | None = None) -> SiteEnvironment:
    """The site's environment (the process's by default), checked: ``ImproperlyConfigured``
    names every missing or malformed setting at once."""
    try:
        # The one place the site reads its environment.
        return read(SiteEnvironment, os.environ if environ is None else environ, "the site's configuration")
    except ConfigError as exc:
        raise ImproperlyConfigured(str(exc)) from None


env = load()
ENVIRONMENT = env.environment
PRODUCTION = env.production
