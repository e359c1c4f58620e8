"""`manage.py screenshots` takes every main page at both sizes from a running server."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.factories import market_create, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_screenshots_command_saves_the_pages_asked_for_at_desktop_and_phone_size(asgi_server, tmp_path):
    from allauth.mfa.totp.internal.auth import TOTP

    from odds.feed.services.demo import DEMO_PASSWORD, DEMO_TOTP_SECRET
    from odds.management.commands.screenshots import PUNTER, TRADER

    for username, staff in ((PUNTER, False), (TRADER, True)):
        user = user_create(staff=staff)
        user.username = username
        # The command signs staff in as a person would: the demo password and authenticator.
        user.set_password(DEMO_PASSWORD)
        user.save()
        if staff:
            TOTP.activate(user, DEMO_TOTP_SECRET)
    market_create()
    call_command("screenshots", url=asgi_server, out=str(tmp_path), settle=0.2, pages=["event", "trading", "lag"])

    taken = sorted(p.name for p in tmp_path.glob("*.png"))
    assert taken == [f"{page}-{size}.png" for page in ("event", "lag", "trading") for size in ("desktop", "phone")]
    assert all(p.stat().st_size > 10_000 for p in tmp_path.glob("*.png")), "a page, not a blank"
