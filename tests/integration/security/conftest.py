"""Fixtures for the security tests: a punter and a staff member, each with a logged-in client."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import sign_in, user_create


@pytest.fixture
def punter(services):
    return user_create(balance="100.00")


@pytest.fixture
def staff(services):
    return user_create(staff=True)


def logged_in(user, *, csrf: bool = False) -> Client:
    """A client logged in as ``user``; with ``csrf`` it enforces CSRF like a browser request."""
    client = Client(enforce_csrf_checks=csrf)
    sign_in(client, user)
    return client
