"""Admin pages for bets and wallets. Money never moves from a form: wallets, ledger entries and
bets are read-only here, and the actions that change them (void a bet) call the same services as
the API."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from odds.betting.models import Bet, BetLeg, LedgerEntry, OwedClaim, Wallet
from odds.betting.selectors.bets import wallets_with_ledger_balance
from odds.betting.services.bets import bet_void
from odds.core.admin import ReadOnlyAdmin
from odds.core.staff import VOID_BETS
from reducers.money import Amounts


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

    def has_void_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm(VOID_BETS))

    @admin.action(description="Void selected bets (refund the stake)", permissions=["void"])
    def void(self, request: HttpRequest, queryset: QuerySet[Bet]) -> HttpResponse | None:
        """Lists the bets and the stakes to refund first; voids only once that is confirmed."""
        bets = list(queryset.select_related("user__wallet").order_by("id"))
        if request.POST.get("confirm") != "yes":
            open_bets = [bet for bet in bets if bet.status == Bet.Status.ACCEPTED]
            # Each punter's stake back in their wallet's currency: the refund per currency.
            refund = Amounts()
            for bet in open_bets:
                refund.add(bet.stake, bet.user.wallet.currency)
            context = {
                **self.admin_site.each_context(request),
                "title": "Void bets",
                "bets": bets,
                "open_bets": len(open_bets),
                "refund": refund,
                "opts": self.model._meta,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, "admin/betting/bet/void.html", context)
        voided = 0
        reason = request.POST.get("reason", "")
        for bet in bets:
            done = bet_void(bet=bet, by=request.user, reason=reason)
            if done.status == Bet.Status.VOID and bet.status == Bet.Status.ACCEPTED:
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
    list_display = ("user", "currency", "balance", "owed", "ledger_balance", "reconciled", "updated_at")
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


@admin.register(OwedClaim)
class OwedClaimAdmin(ReadOnlyAdmin):
    """What corrected results left punters owing (docs/resettlement.md): recovered by the ledger
    from their next credits, never edited here."""

    list_display = ("id", "created_at", "wallet", "bet", "amount", "outstanding", "recovered_at", "reference")
    list_filter = (("recovered_at", admin.EmptyFieldListFilter),)
    search_fields = ("wallet__user__username", "=bet__id", "reference")
    list_select_related = ("wallet__user", "bet")


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "wallet", "kind", "debit", "credit", "amount", "balance_after", "bet")
    list_filter = ("kind", "debit", "credit", "created_at")
    search_fields = ("wallet__user__username", "reference", "=bet__id")
    list_select_related = ("wallet__user", "bet")
    date_hierarchy = "created_at"
