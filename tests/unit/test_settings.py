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


def test_lag_objectives_are_read_per_query_and_a_malformed_one_is_named(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from webapp.settings.env import check, read
    from webapp.settings.ops import objectives

    monkeypatch.setenv("OBJECTIVES_PROBE", "prices=1.5, movers=60")
    assert objectives("OBJECTIVES_PROBE", "x=1") == {"prices": 1.5, "movers": 60.0}
    for bad in ("prices", "prices=fast", "prices=0", "=2"):
        monkeypatch.setenv("OBJECTIVES_PROBE", bad)
        monkeypatch.setattr(read, "problems", [])
        # Named when the settings finish loading, together with any other problem.
        objectives("OBJECTIVES_PROBE", "x=1")
        with pytest.raises(ImproperlyConfigured, match="OBJECTIVES_PROBE must be name=seconds pairs"):
            check()
