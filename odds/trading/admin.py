"""Admin pages for traders: the catalogue (sports, competitions, events, markets, selections).
Thin: every change of state goes through a service, the same one the trading pages and the feed
call."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from odds.audit.admin import AuditedAdmin
from odds.catalogue.models import Competition, Event, Market, Selection, Sport
from odds.catalogue.selectors.results import market_result_choices
from odds.catalogue.services.markets import (
    MarketStateError,
    PriceChangeUnconfirmed,
    market_result,
    market_resume,
    market_settlement_request,
    market_suspend,
    selection_price_set,
)
from odds.core.admin import ReadOnlyAdmin
from odds.core.staff import RESULT_MARKETS, TRADE_MARKETS
from odds.trading.models import ExchangeRate
from odds.trading.selectors.trading import ResultImpact, market_open_bets_count, market_result_impact
from reducers.money import Amounts


@admin.register(Sport)
class SportAdmin(AuditedAdmin):
    list_display = ("name", "slug", "display_order", "in_play_delay_s")
    list_editable = ("in_play_delay_s",)
    search_fields = ("name",)


@admin.register(Competition)
class CompetitionAdmin(AuditedAdmin):
    list_display = ("name", "sport", "country")
    list_filter = ("sport",)
    search_fields = ("name",)


@admin.register(Event)
class EventAdmin(AuditedAdmin):
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
    """The impacts added up: bets, and stakes and payouts per currency and in the book's."""
    return {
        "bets": sum(impact.bets for impact in impacts),
        "stake": sum((impact.stake for impact in impacts), Amounts()),
        "payout": sum((impact.payout for impact in impacts), Amounts()),
        "stake_book": sum((impact.stake_book for impact in impacts), Decimal("0.00")),
        "payout_book": sum((impact.payout_book for impact in impacts), Decimal("0.00")),
    }


class SettleForm(forms.Form):
    """One choice per market: its result as its kind is entered (the winning selection, or the
    match's outcome for a kind whose selections win together), or void."""

    def __init__(self, *args: Any, markets: list[Market], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.markets = markets
        self.entries = {market.id: market_result_choices(market=market) for market in markets}
        for market in markets:
            choices = [(entry.key, entry.label) for entry in self.entries[market.id]]
            self.fields[f"winner_{market.id}"] = forms.ChoiceField(label=str(market), choices=choices)

    def results(self) -> list[tuple[Market, list[int] | None]]:
        chosen = []
        for market in self.markets:
            value = self.cleaned_data[f"winner_{market.id}"]
            entry = next(e for e in self.entries[market.id] if e.key == value)
            chosen.append((market, entry.winners))
        return chosen


@admin.register(Market)
class MarketAdmin(AuditedAdmin):
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

    def has_trade_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm(TRADE_MARKETS))

    def has_result_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm(RESULT_MARKETS))

    @admin.action(description="Suspend selected markets", permissions=["trade"])
    def suspend(self, request: HttpRequest, queryset: QuerySet[Market]) -> None:
        _each_market(self, request, queryset, market_suspend, "suspended")

    @admin.action(description="Resume selected markets", permissions=["trade"])
    def resume(self, request: HttpRequest, queryset: QuerySet[Market]) -> None:
        _each_market(self, request, queryset, market_resume, "resumed")

    @admin.action(description="Settle selected markets (choose the results)", permissions=["result"])
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
                (market_result_impact(market=market, winners=winners), market) for market, winners in form.results()
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
        return TemplateResponse(request, "admin/catalogue/market/settle.html", context)

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

    @admin.action(description="Run settlement again for resulted markets", permissions=["result"])
    def settle_again(self, request: HttpRequest, queryset: QuerySet[Market]) -> None:
        _each_market(self, request, queryset, market_settlement_request, "queued for settlement")


@admin.register(Selection)
class SelectionAdmin(AuditedAdmin):
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
            # The service audits the override itself (price_set), with the live price it replaced.
            if not request.user.has_perm(TRADE_MARKETS):
                self.message_user(request, f"Pricing needs the permission {TRADE_MARKETS}.", messages.ERROR)
                return
            try:
                selection_price_set(selection=obj, price=Decimal(form.cleaned_data["price"]), by=request.user)
            except MarketStateError as exc:
                self.message_user(request, str(exc), messages.ERROR)
            except PriceChangeUnconfirmed as exc:
                # The admin has no confirmation step: the trading page asks and applies it.
                self.message_user(request, f"Not applied: {exc.message} on the trading page.", messages.ERROR)


@admin.register(ExchangeRate)
class ExchangeRateAdmin(ReadOnlyAdmin):
    """The history of the exchange rates, read only: a rate is set on the desk's rates page
    (/trading/rates), which audits it and converts the books at it."""

    list_display = ("currency", "rate", "set_by", "set_at", "note")
    list_filter = ("currency",)
