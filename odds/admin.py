"""Admin pages for traders and operators. Thin: every change of state goes through a service.

Money never moves from a form: wallets, ledger entries and bets are read-only here, and the
actions that change them (void a bet) call the same services as the API.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, URLResolver, path, reverse
from django.utils import timezone

from odds.api.http import id_from_text
from odds.models import (
    Bet,
    BetLeg,
    Competition,
    Event,
    LedgerEntry,
    Market,
    OutboxMessage,
    Selection,
    Sport,
    Wallet,
)
from odds.selectors.bets import wallets_with_ledger_balance
from odds.selectors.ops import channels_active
from odds.selectors.trading import ResultImpact, market_open_bets_count, market_result_impact
from odds.services.bets import bet_void
from odds.services.markets import (
    MarketStateError,
    market_result,
    market_resume,
    market_settlement_request,
    market_suspend,
    selection_price_set,
)
from odds.services.ops import channel_end
from odds.services.outbox import outbox_drain


class IdCheckedAdmin(admin.ModelAdmin):
    """Actions run only on a selection of ids: a selected value that is not an id (a form edited
    by hand) is refused with a message before the query, which would fail on it."""

    def response_action(
        self, request: HttpRequest, queryset: QuerySet[Any], *args: Any, **kwargs: Any
    ) -> HttpResponse | None:
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        if any(id_from_text(text=value) is None for value in selected):
            self.message_user(request, "The selection is not a list of row ids; nothing was changed.", messages.ERROR)
            return None
        return super().response_action(request, queryset, *args, **kwargs)


class ReadOnlyAdmin(IdCheckedAdmin):
    """Rows written only by services (ledger, outbox, bets): viewable, never edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Sport)
class SportAdmin(IdCheckedAdmin):
    list_display = ("name", "slug", "display_order", "in_play_delay_s")
    list_editable = ("in_play_delay_s",)
    search_fields = ("name",)


@admin.register(Competition)
class CompetitionAdmin(IdCheckedAdmin):
    list_display = ("name", "sport", "country")
    list_filter = ("sport",)
    search_fields = ("name",)


@admin.register(Event)
class EventAdmin(IdCheckedAdmin):
    list_display = ("__str__", "competition", "starts_at", "status", "home_score", "away_score", "clock")
    list_filter = ("status", "competition__sport", "competition")
    search_fields = ("home", "away", "competition__name")
    date_hierarchy = "starts_at"


class SelectionInline(admin.TabularInline):
    model = Selection
    extra = 0
    fields = ("name", "price", "status", "result", "display_order")
    # Prices change through the Selection page (a trader override goes to the price topic).
    readonly_fields = ("price", "status", "result")


def _each_market(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Market], change: Any, verb: str
) -> None:
    done = refused = 0
    for market in queryset:
        try:
            change(market=market, by=request.user)
            done += 1
        except MarketStateError as exc:
            refused += 1
            modeladmin.message_user(request, str(exc), messages.WARNING)
    if done:
        modeladmin.message_user(request, f"{done} market(s) {verb}.", messages.SUCCESS)


def _impact_totals(impacts: list[ResultImpact]) -> dict[str, Any]:
    return {
        "bets": sum(impact.bets for impact in impacts),
        "stake": sum((impact.stake for impact in impacts), Decimal("0.00")),
        "payout": sum((impact.payout for impact in impacts), Decimal("0.00")),
    }


class SettleForm(forms.Form):
    """One choice per market: the winning selection, or void."""

    VOID = "void"

    def __init__(self, *args: Any, markets: list[Market], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.markets = markets
        for market in markets:
            choices = [(str(s.id), s.name) for s in market.selections.all()] + [(self.VOID, "Void (refund all)")]
            self.fields[f"winner_{market.id}"] = forms.ChoiceField(label=str(market), choices=choices)

    def results(self) -> list[tuple[Market, list[int] | None]]:
        chosen = []
        for market in self.markets:
            value = self.cleaned_data[f"winner_{market.id}"]
            chosen.append((market, None if value == self.VOID else [int(value)]))
        return chosen


@admin.register(Market)
class MarketAdmin(IdCheckedAdmin):
    list_display = ("__str__", "kind", "status", "version", "event_status", "starts_at")
    list_filter = ("status", "kind", "event__status", "event__competition__sport")
    search_fields = ("name", "event__home", "event__away", "event__competition__name")
    list_select_related = ("event",)
    readonly_fields = ("status", "version")
    inlines = [SelectionInline]
    actions = ["suspend", "resume", "settle", "settle_again"]

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, dict[str, int], set[str], list[Any]]:
        """The delete confirmation also counts the open bets on the markets, and a market with
        open bets is refused in words (its bets must be settled or voided first)."""
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        markets = list(objs)
        open_bets = market_open_bets_count(market_ids=[market.id for market in markets])
        model_count["open bets affected"] = sum(open_bets.values())
        refusals = [
            f"{market} has {count} open bet{'s' if count != 1 else ''}: result and settle it, or void it, "
            "before deleting it."
            for market in markets
            if (count := open_bets.get(market.id, 0))
        ]
        if refusals:
            # The open bets are the reason in words, rather than the bet legs' delete permission.
            return deleted, model_count, set(), [*refusals, *protected]
        return deleted, model_count, perms_needed, protected

    @admin.display(description="Event status", ordering="event__status")
    def event_status(self, market: Market) -> str:
        return market.event.get_status_display()

    @admin.display(description="Starts", ordering="event__starts_at")
    def starts_at(self, market: Market) -> Any:
        return market.event.starts_at

    @admin.action(description="Suspend selected markets")
    def suspend(self, request: HttpRequest, queryset: QuerySet[Market]) -> None:
        _each_market(self, request, queryset, market_suspend, "suspended")

    @admin.action(description="Resume selected markets")
    def resume(self, request: HttpRequest, queryset: QuerySet[Market]) -> None:
        _each_market(self, request, queryset, market_resume, "resumed")

    @admin.action(description="Settle selected markets (choose the results)")
    def settle(self, request: HttpRequest, queryset: QuerySet[Market]) -> HttpResponse | None:
        """Three steps: choose each market's result, see what it does to the open bets (how many,
        their stakes, the payout, a warning for events not started), then confirm."""
        markets = list(queryset.select_related("event").prefetch_related("selections"))
        form = SettleForm(request.POST if "apply" in request.POST else None, markets=markets)
        impacts = None
        if "apply" in request.POST and form.is_valid():
            if request.POST.get("confirm") == "yes":
                self._settle(request, form)
                return None
            impacts = [
                (market_result_impact(market=market, winner_id=None if winners is None else winners[0]), market)
                for market, winners in form.results()
            ]
        context = {
            **self.admin_site.each_context(request),
            "title": "Confirm the results" if impacts is not None else "Settle markets",
            "form": form,
            "markets": markets,
            "impacts": impacts,
            "totals": _impact_totals([impact for impact, _ in impacts or []]),
            "opts": self.model._meta,
            "action_name": "settle",
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/odds/market/settle.html", context)

    def _settle(self, request: HttpRequest, form: SettleForm) -> None:
        settled = 0
        for market, winners in form.results():
            try:
                market_result(market=market, winners=winners, by=request.user)
                settled += 1
            except MarketStateError as exc:
                self.message_user(request, str(exc), messages.WARNING)
        if settled:
            self.message_user(request, f"{settled} market(s) resulted; their bets are being settled.", messages.SUCCESS)

    @admin.action(description="Run settlement again for resulted markets")
    def settle_again(self, request: HttpRequest, queryset: QuerySet[Market]) -> None:
        _each_market(self, request, queryset, market_settlement_request, "queued for settlement")


@admin.register(Selection)
class SelectionAdmin(IdCheckedAdmin):
    list_display = ("name", "market", "price", "status", "result")
    list_filter = ("status", "result", "market__kind", "market__status")
    search_fields = ("name", "market__name", "market__event__home", "market__event__away")
    list_select_related = ("market__event",)

    def get_readonly_fields(self, request: HttpRequest, obj: Selection | None = None) -> tuple[str, ...]:
        # Once a selection exists only its price is a trader's to change; results come from settling.
        if obj is not None:
            return ("market", "name", "status", "result", "display_order")
        return ()

    def save_model(self, request: HttpRequest, obj: Selection, form: forms.ModelForm, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        if "price" in form.changed_data:
            try:
                selection_price_set(selection=obj, price=Decimal(form.cleaned_data["price"]), by=request.user)
            except MarketStateError as exc:
                self.message_user(request, str(exc), messages.ERROR)


class BetLegInline(admin.TabularInline):
    model = BetLeg
    extra = 0
    fields = ("selection", "market", "event", "price", "price_seen", "result")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Bet)
class BetAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "kind", "status", "stake", "odds", "potential_return", "payout", "placed_at")
    list_filter = ("status", "kind", "price_policy", "reject_code", "placed_at")
    search_fields = ("=id", "user__username", "idempotency_key")
    list_select_related = ("user",)
    date_hierarchy = "placed_at"
    inlines = [BetLegInline]
    actions = ["void"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Viewing the change page and running actions need it; every field stays read-only.
        return bool(request.user.is_staff)

    def get_readonly_fields(self, request: HttpRequest, obj: Bet | None = None) -> list[str]:
        return [field.name for field in Bet._meta.fields]

    @admin.action(description="Void selected bets (refund the stake)")
    def void(self, request: HttpRequest, queryset: QuerySet[Bet]) -> HttpResponse | None:
        """Lists the bets and the stakes to refund first; voids only once that is confirmed."""
        bets = list(queryset.select_related("user").order_by("id"))
        if request.POST.get("confirm") != "yes":
            open_bets = [bet for bet in bets if bet.status == Bet.Status.ACCEPTED]
            context = {
                **self.admin_site.each_context(request),
                "title": "Void bets",
                "bets": bets,
                "open_bets": len(open_bets),
                "refund": sum((bet.stake for bet in open_bets), Decimal("0.00")),
                "opts": self.model._meta,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, "admin/odds/bet/void.html", context)
        voided = 0
        for bet in bets:
            if bet_void(bet=bet, by=request.user).status == Bet.Status.VOID and bet.status == Bet.Status.ACCEPTED:
                voided += 1
        self.message_user(request, f"{voided} bet(s) voided.", messages.SUCCESS)
        return None


@admin.register(BetLeg)
class BetLegAdmin(ReadOnlyAdmin):
    list_display = ("bet", "selection", "market", "price", "price_seen", "result")
    list_filter = ("result", "market__kind")
    search_fields = ("=bet__id", "selection__name", "market__event__home", "market__event__away")
    list_select_related = ("bet", "selection", "market")


@admin.register(Wallet)
class WalletAdmin(ReadOnlyAdmin):
    list_display = ("user", "currency", "balance", "ledger_balance", "reconciled", "updated_at")
    list_filter = ("currency",)
    search_fields = ("user__username", "user__email")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Wallet]:
        return wallets_with_ledger_balance()

    @admin.display(description="Ledger balance")
    def ledger_balance(self, wallet: Any) -> Decimal:
        return wallet.ledger_credits - wallet.ledger_debits

    @admin.display(description="Reconciled", boolean=True)
    def reconciled(self, wallet: Any) -> bool:
        return bool(wallet.ledger_credits - wallet.ledger_debits == wallet.balance)


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "wallet", "kind", "debit", "credit", "amount", "balance_after", "bet")
    list_filter = ("kind", "debit", "credit", "created_at")
    search_fields = ("wallet__user__username", "reference", "=bet__id")
    list_select_related = ("wallet__user", "bet")
    date_hierarchy = "created_at"


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
