"""The operator pages (staff only), the Prometheus scrape and Alertmanager's webhook."""

from django.urls import path

from odds.ops.views import (
    alerts_webhook,
    backups_page,
    dead_letters_act,
    dead_letters_page,
    healthz_detail,
    incident_acknowledge_view,
    incident_resolve_view,
    lag_page,
    metrics,
    oncall_page,
)

staff_urlpatterns = [
    path("ops/lag", lag_page, name="ops-lag"),
    path("ops/oncall", oncall_page, name="ops-oncall"),
    path("ops/oncall/<int:incident_id>/acknowledge", incident_acknowledge_view, name="ops-incident-acknowledge"),
    path("ops/oncall/<int:incident_id>/resolve", incident_resolve_view, name="ops-incident-resolve"),
    path("ops/dead-letters", dead_letters_page, name="ops-dead-letters"),
    path("ops/backups", backups_page, name="ops-backups"),
    path("ops/dead-letters/act", dead_letters_act, name="ops-dead-letters-act"),
]
# Token or loopback, not a staff session: Prometheus scrapes /metrics, Alertmanager posts alerts,
# monitoring reads the health detail (a staff session may too).
scrape_urlpatterns = [
    path("metrics", metrics, name="metrics"),
    path("ops/alerts/webhook", alerts_webhook, name="ops-alerts-webhook"),
    path("healthz/detail", healthz_detail, name="healthz-detail"),
]
