"""/metrics as Prometheus reads it: the real exposition passes `promtool check metrics`, and each
latency histogram is cumulative and adds up what every recording process observed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from reducers.latency import BUCKET_FIELDS, STAGES
from tests.conftest import ROOT
from tests.promtool import promtool_check

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# A second process recording what an operator's browser measured, as another web worker would.
RECORD_ELSEWHERE = (
    "import django; django.setup(); "
    "from odds.core.metrics import browser_latency_record; "
    "browser_latency_record(samples=[{'e2e': 2500.0, 'ws': 900.0}])"
)


def _scrape(client) -> bytes:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    assert response["Content-Type"] == CONTENT_TYPE_LATEST
    return response.content


def _latency(exposition: bytes) -> dict[str, dict[str, float]]:
    """Per stage: each bucket's cumulative count by ``le``, and ``sum`` and ``count``."""
    result: dict[str, dict[str, float]] = {}
    for family in text_string_to_metric_families(exposition.decode()):
        if family.name != "sportsbook_latency_seconds":
            continue
        for sample in family.samples:
            figures = result.setdefault(sample.labels["stage"], {})
            if sample.name.endswith("_bucket"):
                figures[sample.labels["le"]] = sample.value
            else:
                figures[sample.name.rsplit("_", 1)[1]] = sample.value
    return result


def test_the_real_metrics_pass_promtool_check_after_latencies_were_recorded(
    staff_client, settings, kafka_topics, redis_client
):
    settings.METRICS_TOKEN = ""
    samples = {"samples": [{"e2e": 95.5, "ws": 7.25}, {"e2e": 1200, "ws": 40}]}
    response = staff_client.post("/ops/api/latency", samples, content_type="application/json")
    assert response.status_code == 202, response.content
    exposition = _scrape(staff_client)
    assert _latency(exposition)["browser"]["count"] >= 2
    checked = promtool_check(exposition)
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "", "")


def test_every_stage_is_a_cumulative_histogram_whose_inf_bucket_is_its_count(client, settings, kafka_topics):
    settings.METRICS_TOKEN = ""
    latency = _latency(_scrape(client))
    assert set(latency) == set(STAGES)
    for stage, figures in latency.items():
        counts = [figures[le] for le in BUCKET_FIELDS]
        assert counts == sorted(counts), stage
        assert figures["+Inf"] == figures["count"], stage


def test_count_sum_and_buckets_add_up_what_two_processes_recorded(client, settings, kafka_topics, redis_client):
    from odds.core.metrics import browser_latency_record

    settings.METRICS_TOKEN = ""
    before = _latency(_scrape(client))
    browser_latency_record(samples=[{"e2e": 12.0, "ws": 3.0}, {"e2e": 480.0}])
    elsewhere = subprocess.run(
        [sys.executable, "-c", RECORD_ELSEWHERE],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert elsewhere.returncode == 0, elsewhere.stderr
    after = _latency(_scrape(client))

    def added(stage: str, figure: str) -> float:
        return after[stage][figure] - before[stage][figure]

    assert added("browser", "count") == 3
    assert added("browser", "sum") == pytest.approx(0.012 + 0.480 + 2.5, abs=1e-6)
    assert (added("browser", "0.01"), added("browser", "0.025"), added("browser", "0.5")) == (0, 1, 2)
    assert (added("browser", "2.5"), added("browser", "+Inf")) == (3, 3)
    assert added("websocket", "count") == 2
    assert added("websocket", "sum") == pytest.approx(0.003 + 0.9, abs=1e-6)
    assert (added("websocket", "0.0025"), added("websocket", "0.005"), added("websocket", "1.0")) == (0, 1, 2)
