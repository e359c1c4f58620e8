"""`manage.py screenshots` takes every main page at both sizes from a running server."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.factories import market_create, user_create

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_screenshots_command_saves_each_main_page_at_desktop_and_phone_size(asgi_server, tmp_path, capsys):
    from odds.management.commands.screenshots import PAGES, PUNTER, SIZES, TRADER

    for username, staff in ((PUNTER, False), (TRADER, True)):
        user = user_create(staff=staff)
        user.username = username
        user.save()
    market_create()
    call_command("screenshots", url=asgi_server, out=str(tmp_path), settle=0.2)

    skipped = capsys.readouterr().out.count("skipped")
    taken = sorted(p.name for p in tmp_path.glob("*.png"))
    assert len(taken) == (len(PAGES) - skipped) * len(SIZES)
    assert {"home-desktop.png", "home-phone.png", "trading-desktop.png", "lag-phone.png"} <= set(taken)
    assert all(p.stat().st_size > 10_000 for p in tmp_path.glob("*.png")), "a page, not a blank"
