"""Fixtures for the trader and operator tests: staff and punter clients, Celery run inline."""

from __future__ import annotations

import pytest

from tests.factories import staff_sign_in, user_create


@pytest.fixture
def staff(services):
    return user_create(balance="0", staff=True)


@pytest.fixture
def punter(services):
    return user_create(balance="100.00")


@pytest.fixture
def staff_client(client, staff):
    """A staff member signed in with password and TOTP code (the staff pages need both)."""
    staff_sign_in(client, staff)
    return client


@pytest.fixture(autouse=True)
def celery_inline():
    """Tasks run in the calling thread, never on the shared broker."""
    from webapp.celery import app

    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield app
    app.conf.task_always_eager = False
    app.conf.task_eager_propagates = False
