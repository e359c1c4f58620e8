"""The web processes' settings are read through one ``Reader`` (reducers/config.py), the same the
reducers use: typed and checked, and every problem is named at once when the settings finish
loading (``check`` in webapp/settings/__init__.py), before the site starts. With
``SPORTSBOOK_ENV=production`` a setting read with ``production_default=False`` has no default."""

from __future__ import annotations

import math
import os
from collections import Counter
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


def secret(name: str, default: str) -> str:
    """A secret: from the environment; in production required, not a published placeholder and
    carrying at least ``SECRET_MIN_BITS`` (each refusal named by ``check``)."""
    value = read.text(name, default, production_default=False)
    if PRODUCTION and name in read.environ:
        lowered = value.strip().lower()
        if lowered in KNOWN_SECRETS or "change-me" in lowered or "changeme" in lowered:
            read.problems.append(f"{name} is a published placeholder; set a random secret")
        elif secret_bits(value) < SECRET_MIN_BITS:
            read.problems.append(
                f"{name} is too weak for production (about {secret_bits(value):.0f} bits; at least"
                f" {SECRET_MIN_BITS}): use a random value such as `python -c 'import secrets;"
                " print(secrets.token_urlsafe(32))'`"
            )
    return value


def check() -> None:
    """Refuse to start, naming every missing or malformed setting."""
    try:
        read.check("the site's configuration")
    except ConfigError as exc:
        raise ImproperlyConfigured(str(exc)) from None
