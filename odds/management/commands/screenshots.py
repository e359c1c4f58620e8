"""Screenshots of the main pages, punter, trader and operator, at a desktop and a phone size, taken
from a running stack (`make up`) in Chromium, for docs/screenshots/:

    .venv/bin/python manage.py screenshots [--url http://127.0.0.1:8000] [--out docs/screenshots]

The punter pages are taken as the demo punter (a session made in the stack's own session store), the
staff pages as the demo trader, signed in through the login form and the demo authenticator's code
(the staff pages need a second factor). A page whose view is not installed is
skipped with a note. The live parts get a few seconds to fill in before each shot.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from allauth.mfa.app_settings import TOTP_PERIOD
from allauth.mfa.totp.internal.auth import format_hotp_value, hotp_value
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.test import Client
from django.urls import NoReverseMatch, reverse

from odds.feed.services.demo import DEMO_PASSWORD, DEMO_TOTP_SECRET

SIZES = {"desktop": {"width": 1400, "height": 1000}, "phone": {"width": 390, "height": 844}}
PUNTER, TRADER = "alice", "trader"
# (file name, who, url name, arguments): the punter's then the staff's main pages.
PAGES: list[tuple[str, str | None, str, tuple[Any, ...]]] = [
    ("home", PUNTER, "home", ()),
    ("in-play", PUNTER, "in-play", ()),
    ("starting-soon", None, "starting-soon", ()),
    ("event", PUNTER, "event", ("EVENT",)),
    ("event-tennis", PUNTER, "event", ("EVENT:tennis",)),
    ("event-basketball", PUNTER, "event", ("EVENT:basketball",)),
    ("leaderboard", PUNTER, "game-leaderboard", ()),
    ("my-bets", PUNTER, "my-bets", ()),
    ("wallet", PUNTER, "wallet", ()),
    ("trading", TRADER, "trading-markets", ()),
    ("trading-event", TRADER, "trading-event", ("EVENT",)),
    ("liability", TRADER, "trading-liability", ()),
    ("risk", TRADER, "trading-risk", ()),
    ("ticker", TRADER, "trading-ticker", ()),
    ("referrals", TRADER, "trading-referrals", ()),
    ("movers", TRADER, "trading-movers", ()),
    ("rates", TRADER, "trading-rates", ()),
    ("game-staff", TRADER, "game-staff", ()),
    ("subscriptions", TRADER, "trading-subscriptions", ()),
    ("lag", TRADER, "ops-lag", ()),
    ("backups", TRADER, "ops-backups", ()),
    ("oncall", TRADER, "ops-oncall", ()),
    ("dead-letters", TRADER, "ops-dead-letters", ()),
    ("admin", TRADER, "admin:index", ()),
]


def _event_id(sport: str = "football") -> int:
    """An event in play of ``sport`` well into its match (the latest to start more than 20
    minutes ago), else any in play, else the next."""
    from datetime import timedelta

    from django.utils import timezone

    from odds.catalogue.models import Event

    in_play = Event.objects.filter(status=Event.Status.IN_PLAY).order_by("-starts_at")
    under_way = in_play.filter(starts_at__lte=timezone.now() - timedelta(minutes=20))
    in_play = under_way if under_way.filter(competition__sport__slug=sport).exists() else in_play
    event = in_play.filter(competition__sport__slug=sport).first() or in_play.first()
    event = event or Event.objects.order_by("starts_at").first()
    if event is None:
        raise CommandError("no events: seed the demo first (make up)")
    return event.pk


def _argument(value: Any) -> Any:
    """A page's argument: ``EVENT`` (or ``EVENT:<sport>``) is an event in play."""
    if isinstance(value, str) and value.startswith("EVENT"):
        _, _, sport = value.partition(":")
        return _event_id(sport or "football")
    return value


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
        # The pages' addresses before the browser starts (its event loop forbids database reads).
        shots: list[tuple[str, str | None, str]] = []
        for name, who, url_name, url_args in PAGES:
            if options["pages"] and name not in options["pages"]:
                continue
            try:
                shots.append((name, who, reverse(url_name, args=[_argument(a) for a in url_args])))
            except NoReverseMatch:
                self.stdout.write(f"{name}: no such page here, skipped")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            try:
                for name, who, path in shots:
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
        if not user.is_staff:
            client.force_login(user)
            return client.cookies[settings.SESSION_COOKIE_NAME].value
        client.post(reverse("login"), {"username": username, "password": DEMO_PASSWORD})
        code = format_hotp_value(hotp_value(DEMO_TOTP_SECRET, int(time.time()) // TOTP_PERIOD))
        if client.post(reverse("mfa_authenticate"), {"code": code}).status_code != 302:
            raise CommandError(f"{username!r} did not sign in with the demo password and authenticator")
        return client.cookies[settings.SESSION_COOKIE_NAME].value
