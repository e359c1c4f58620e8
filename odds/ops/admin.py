"""Admin pages for operators: the outbox to Kafka, the incidents and the dead-letter replays and
discards (read only: the on-call and dead-letter pages act on them), and the live subscriber
channels (a page of the admin site with no model behind it)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, URLResolver, path, reverse
from django.utils import timezone

from odds.core.admin import ReadOnlyAdmin
from odds.core.outbox import outbox_drain
from odds.models import OutboxMessage
from odds.ops.models import DeadLetterAction, Incident
from odds.ops.selectors.ops import channels_active
from odds.trading.services.operations import channel_end


@admin.register(Incident)
class IncidentAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "alertname",
        "severity",
        "status",
        "starts_at",
        "acknowledged_by",
        "resolved_by",
        "resolved_at",
    )
    list_filter = ("status", "severity", "alertname")
    search_fields = ("alertname", "summary")


@admin.register(DeadLetterAction)
class DeadLetterActionAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "by", "kind", "source", "reason", "selected", "handled", "refused", "note")
    list_filter = ("kind", "source")
    search_fields = ("reason", "note")


class PendingFilter(admin.SimpleListFilter):
    title = "delivery"
    parameter_name = "delivery"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("pending", "Pending"), ("sent", "Sent")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[OutboxMessage]) -> QuerySet[OutboxMessage]:
        if self.value() == "pending":
            return queryset.filter(sent_at__isnull=True)
        if self.value() == "sent":
            return queryset.filter(sent_at__isnull=False)
        return queryset


@admin.register(OutboxMessage)
class OutboxMessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "topic", "key_text", "tombstone", "created_at", "sent_at", "attempts", "last_error")
    list_filter = (PendingFilter, "topic")
    search_fields = ("topic", "last_error")
    actions = ["relay_now"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_staff)

    def get_readonly_fields(self, request: HttpRequest, obj: OutboxMessage | None = None) -> list[str]:
        return [field.name for field in OutboxMessage._meta.fields]

    @admin.display(description="Key")
    def key_text(self, message: OutboxMessage) -> str:
        return bytes(message.key).decode(errors="replace")

    @admin.display(description="Tombstone", boolean=True)
    def tombstone(self, message: OutboxMessage) -> bool:
        return message.value is None

    @admin.action(description="Relay pending records now")
    def relay_now(self, request: HttpRequest, queryset: QuerySet[OutboxMessage]) -> None:
        result = outbox_drain(budget_s=10)
        level = messages.WARNING if result.failed or result.busy else messages.SUCCESS
        note = " (another relay was busy)" if result.busy else ""
        self.message_user(request, f"{result.sent} sent, {result.failed} failed{note}.", level)


def subscriptions_admin_view(request: HttpRequest) -> HttpResponse:
    """Live subscriber channels (they live in Redis, not in a model), filtered by owner; ending
    one asks for confirmation and goes through the same service as the trading page."""
    owner = request.GET.get("owner", "").strip()[:150]
    channel = request.POST.get("channel", "") or request.GET.get("end", "")
    if request.method == "POST" and request.POST.get("confirm") == "yes" and channel:
        if channel_end(channel_id=channel, by=request.user):
            messages.success(request, f"Channel {channel} ended; its owner's page is told it ended.")
        else:
            messages.error(request, f"Channel {channel} is not live any more; nothing was ended.")
        return HttpResponseRedirect(reverse("admin:subscriptions"))
    rows = channels_active()
    now_ms = int(timezone.now().timestamp() * 1000)
    for row in rows:
        row["age_s"] = max(0, (now_ms - row["created"]) // 1000) if row["created"] else None
    owners = sorted({row["user"] for row in rows})
    confirming = next((row for row in rows if row["channel"] == channel), None) if channel else None
    if owner:
        rows = [row for row in rows if row["user"] == owner]
    context = {
        **admin.site.each_context(request),
        "title": "Subscriptions",
        "rows": rows,
        "owners": owners,
        "owner": owner,
        "confirming": confirming,
        "missing": bool(channel) and confirming is None,
    }
    return TemplateResponse(request, "admin/odds/subscriptions.html", context)


_site_urls = admin.site.get_urls


def _site_urls_with_subscriptions() -> list[URLResolver | URLPattern]:
    return [
        path("subscriptions/", admin.site.admin_view(subscriptions_admin_view), name="subscriptions"),
        *_site_urls(),
    ]


# The admin site has no model for subscriptions; its page is added to the site's own URLs.
admin.site.get_urls = _site_urls_with_subscriptions  # type: ignore[method-assign]
