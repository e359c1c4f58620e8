"""The web processes' settings are read through one ``Reader`` (reducers/config.py), the same the
reducers use: typed and checked, and every problem is named at once when the settings finish
loading (``check`` in webapp/settings/__init__.py), before the site starts. With
``SPORTSBOOK_ENV=production`` a setting read with ``production_default=False`` has no default."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

from reducers.config import ConfigError, Reader

read = Reader(os.environ)
ENVIRONMENT = read.environment
PRODUCTION = ENVIRONMENT == "production"


def database_from_url(url: str) -> dict[str, object]:
    """Django's database settings for a ``postgres://user:password@host:port/name`` URL."""
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        read.problems.append(f"DATABASE_URL must be a postgres:// URL, got scheme {parts.scheme!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
    }


def check() -> None:
    """Refuse to start, naming every missing or malformed setting."""
    try:
        read.check("the site's configuration")
    except ConfigError as exc:
        raise ImproperlyConfigured(str(exc)) from None
