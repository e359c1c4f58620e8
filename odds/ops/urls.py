"""The operator pages (staff only) and the Prometheus scrape."""

from django.urls import path

from odds.ops.views import backups_page, dead_letters_page, lag_page, metrics

staff_urlpatterns = [
    path("ops/lag", lag_page, name="ops-lag"),
    path("ops/dead-letters", dead_letters_page, name="ops-dead-letters"),
    path("ops/backups", backups_page, name="ops-backups"),
]
# Token or loopback, not a staff session: Prometheus scrapes it.
scrape_urlpatterns = [path("metrics", metrics, name="metrics")]
