"""Screenshots of the main pages, punter, trader and operator, at a desktop and a phone size, taken
from a running stack (`make up`) in Chromium, for docs/screenshots/:

    .venv/bin/python manage.py screenshots [--url http://127.0.0.1:8000] [--out docs/screenshots]

The punter pages are taken as the demo punter, the staff pages as the demo trader (sessions made
in the stack's own session store, no password typed). A page whose view is not installed is
skipped with a note. The live parts get a few seconds to fill in before each shot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.test import Client
from django.urls import NoReverseMatch, reverse

SIZES = {"desktop": {"width": 1400, "height": 1000}, "phone": {"width": 390, "height": 844}}
PUNTER, TRADER = "alice", "trader"
# (file name, who, url name, arguments): the punter's then the staff's main pages.
PAGES: list[tuple[str, str | None, str, tuple[Any, ...]]] = [
    ("home", PUNTER, "home", ()),
    ("in-play", PUNTER, "in-play", ()),
    ("starting-soon", None, "starting-soon", ()),
    ("event", PUNTER, "event", ("EVENT",)),
    ("my-bets", PUNTER, "my-bets", ()),
    ("wallet", PUNTER, "wallet", ()),
    ("trading", TRADER, "trading-markets", ()),
    ("liability", TRADER, "trading-liability", ()),
    ("subscriptions", TRADER, "trading-subscriptions", ()),
    ("lag", TRADER, "ops-lag", ()),
    ("backups", TRADER, "ops-backups", ()),
    ("oncall", TRADER, "ops-oncall", ()),
    ("dead-letters", TRADER, "ops-dead-letters", ()),
    ("admin", TRADER, "admin:index", ()),
]


def _event_id() -> int:
    from odds.catalogue.models import Event

    event = Event.objects.filter(status=Event.Status.IN_PLAY).first() or Event.objects.order_by("starts_at").first()
    if event is None:
        raise CommandError("no events: seed the demo first (make up)")
    return event.pk


class Command(BaseCommand):
    help = "Screenshots of the main pages at desktop and phone sizes, from a running stack."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the running stack's address")
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "docs" / "screenshots"))
        parser.add_argument("--settle", type=float, default=3.0, help="seconds for the live parts to fill in")
        parser.add_argument("--pages", nargs="*", default=None, help="only these pages (file names, e.g. home lag)")
        parser.add_argument("--tag", default="", help="added to each file's name: lag-<tag>-desktop.png")

    def handle(self, *args: Any, **options: Any) -> None:
        from playwright.sync_api import sync_playwright

        base, out = options["url"].rstrip("/"), Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)
        sessions = {name: self._session(name) for name in (PUNTER, TRADER)}
        event = _event_id()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            try:
                for name, who, url_name, url_args in PAGES:
                    if options["pages"] and name not in options["pages"]:
                        continue
                    try:
                        path = reverse(url_name, args=[event if a == "EVENT" else a for a in url_args])
                    except NoReverseMatch:
                        self.stdout.write(f"{name}: no such page here, skipped")
                        continue
                    for size, viewport in SIZES.items():
                        context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
                        if who is not None:
                            context.add_cookies(
                                [{"name": settings.SESSION_COOKIE_NAME, "value": sessions[who], "url": base}]
                            )
                        page = context.new_page()
                        page.goto(base + path, wait_until="networkidle")
                        page.wait_for_timeout(options["settle"] * 1000)
                        tagged = f"{name}-{options['tag']}" if options["tag"] else name
                        target = out / f"{tagged}-{size}.png"
                        page.screenshot(path=str(target))
                        context.close()
                        self.stdout.write(f"{target}")
            finally:
                browser.close()

    def _session(self, username: str) -> str:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}: seed the demo first (make up)")
        client = Client()
        client.force_login(user)
        return client.cookies[settings.SESSION_COOKIE_NAME].value
