"""One Redis URL for every process: a server, or the master a set of Sentinels names."""

from __future__ import annotations

import pytest
import redis
from redis.sentinel import SentinelConnectionPool

from reducers.redis_url import RedisUrlError, SentinelTarget, sentinel_target, with_db
from store.clients import ConnectionPoolOf, celery_broker, channel_layer_host, redis_client

SENTINELS = "redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26380,10.0.0.3/book/2"


def test_a_sentinel_url_names_the_sentinels_the_service_the_db_and_the_password():
    assert sentinel_target(SENTINELS) == SentinelTarget(
        sentinels=(("10.0.0.1", 26379), ("10.0.0.2", 26380), ("10.0.0.3", 26379)),
        service="book",
        db=2,
        password="s3cret",
    )
    assert sentinel_target("redis+sentinel://127.0.0.1:26379/book") == SentinelTarget(
        sentinels=(("127.0.0.1", 26379),), service="book"
    )


def test_a_plain_url_is_not_a_sentinel_target():
    assert sentinel_target("redis://127.0.0.1:6379/0") is None
    assert sentinel_target("unix:///run/redis.sock?db=1") is None


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+sentinel://127.0.0.1:26379", "service name"),
        ("redis+sentinel://127.0.0.1:26379/", "service name"),
        ("redis+sentinel://127.0.0.1:x/book", "host:port"),
        ("redis+sentinel://:26379/book", "host:port"),
        ("redis+sentinel://127.0.0.1:26379/book/zero", "/service/db"),
        ("redis+sentinel://127.0.0.1:26379/book/0/extra", "/service/db"),
    ],
)
def test_a_malformed_sentinel_url_is_refused_with_what_is_wrong(url, says):
    with pytest.raises(RedisUrlError, match=says):
        sentinel_target(url)


def test_another_database_of_the_same_redis():
    assert with_db("redis://127.0.0.1:6379/0", 1) == "redis://127.0.0.1:6379/1"
    assert with_db(SENTINELS, 1) == "redis+sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26380,10.0.0.3/book/1"
    assert with_db("redis+sentinel://127.0.0.1:26379/book", 1) == "redis+sentinel://127.0.0.1:26379/book/1"


def test_celery_and_channels_get_the_sentinels_in_their_own_forms():
    broker, options = celery_broker(SENTINELS)
    assert broker == (
        "sentinel://:s3cret@10.0.0.1:26379/2;sentinel://:s3cret@10.0.0.2:26380/2;sentinel://:s3cret@10.0.0.3:26379/2"
    )
    assert options == {"master_name": "book"}
    assert celery_broker("redis://127.0.0.1:6379/1") == ("redis://127.0.0.1:6379/1", {})
    assert channel_layer_host(SENTINELS) == {
        "sentinels": [("10.0.0.1", 26379), ("10.0.0.2", 26380), ("10.0.0.3", 26379)],
        "master_name": "book",
        "db": 2,
        "password": "s3cret",
    }
    assert channel_layer_host("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_clients_and_pools_of_a_sentinel_url_ask_the_sentinels_for_the_master():
    client = redis_client(SENTINELS, socket_timeout=2)
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.service_name == "book"
    assert pool.connection_kwargs["db"] == 2
    assert pool.connection_kwargs["password"] == "s3cret"
    cache_pool = ConnectionPoolOf.from_url(SENTINELS)
    assert isinstance(cache_pool, SentinelConnectionPool)
    plain = ConnectionPoolOf.from_url("redis://127.0.0.1:6379/3")
    assert type(plain) is redis.ConnectionPool
    assert plain.connection_kwargs["db"] == 3
