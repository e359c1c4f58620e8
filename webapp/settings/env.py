"""Reading settings from the environment, failing fast in production when one is missing."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

ENVIRONMENT = os.environ.get("SPORTSBOOK_ENV", "development")
PRODUCTION = ENVIRONMENT == "production"


def env(name: str, default: str | None = None, *, required_in_production: bool = False) -> str:
    value = os.environ.get(name)
    if value:
        return value
    if PRODUCTION and required_in_production:
        raise ImproperlyConfigured(f"{name} must be set when SPORTSBOOK_ENV=production")
    if default is None:
        raise ImproperlyConfigured(f"{name} must be set")
    return default


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from exc


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env(name, default).split(",") if item.strip()]


def database_from_url(url: str) -> dict[str, object]:
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(f"DATABASE_URL must be a postgres:// URL, got scheme {parts.scheme!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
    }
