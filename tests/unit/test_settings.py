"""Production settings refuse to start without their required values."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def run_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # The settings of the surroundings left out (`make test` exports the Makefile's SPORTSBOOK_DEMO).
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_", "KAFKA_", "METRICS_", "EMAIL_"))
        and k not in ("SPORTSBOOK_DEMO", "SPORTSBOOK_ENV")
    }
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "webapp.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# The SMTP relay production requires (webapp/settings/email.py).
SMTP = {
    "EMAIL_HOST": "smtp.example",
    "EMAIL_HOST_USER": "sportsbook",
    "EMAIL_HOST_PASSWORD": secrets.token_urlsafe(24),
    "DEFAULT_FROM_EMAIL": "Sportsbook <no-reply@sportsbook.example>",
}


def test_production_without_a_secret_key_refuses_to_start():
    result = run_check({"SPORTSBOOK_ENV": "production"})
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_production_with_every_required_value_starts():
    result = run_check(
        {
            "SPORTSBOOK_ENV": "production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DATABASE_URL": "postgres://u:p@db:5432/sportsbook",
            "REDIS_URL": "redis://redis:6379/0",
            "KAFKA_BOOTSTRAP_SERVERS": "kafka:9092",
            "METRICS_TOKEN": secrets.token_urlsafe(32),
            "ALERTS_WEBHOOK_TOKEN": secrets.token_urlsafe(32),
            **SMTP,
        }
    )
    assert result.returncode == 0, result.stderr


def test_production_without_its_smtp_relay_names_each_missing_setting():
    result = run_check(
        {
            "SPORTSBOOK_ENV": "production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DATABASE_URL": "postgres://u:p@db:5432/sportsbook",
            "REDIS_URL": "redis://redis:6379/0",
            "KAFKA_BOOTSTRAP_SERVERS": "kafka:9092",
            "METRICS_TOKEN": secrets.token_urlsafe(32),
            "ALERTS_WEBHOOK_TOKEN": secrets.token_urlsafe(32),
        }
    )
    assert result.returncode != 0
    for name in SMTP:
        assert f"{name} must be set when SPORTSBOOK_ENV=production" in result.stderr


MAIL_SETTINGS = "s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT"


def test_development_sends_mail_by_smtp_to_the_mail_catcher():
    result = subprocess.run(
        [sys.executable, "-c", f"from django.conf import settings as s; print({MAIL_SETTINGS})"],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("EMAIL_", "MAILPIT_", "SPORTSBOOK_ENV"))},
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            "MAILPIT_SMTP_LISTEN": "127.0.0.1:2525",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.split() == ["django.core.mail.backends.smtp.EmailBackend", "127.0.0.1", "2525"]


def test_a_malformed_number_setting_is_named():
    result = run_check({"DATABASE_POOL_MAX": "many"})
    assert "DATABASE_POOL_MAX must be a whole number" in result.stderr


def test_lag_objectives_are_read_per_query_and_a_malformed_one_is_named():
    from django.core.exceptions import ImproperlyConfigured

    from webapp.settings.env import load

    assert load({"OPS_LAG_OBJECTIVES_S": "prices=1.5, movers=60"}).ops_lag_objectives_s == {
        "prices": 1.5,
        "movers": 60.0,
    }
    for bad in ("prices", "prices=fast", "prices=0", "=2"):
        # Named together with any other problem.
        with pytest.raises(ImproperlyConfigured) as caught:
            load({"OPS_LAG_OBJECTIVES_S": bad, "WEB_PORT": "0"})
        assert f"OPS_LAG_OBJECTIVES_S must be name=seconds pairs separated by commas, got {bad!r}" in str(caught.value)
        assert "WEB_PORT must be a whole number of at least 1, got '0'" in str(caught.value)


def test_the_site_defaults_are_the_development_ones():
    from webapp.settings.env import load

    env = load({})
    assert env.environment == "development"
    assert env.secret_key == "dev-only-insecure-key-change-me"
    assert env.debug is False
    assert env.allowed_hosts == ["127.0.0.1", "localhost"]
    assert env.redis_url == "redis://127.0.0.1:6379/0"
    assert env.database_url == "postgres://sportsbook:sportsbook@127.0.0.1:5432/sportsbook"
    assert env.web_port == 8000
    assert env.web_open_files == 65_536
    assert env.stream_keepalive_s == 30
    assert env.live_price_max_age_s == 15.0
    assert env.email_host == "127.0.0.1"
    assert env.email_port == 1025
    assert env.email_use_tls is False
    assert env.whitenoise_use_finders is True
    assert env.prometheus_url == "http://127.0.0.1:9090"
    assert env.ops_latency_objectives_s == {"placement": 0.25, "frame": 1.0}
    assert env.ws_connection_cap_exempt_ips == ["127.0.0.1", "::1"]


def test_defaults_follow_the_settings_they_are_made_from():
    from webapp.settings.env import load

    env = load({"MAILPIT_SMTP_LISTEN": "10.0.0.5:2525", "STREAM_IDLE_EXPIRY_S": "2", "PROMETHEUS_LISTEN": "p:9"})
    assert (env.email_host, env.email_port) == ("10.0.0.5", 2525)
    assert env.stream_keepalive_s == 1
    assert env.prometheus_url == "http://p:9"


def test_every_problem_of_the_site_is_named_at_once_by_its_variable():
    from django.core.exceptions import ImproperlyConfigured

    from webapp.settings.env import load

    with pytest.raises(ImproperlyConfigured) as caught:
        load(
            {
                "SPORTSBOOK_ENV": "production",
                "DJANGO_SECRET_KEY": "change-me",
                "WS_MAX_FRAMES_PER_S": "twenty",
                "WEB_OPEN_FILES": "100",
                "LIVE_PRICE_MAX_AGE_S": "-1",
                "PRICE_CHANGE_CONFIRM_RATIO": "1",
                "BET_FAST_PATH": "perhaps",
                "EMAIL_USE_TLS": "on",
                "EMAIL_USE_SSL": "on",
                "SPORTSBOOK_DEMO": "yes",
                "REDIS_URL": "redis+sentinel://127.0.0.1:26379",
            }
        )
    message = str(caught.value)
    assert message.startswith("the site's configuration is not usable:\n  ")
    for line in (
        "DJANGO_SECRET_KEY is a published placeholder; set a random secret",
        "WS_MAX_FRAMES_PER_S must be a whole number of at least 0, got 'twenty'",
        "WEB_OPEN_FILES must be a whole number of at least 1024, got '100'",
        "LIVE_PRICE_MAX_AGE_S must be a number of seconds, 0 or more, got '-1'",
        "PRICE_CHANGE_CONFIRM_RATIO must be a number above 1, got '1'",
        "BET_FAST_PATH must be true or false, got 'perhaps'",
        "EMAIL_USE_SSL and EMAIL_USE_TLS are exclusive",
        "SPORTSBOOK_DEMO must be off when SPORTSBOOK_ENV=production",
        "REDIS_URL: ",
        # Unset in production: no development default.
        "DATABASE_URL must be set when SPORTSBOOK_ENV=production",
        "KAFKA_BOOTSTRAP_SERVERS must be set when SPORTSBOOK_ENV=production",
        "METRICS_TOKEN must be set when SPORTSBOOK_ENV=production",
        "EMAIL_HOST must be set when SPORTSBOOK_ENV=production",
        "EMAIL_HOST_USER must be set when SPORTSBOOK_ENV=production",
        "EMAIL_HOST_PASSWORD must be set when SPORTSBOOK_ENV=production",
        "DEFAULT_FROM_EMAIL must be set when SPORTSBOOK_ENV=production",
        "ALERTS_WEBHOOK_TOKEN must be set when SPORTSBOOK_ENV=production",
    ):
        assert f"\n  {line}" in message
    # Each problem once, on a line of its own: nothing but the problems follows the heading.
    assert len(message.splitlines()) == 1 + 17


def test_an_empty_variable_counts_as_unset():
    from django.core.exceptions import ImproperlyConfigured

    from webapp.settings.env import load

    assert load({"WEB_PORT": ""}).web_port == 8000
    with pytest.raises(ImproperlyConfigured, match="KAFKA_BOOTSTRAP_SERVERS must be set"):
        load({"SPORTSBOOK_ENV": "production", "KAFKA_BOOTSTRAP_SERVERS": ""})
