"""What a ``REDIS_URL`` names: one server, or a Sentinel-managed master (pure parsing; the clients
are built in ``store.clients``)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

SENTINEL_SCHEME = "redis+sentinel"
SENTINEL_DEFAULT_PORT = 26379


class RedisUrlError(ValueError):
    """A Redis URL that cannot be used; the message says what is wrong with it."""


@dataclass(frozen=True)
class SentinelTarget:
    """A Sentinel-managed master: where to ask, for which service, and the data nodes' db and password."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    password: str | None = None


def sentinel_target(url: str) -> SentinelTarget | None:
    """The Sentinel target of a ``redis+sentinel://`` URL, None for any other URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme != SENTINEL_SCHEME:
        return None
    rest = rest.split("?", 1)[0]
    credentials, at, hosts_and_path = rest.rpartition("@")
    password = None
    if at:
        password = unquote(credentials.partition(":")[2]) or None
    hosts, _, path = hosts_and_path.partition("/")
    sentinels = []
    for item in hosts.split(","):
        host, colon, port = item.strip().rpartition(":")
        if not colon:
            host, port = item.strip(), str(SENTINEL_DEFAULT_PORT)
        if not host or not port.isdigit():
            raise RedisUrlError(f"{url!r}: each Sentinel is host:port, got {item!r}")
        sentinels.append((host, int(port)))
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise RedisUrlError(f"{url!r}: the service name (as in the Sentinels' monitor line) follows the hosts")
    if len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
        raise RedisUrlError(f"{url!r}: the path is /service or /service/db")
    return SentinelTarget(
        sentinels=tuple(sentinels), service=parts[0], db=int(parts[1]) if len(parts) == 2 else 0, password=password
    )


def with_db(url: str, db: int) -> str:
    """The same URL with another database number (the Celery broker's, beside the data's)."""
    target = sentinel_target(url)
    if target is None:
        return url.rsplit("/", 1)[0] + f"/{db}"
    head = url.split("?", 1)[0]
    authority = head[len(SENTINEL_SCHEME) + 3 :].split("/", 1)[0]
    return f"{SENTINEL_SCHEME}://{authority}/{target.service}/{db}"
