"""Fixtures for the betting tests: a funded punter, a logged-in API client, Celery run inline."""

from __future__ import annotations

import pytest

from tests.factories import market_create, user_create


@pytest.fixture
def punter(services):
    return user_create(balance="100.00")


@pytest.fixture
def api(client, punter):
    """The Django test client logged in as ``punter``; ``api.post_json`` sends JSON bodies."""
    client.force_login(punter)

    def post_json(path: str, body: object, **extra):
        import json

        return client.post(path, data=json.dumps(body), content_type="application/json", **extra)

    client.post_json = post_json
    return client


@pytest.fixture
def market(services, redis_client):
    return market_create(prices=("2.10", "3.40", "3.50"))


@pytest.fixture(autouse=True)
def celery_inline():
    """Tasks run in the calling thread (``.delay`` executes at once), so that no betting test
    queues work on the real broker for a worker that would run it against another database."""
    from webapp.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield app
    app.conf.task_always_eager = False
    app.conf.task_eager_propagates = False
