"""The login throttle on the real login forms (the site's and the admin's), counters in the real
Redis: attempts per username from one address and failures per address, counted before the
password is checked; 429 without checking a password while over the limit, cleared by a success
or by the window passing; a stranger elsewhere cannot lock the account out."""

from __future__ import annotations

import itertools
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from django.contrib.auth.signals import user_login_failed
from django.test import Client

from store import keys
from tests.conftest import wait_for
from tests.factories import user_create

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PASSWORD = "correct horse battery staple"
_addresses = itertools.count(1)


@pytest.fixture
def limits(settings, redis_client):
    settings.LOGIN_FAILURES_PER_USERNAME = 3
    settings.LOGIN_FAILURES_PER_IP = 6
    settings.LOGIN_FAILURE_WINDOW_S = 60
    # A fast hash (the users below are created after this): the window test counts seconds.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return settings


@pytest.fixture
def member(services):
    user = user_create()
    user.set_password(PASSWORD)
    user.save()
    return user


def _browser() -> Client:
    """A client from an address of its own, so no test counts another's failures."""
    return Client(REMOTE_ADDR=f"10.13.{next(_addresses)}.{time.time_ns() % 250 + 1}")


def _login(client: Client, username: str, password: str, **extra: str):
    return client.post("/login/", {"username": username, "password": password, **extra})


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_a_username_over_its_failure_limit_is_refused_with_429_without_checking_the_password(limits, member):
    client = _browser()
    for _ in range(3):
        assert _login(client, member.username, "wrong").status_code == 200
    checked: list[object] = []
    user_login_failed.connect(checked.append, dispatch_uid="throttle-test")
    try:
        response = _login(client, member.username, PASSWORD)
    finally:
        user_login_failed.disconnect(dispatch_uid="throttle-test")
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    assert "Too many failed logins" in response.content.decode()
    assert not _logged_in(client)
    # A wrong password would have sent user_login_failed: none was checked at all.
    assert not checked


def _login_counters(redis_client, limit: str, window: str = "*") -> list[bytes]:
    """The limit's counters (``window``: the ``<amount>/<seconds>`` of one setting of it)."""
    return redis_client.keys(f"{keys.rate_limits()}:{limit}/*/{window}/second")


def test_the_username_limit_holds_in_another_case(limits, member):
    client = _browser()
    for _ in range(3):
        _login(client, member.username, "wrong")
    assert _login(client, member.username.upper(), PASSWORD).status_code == 429


def test_a_username_in_fullwidth_letters_counts_as_the_same_username(limits, member):
    # Django's login form reads the username as NFKC, so the fullwidth spelling of a username
    # logs in as that user: it must not get a fresh count.
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in member.username)
    client = _browser()
    for name in (member.username, fullwidth, member.username.upper()):
        assert _login(client, name, "wrong").status_code == 200
    assert _login(client, fullwidth, PASSWORD).status_code == 429


def test_a_stranger_cannot_lock_the_account_out_from_another_address(limits, member):
    stranger = _browser()
    for _ in range(5):
        _login(stranger, member.username, "wrong")
    assert _login(stranger, member.username, PASSWORD).status_code == 429
    owner = _browser()
    assert _login(owner, member.username, PASSWORD).status_code == 302
    assert _logged_in(owner)


def test_the_admin_login_form_is_throttled_too(limits, member):
    client = _browser()
    for _ in range(3):
        assert client.post("/admin/login/", {"username": member.username, "password": "wrong"}).status_code == 200
    response = client.post("/admin/login/", {"username": member.username, "password": PASSWORD})
    assert response.status_code == 429
    assert 0 < int(response["Retry-After"]) <= 60
    assert not _logged_in(client)


def test_a_successful_login_clears_the_usernames_failures(limits, member):
    client = _browser()
    for _ in range(2):
        _login(client, member.username, "wrong")
    assert _login(client, member.username, PASSWORD).status_code == 302
    client = _browser()
    for _ in range(2):
        assert _login(client, member.username, "wrong").status_code == 200
    assert _login(client, member.username, PASSWORD).status_code == 302


def test_one_address_trying_many_usernames_is_refused_after_its_own_limit(limits, member):
    client = _browser()
    for index in range(6):
        assert _login(client, f"nobody-{index}", "wrong").status_code == 200
    assert _login(client, member.username, PASSWORD).status_code == 429
    assert _login(_browser(), member.username, PASSWORD).status_code == 302


def test_logins_are_accepted_again_once_the_window_has_passed(limits, member, redis_client):
    limits.LOGIN_FAILURE_WINDOW_S = 3
    client = _browser()
    for _ in range(3):
        _login(client, member.username, "wrong")
    assert _login(client, member.username, PASSWORD).status_code == 429
    wait_for(lambda: not _login_counters(redis_client, "login_account", "3/3"), timeout=10, what="the window to pass")
    assert _login(client, member.username, PASSWORD).status_code == 302


def test_a_username_of_any_text_is_counted_without_error(limits):
    client = _browser()
    for name in ["a:b:c", "x" * 5000, "\x00", "\ud800"[:0] + "名前"]:
        assert _login(client, name, "wrong").status_code == 200


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "http://testserver.evil.example/"])
def test_login_does_not_follow_next_to_another_host(member, target):
    response = _login(_browser(), member.username, PASSWORD, next=target)
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_the_uvicorn_login_page_answers_429_after_five_failures(asgi_server, member, redis_client):
    """The default limits, through the ASGI server a browser talks to."""

    def post(password: str) -> int:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(f"{asgi_server}/login/", timeout=10) as page:  # sets the CSRF cookie
            html = page.read().decode()
        token = html.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        body = urllib.parse.urlencode({"username": member.username, "password": password, "csrfmiddlewaretoken": token})
        try:
            with opener.open(f"{asgi_server}/login/", body.encode(), timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    try:
        assert [post("wrong") for _ in range(5)] == [200] * 5
        assert post(PASSWORD) == 429
    finally:
        for key in _login_counters(redis_client, "login_account") + _login_counters(redis_client, "login_address"):
            redis_client.delete(key)


def test_concurrent_attempts_get_no_more_password_checks_than_the_limit(asgi_server, member, redis_client):
    """Ten wrong passwords sent at once through uvicorn against a limit of five: each attempt
    is counted before its password is checked, so at most five are checked."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    with opener.open(f"{asgi_server}/login/", timeout=10) as page:
        html = page.read().decode()
    token = html.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
    body = urllib.parse.urlencode({"username": member.username, "password": "wrong", "csrfmiddlewaretoken": token})
    codes: list[int] = []
    start = threading.Barrier(10)

    def attempt() -> None:
        start.wait()
        try:
            with opener.open(f"{asgi_server}/login/", body.encode(), timeout=30) as response:
                codes.append(response.status)
        except urllib.error.HTTPError as error:
            codes.append(error.code)

    threads = [threading.Thread(target=attempt) for _ in range(10)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(codes) == [200] * 5 + [429] * 5
    finally:
        for key in _login_counters(redis_client, "login_account") + _login_counters(redis_client, "login_address"):
            redis_client.delete(key)
