"""Reading a process's settings from its environment: typed, checked, every problem named at once.

The reducers (``spark/config.py``) and the web processes (``webapp/settings``) read their
settings through ``Reader``. With ``SPORTSBOOK_ENV=production`` a setting read with
``production_default=False`` has no development default: a process that would quietly use a
development address or key refuses to start instead, and says which settings to set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reducers.redis_url import RedisUrlError, sentinel_target
from reducers.windows import parse_duration_ms


class ConfigError(ValueError):
    """One or more settings are missing or malformed; the message names each."""


class Reader:
    """Reads settings from ``environ``, collecting every problem instead of stopping at the first.

    Each reading returns the default when the value is missing or malformed, so every setting
    is read; ``check`` then raises ``ConfigError`` naming each problem.
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.environment = environ.get("SPORTSBOOK_ENV", "development")
        self.problems: list[str] = []

    def text(self, name: str, default: str, *, production_default: bool = True) -> str:
        value = self.environ.get(name, "")
        if value:
            return value
        if self.environment == "production" and not production_default:
            self.problems.append(f"{name} must be set when SPORTSBOOK_ENV=production")
        return default

    def parsed(self, name: str, default: str, parse: Callable[[str], Any], wanted: str) -> Any:
        raw = self.text(name, default)
        try:
            return parse(raw)
        except (ValueError, TypeError):
            self.problems.append(f"{name} must be {wanted}, got {raw!r}")
            return parse(default)

    def whole(self, name: str, default: int, *, minimum: int = 0) -> int:
        def parse(raw: str) -> int:
            value = int(raw)
            if value < minimum:
                raise ValueError(raw)
            return value

        return int(self.parsed(name, str(default), parse, f"a whole number of at least {minimum}"))

    def seconds(self, name: str, default: float) -> float:
        def parse(raw: str) -> float:
            value = float(raw)
            if not value >= 0:
                raise ValueError(raw)
            return value

        return float(self.parsed(name, str(default), parse, "a number of seconds, 0 or more"))

    def flag(self, name: str, default: bool) -> bool:
        def parse(raw: str) -> bool:
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)

        return bool(self.parsed(name, "true" if default else "false", parse, "true or false"))

    def duration(self, name: str, default: str) -> str:
        def parse(raw: str) -> str:
            parse_duration_ms(raw)
            return raw

        return str(self.parsed(name, default, parse, 'a duration such as "500 milliseconds" or "1 minute"'))

    def redis_url(self, name: str, default: str) -> str:
        raw = self.text(name, default, production_default=False)
        try:
            sentinel_target(raw)
        except RedisUrlError as exc:
            self.problems.append(f"{name}: {exc}")
            return default
        return raw

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        def parse(raw: str) -> str:
            if raw not in choices:
                raise ValueError(raw)
            return raw

        return str(self.parsed(name, default, parse, f"one of {', '.join(choices)}"))

    def number(self, name: str, default: float) -> float:
        def parse(raw: str) -> float:
            value = float(raw)
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(raw)
            return value

        return float(self.parsed(name, str(default), parse, "a number"))

    def names(self, name: str, default: str) -> list[str]:
        """A comma-separated list, blanks left out."""
        return [item.strip() for item in self.text(name, default).split(",") if item.strip()]

    def required(self, name: str) -> str:
        """A setting without a default in any environment."""
        value = self.environ.get(name, "")
        if not value:
            self.problems.append(f"{name} must be set")
        return value

    def check(self, what: str) -> None:
        """Raise ``ConfigError`` naming every problem met so far."""
        if self.problems:
            raise ConfigError(f"{what} is not usable:\n  " + "\n  ".join(self.problems))
