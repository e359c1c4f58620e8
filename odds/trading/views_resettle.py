"""Correcting a settled market's result (docs/resettlement.md): the trader gives every selection
its corrected result, reads the preview of every amount that will move, and confirms it."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from odds.betting.services.resettlement import (
    REASON_MAX_LENGTH,
    RESULTS,
    Preview,
    ResettlementRefused,
    market_resettle,
    resettlement_preview,
)
from odds.catalogue.models import Market
from odds.core.staff import RESULT_MARKETS, staff_page
from reducers.money import money_text


def _results(market: Market, data) -> dict[int, str]:
    """The corrected result of each selection as the form sent it (``result_<id>``)."""
    return {s.id: data.get(f"result_{s.id}", "") for s in market.selections.all()}


def _totals_text(preview: Preview) -> list[tuple[str, str, str, str, str]]:
    return [
        (
            currency,
            money_text(sums["paid"], currency),
            money_text(sums["clawed_back"], currency),
            money_text(sums["owed"], currency),
            money_text(sums["held"], currency),
        )
        for currency, sums in sorted(preview.totals().items())
    ]


@staff_page(permission=RESULT_MARKETS)
@require_http_methods(["GET", "POST"])
def resettle_page(request: HttpRequest, market_id: int) -> HttpResponse:
    """GET: the form (with ``preview=1``, the preview of the corrected result and its confirm
    button). POST: the confirmation, applied only if the bets are as previewed."""
    market = get_object_or_404(Market.objects.select_related("event"), id=market_id)
    data = request.POST if request.method == "POST" else request.GET
    selections = list(market.selections.order_by("id"))
    asked = "preview" in data or request.method == "POST"
    results = _results(market, data) if asked else {s.id: s.result for s in selections}
    reason = " ".join(data.get("reason", "").split())[:REASON_MAX_LENGTH]
    preview, refusal, status = None, "", 200
    if request.method == "POST":
        if not reason:
            refusal, status = "say why the result is corrected: the punters' bets change", 400
        else:
            try:
                applied = market_resettle(
                    market_id=market.id, results=results, digest=data.get("digest", ""), by=request.user, reason=reason
                )
            except ResettlementRefused as exc:
                refusal, status = str(exc), 409 if "changed since" in str(exc) else 400
            else:
                moved = len(applied.moving)
                owed = [
                    money_text(sums["owed"], currency)
                    for currency, sums in sorted(applied.totals().items())
                    if sums["owed"] > 0
                ]
                messages.success(
                    request,
                    f"Resettled {market.name}: {moved} bet{'s' if moved != 1 else ''} moved"
                    + (f"; still owed by punters {', '.join(owed)}" if owed else "")
                    + ". The audit log has every amount.",
                )
                return redirect("trading-event", event_id=market.event_id)
    if asked:
        # Also after a refused confirmation: the preview as the bets are now.
        try:
            preview = resettlement_preview(market=market, results=results)
        except ResettlementRefused as exc:
            if not refusal:
                refusal, status = str(exc), 400
    elif market.status != Market.Status.SETTLED:
        refusal = f"{market.name} is {market.get_status_display().lower()}: only a settled market is resettled"
    return render(
        request,
        "odds/trading/resettle.html",
        {
            "market": market,
            "rows": [(s, s.result, results.get(s.id, "")) for s in selections],
            "choices": [(r.value, r.label) for r in RESULTS],
            "reason": reason,
            "reason_max": REASON_MAX_LENGTH,
            "preview": preview,
            "totals": _totals_text(preview) if preview else [],
            "refusal": refusal,
            "page": "markets",
        },
        status=status,
    )
