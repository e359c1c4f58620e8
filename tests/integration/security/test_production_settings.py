"""Production settings: Django's deployment checks pass at WARNING level, DEBUG is off, cookies
are secure, HSTS is on, and every secret comes from the environment and is neither a published
placeholder nor weak; debug pages and demo data are refused."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PRODUCTION_ENV = {
    "SPORTSBOOK_ENV": "production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
    "DATABASE_URL": "postgres://sb:db-password-from-env@db.internal:5432/sportsbook",
    "REDIS_URL": "redis://redis.internal:6379/0",
    "KAFKA_BOOTSTRAP_SERVERS": "kafka.internal:9092",
    "DJANGO_ALLOWED_HOSTS": "sportsbook.example",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://sportsbook.example",
    "METRICS_TOKEN": secrets.token_urlsafe(32),
    "ALERTS_WEBHOOK_TOKEN": secrets.token_urlsafe(32),
    "EMAIL_HOST": "smtp.sportsbook.example",
    "EMAIL_HOST_USER": "sportsbook",
    "EMAIL_HOST_PASSWORD": "mail-password-from-env",
    "DEFAULT_FROM_EMAIL": "Sportsbook <no-reply@sportsbook.example>",
}


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_", "KAFKA_", "SPORTSBOOK_", "METRICS_", "EMAIL_"))
    }
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**inherited, "DJANGO_SETTINGS_MODULE": "webapp.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def production_settings() -> dict:
    names = [
        "DEBUG",
        "SECRET_KEY",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SESSION_COOKIE_HTTPONLY",
        "SECURE_HSTS_SECONDS",
        "SECURE_SSL_REDIRECT",
        "SECURE_CONTENT_TYPE_NOSNIFF",
        "X_FRAME_OPTIONS",
        "METRICS_TOKEN",
        "EMAIL_HOST_PASSWORD",
        "ALLOWED_HOSTS",
    ]
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        f"print(json.dumps({{n: getattr(s, n) for n in {names!r}}} | "
        "{'DB_PASSWORD': s.DATABASES['default']['PASSWORD']}))"
    )
    result = run(["-c", code], PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_deploy_check_passes_at_warning_level():
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_turns_debug_off_and_cookies_secure():
    found = production_settings()
    assert found["DEBUG"] is False
    assert found["SESSION_COOKIE_SECURE"] is True
    assert found["CSRF_COOKIE_SECURE"] is True
    assert found["SESSION_COOKIE_HTTPONLY"] is True
    assert found["SECURE_SSL_REDIRECT"] is True
    assert found["SECURE_CONTENT_TYPE_NOSNIFF"] is True
    assert found["X_FRAME_OPTIONS"] == "DENY"


def test_production_sends_hsts_for_a_year():
    assert production_settings()["SECURE_HSTS_SECONDS"] >= 31_536_000


def test_every_secret_comes_from_the_environment():
    found = production_settings()
    assert found["SECRET_KEY"] == PRODUCTION_ENV["DJANGO_SECRET_KEY"]
    assert found["DB_PASSWORD"] == "db-password-from-env"
    assert found["METRICS_TOKEN"] == PRODUCTION_ENV["METRICS_TOKEN"]
    assert found["EMAIL_HOST_PASSWORD"] == PRODUCTION_ENV["EMAIL_HOST_PASSWORD"]
    assert found["ALLOWED_HOSTS"] == ["sportsbook.example"]


@pytest.mark.parametrize("missing", ["DJANGO_SECRET_KEY", "DATABASE_URL", "REDIS_URL", "KAFKA_BOOTSTRAP_SERVERS"])
def test_production_refuses_to_start_without_a_required_secret(missing):
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != missing}
    result = run(["-c", "import django; django.setup()"], env)
    assert result.returncode != 0
    assert f"{missing} must be set" in result.stderr


def test_no_secret_is_written_in_the_tracked_files():
    """The development key is the only key-like literal, and production refuses it."""
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.yml", "*.yaml", "*.toml", "*.sh", "*.properties"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    offenders = []
    for name in tracked:
        text = (ROOT / name).read_text(errors="replace")
        for marker in ("BEGIN RSA PRIVATE KEY", "BEGIN PRIVATE KEY", "AKIA", "sk_live_", "xoxb-"):
            if marker in text and not name.startswith("tests/"):
                offenders.append(f"{name}: {marker}")
    assert not offenders


def test_every_missing_or_malformed_setting_is_named_at_once():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k not in ("DJANGO_SECRET_KEY", "REDIS_URL")}
    env |= {"WS_MAX_FRAMES_PER_S": "twenty", "DJANGO_DEBUG": "perhaps", "DATABASE_URL": "mysql://db/sportsbook"}
    result = run(["-c", "import django; django.setup()"], env)
    assert result.returncode != 0
    assert "ImproperlyConfigured: the site's configuration is not usable" in result.stderr
    for problem in (
        "DJANGO_SECRET_KEY must be set when SPORTSBOOK_ENV=production",
        "REDIS_URL must be set when SPORTSBOOK_ENV=production",
        "WS_MAX_FRAMES_PER_S must be a whole number of at least 0, got 'twenty'",
        "DJANGO_DEBUG must be true or false, got 'perhaps'",
        "DATABASE_URL must be a postgres:// URL, got scheme 'mysql'",
    ):
        assert problem in result.stderr


def test_a_malformed_sentinel_url_stops_the_site_as_it_stops_the_reducers():
    result = run(["-c", "import django; django.setup()"], {"REDIS_URL": "redis+sentinel://127.0.0.1:26379"})
    assert result.returncode != 0
    assert "REDIS_URL: " in result.stderr


def test_only_the_settings_read_the_environment():
    """Each setting has one reader: nothing in the site reads ``os.environ`` but the settings'
    model, once (and the entry points naming the settings module)."""
    readers = []
    for package in ("odds", "webapp"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                if ("os.environ" in line or "getenv(" in line) and "DJANGO_SETTINGS_MODULE" not in line:
                    readers.append(f"{path.relative_to(ROOT)}:{number}")
    assert [reader.rsplit(":", 1)[0] for reader in readers] == ["webapp/settings/env.py"]
    # That one line reads the whole environment into the site's checked model (SiteEnvironment).
    where, at = readers[0].rsplit(":", 1)
    line = (ROOT / where).read_text().splitlines()[int(at) - 1]
    assert "read(SiteEnvironment, os.environ" in line


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DJANGO_SECRET_KEY", "change-me-in-production"),
        ("METRICS_TOKEN", "change-me-in-production"),
        ("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me"),
        ("DJANGO_SECRET_KEY", "x" * 64),
        ("METRICS_TOKEN", "metrics-token-from-env"),
        ("METRICS_TOKEN", "0123012301230123"),
    ],
)
def test_production_refuses_a_published_or_weak_secret(name, value):
    result = run(["manage.py", "check"], {**PRODUCTION_ENV, name: value})
    assert result.returncode != 0
    assert name in result.stderr
    assert "placeholder" in result.stderr or "too weak" in result.stderr


@pytest.mark.parametrize("name", ["DJANGO_DEBUG", "SPORTSBOOK_DEMO"])
def test_production_refuses_debug_pages_and_demo_data(name):
    result = run(["manage.py", "check"], {**PRODUCTION_ENV, name: "true"})
    assert result.returncode != 0
    assert f"{name} must be off" in result.stderr


def test_development_serves_without_debug_pages_unless_asked():
    env = {"SPORTSBOOK_ENV": "development"}
    code = "import django; django.setup(); from django.conf import settings as s; print(s.DEBUG, s.DEMO)"
    assert run(["-c", code], env).stdout.split()[-2:] == ["False", "False"]
    asked = run(["-c", code], {**env, "DJANGO_DEBUG": "true", "SPORTSBOOK_DEMO": "1"})
    assert asked.stdout.split()[-2:] == ["True", "True"]
