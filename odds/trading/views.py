"""Trader pages under /trading/: market management, liability, subscriptions, settlement
progress. Staff only: anonymous visitors are sent to the login page, other users get 403."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from odds.audit.models import AuditEntry
from odds.audit.selectors.audit import AuditFilters, audit_actors, audit_csv_lines, audit_entries
from odds.betting.models import Bet
from odds.betting.services.bets import bet_void
from odds.catalogue.models import Competition, Event, Market, Selection
from odds.catalogue.selectors.catalogue import boards_attach
from odds.catalogue.selectors.results import market_entered_by_outcome, market_result_choices
from odds.catalogue.services.markets import (
    MarketStateError,
    PriceChangeUnconfirmed,
    competition_markets_resume,
    competition_markets_suspend,
    event_markets_resume,
    event_markets_suspend,
    market_margin_set,
    market_result,
    market_resume,
    market_settlement_request,
    market_suspend,
    selection_price_set,
)
from odds.core.staff import (
    CREATE_EVENTS,
    RESULT_MARKETS,
    SET_EXCHANGE_RATES,
    TRADE_MARKETS,
    VIEW_AUDIT,
    VOID_BETS,
    staff_page,
)
from odds.core.text import DECIMAL_MAX_LENGTH, DECIMAL_TEXT, id_from_text
from odds.trading.selectors.desk import desk_movers, desk_risk_books, desk_sports, desk_ticker
from odds.trading.selectors.rates import exchange_rate_history, exchange_rates_current
from odds.trading.selectors.trading import (
    MARKET_STATUS_FILTERS,
    SEARCH_MAX_LENGTH,
    EventFilters,
    event_open_bets,
    market_result_impact,
    markets_live_attach,
    trading_event,
    trading_events_page,
    trading_filter_choices,
    trading_market,
    trading_market_query,
)
from odds.trading.services.operations import event_create
from odds.trading.services.rates import exchange_rate_set
from reducers.market_kinds import SPORTS, offered_kinds
from reducers.money import money_text
from reducers.rates import RateRefused, rate_check
from reducers.rules import BOOK_CURRENCY, CURRENCY_SYMBOLS
from reducers.schemas import MAX_PRICE, MIN_PRICE
from reducers.trading import margin_from_percent

# The sports a trader's new event may be of, and the markets each opens with (reducers/market_kinds.py).
TEMPLATE_SPORTS = {slug: sport.name for slug, sport in SPORTS.items()}
TEMPLATE_MARKETS = {sport.name: offered_kinds(slug) for slug, sport in SPORTS.items()}

PRICE_REFUSED = (
    f"not a valid price: enter odds from {MIN_PRICE} to {MAX_PRICE:f} with at most two decimals, such as 2.50"
)


class EventCreateForm(forms.Form):
    """The new-event form: lengths are the columns' own, and Django's text fields refuse NUL
    characters, which PostgreSQL cannot store (the insert would fail)."""

    sport = forms.ChoiceField(choices=list(TEMPLATE_SPORTS.items()))
    competition = forms.CharField(max_length=Competition._meta.get_field("name").max_length)
    home = forms.CharField(max_length=Event._meta.get_field("home").max_length)
    away = forms.CharField(max_length=Event._meta.get_field("away").max_length)
    starts_at = forms.DateTimeField()


def _filters(request: HttpRequest) -> EventFilters:
    """The search and filters of the markets page, from its query string (bad values are ignored)."""
    query = request.GET
    status = query.get("status", "active")
    return EventFilters(
        q=query.get("q", "")[:SEARCH_MAX_LENGTH],
        sport=query.get("sport", "")[:64],
        competition=id_from_text(text=query.get("competition", "")),
        status=status if status in MARKET_STATUS_FILTERS else "active",
        in_play=query.get("in_play") == "1",
        soon=query.get("soon") == "1",
    )


def _markets(request: HttpRequest, *, form: EventCreateForm | None = None, status: int = 200) -> HttpResponse:
    filters = _filters(request)
    page = trading_events_page(filters=filters, page_number=id_from_text(text=request.GET.get("page", "")) or 1)
    params = request.GET.copy()
    params.pop("page", None)
    events = list(page.object_list)
    boards_attach(events=events, layout="row")
    markets_live_attach(markets=[market for event in events for market in event.markets.all()])
    return render(
        request,
        "odds/trading/markets.html",
        {
            "events": events,
            "events_page": page,
            "filters": filters,
            "choices": trading_filter_choices(),
            "statuses": list(MARKET_STATUS_FILTERS),
            "query_without_page": params.urlencode(),
            "sports": TEMPLATE_SPORTS,
            "templates": TEMPLATE_MARKETS,
            "page": "markets",
            "form": form,
        },
        status=status,
    )


def _refused(request: HttpRequest, message: str, *, form: EventCreateForm | None = None) -> HttpResponse:
    """A form that cannot be acted on: the markets page again, the error in words, HTTP 400."""
    if _wants_json(request):
        return JsonResponse({"ok": False, "message": message}, status=400)
    messages.error(request, message)
    return _markets(request, form=form, status=400)


def _wants_json(request: HttpRequest) -> bool:
    """An action sent by the page's script (which keeps the page), not by a plain form post."""
    return "application/json" in request.headers.get("Accept", "")


@staff_page
def markets_page(request: HttpRequest) -> HttpResponse:
    return _markets(request)


@staff_page
def event_page(request: HttpRequest, event_id: int) -> HttpResponse:
    try:
        event = trading_event(event_id=event_id)
    except Event.DoesNotExist as exc:
        raise Http404("no such event") from exc
    boards_attach(events=[event], layout="head")
    markets_live_attach(markets=event.markets.all())
    return render(
        request,
        "odds/trading/event.html",
        {"event": event, "open_bets": event_open_bets(event_id=event.id), "page": "markets"},
    )


@staff_page(permission=CREATE_EVENTS)
@require_POST
def event_create_view(request: HttpRequest) -> HttpResponse:
    form = EventCreateForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in form.errors.items())
        return _refused(request, f"Event not created: {problems}", form=form)
    starts_at = form.cleaned_data["starts_at"]
    if timezone.is_naive(starts_at):
        starts_at = timezone.make_aware(starts_at)
    try:
        event = event_create(
            sport=form.cleaned_data["sport"],
            competition=form.cleaned_data["competition"],
            home=form.cleaned_data["home"],
            away=form.cleaned_data["away"],
            starts_at=starts_at,
            by=request.user,
        )
    except ValueError as exc:
        return _refused(request, f"Event not created: {exc}", form=form)
    messages.success(request, f"Created {event.name} with {event.markets.count()} markets")
    return redirect("trading-markets")


def next_url(request: HttpRequest, *, default: str) -> str:
    """Where to go after a staff action: the ``next`` the form sent when it is a path on this
    site, else ``default`` (a ``next`` of another host would make the page an open redirect)."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


class InputRefused(Exception):
    """A form value that cannot be read (a selection that is not an id, a price that is not a
    decimal): answered as a 400 with the markets page, before any lookup."""


def _market_action(request: HttpRequest, market_id: int, action: Callable[[Market], str]) -> HttpResponse:
    """Run a trader action on a market. A script gets JSON with the message and the market's row
    as it is now (to replace in place); a plain form is redirected back to where it came from."""
    market = get_object_or_404(Market, id=market_id)
    status = 200
    try:
        message, ok = action(market), True
    except InputRefused as exc:
        if not _wants_json(request):
            return _refused(request, str(exc))
        message, ok, status = str(exc), False, 400
    except MarketStateError as exc:
        message, ok, status = str(exc), False, 409
    except PriceChangeUnconfirmed as exc:
        return _price_confirm(request, market, exc)
    if _wants_json(request):
        back = next_url(request, default=reverse("trading-markets"))
        shown = trading_market(market_id=market_id)
        markets_live_attach(markets=[shown])
        row = render_to_string("odds/trading/_market.html", {"market": shown, "next": back}, request=request)
        return JsonResponse({"ok": ok, "message": message, "row": row}, status=status)
    (messages.success if ok else messages.error)(request, message)
    back = next_url(request, default=reverse("trading-markets"))
    return redirect(f"{back}#market-{market_id}" if "#" not in back else back)


NOTE_MAX_LENGTH = 500


def _scope_action(
    request: HttpRequest, *, act: Callable[..., list[Market]], verb: str, scope: Event | Competition
) -> HttpResponse:
    """An event- or competition-wide action (``act`` given the scope by its kind's name, the
    trader and the note), then back where the trader came from, with a message naming how many
    markets moved."""
    note = request.POST.get("note", "")[:NOTE_MAX_LENGTH]
    moved = act(**{"event" if isinstance(scope, Event) else "competition": scope}, by=request.user, note=note)
    count = len(moved)
    if count:
        messages.success(request, f"{verb.capitalize()} {count} market{'s' if count != 1 else ''} of {scope}")
    else:
        messages.info(request, f"No market of {scope} could be {verb}")
    return redirect(next_url(request, default=reverse("trading-markets")))


@staff_page(permission=TRADE_MARKETS)
@require_POST
def event_suspend_view(request: HttpRequest, event_id: int) -> HttpResponse:
    event = get_object_or_404(Event.objects.select_related("competition"), id=event_id)
    return _scope_action(request, act=event_markets_suspend, verb="suspended", scope=event)


@staff_page(permission=TRADE_MARKETS)
@require_POST
def event_resume_view(request: HttpRequest, event_id: int) -> HttpResponse:
    event = get_object_or_404(Event.objects.select_related("competition"), id=event_id)
    return _scope_action(request, act=event_markets_resume, verb="resumed", scope=event)


@staff_page(permission=TRADE_MARKETS)
@require_POST
def competition_suspend_view(request: HttpRequest, competition_id: int) -> HttpResponse:
    competition = get_object_or_404(Competition, id=competition_id)
    return _scope_action(request, act=competition_markets_suspend, verb="suspended", scope=competition)


@staff_page(permission=TRADE_MARKETS)
@require_POST
def competition_resume_view(request: HttpRequest, competition_id: int) -> HttpResponse:
    competition = get_object_or_404(Competition, id=competition_id)
    return _scope_action(request, act=competition_markets_resume, verb="resumed", scope=competition)


def _selection_id(raw: str, *, what: str) -> int:
    value = id_from_text(text=raw)
    if value is None:
        raise InputRefused(f"{what} must be a selection of this market, not {raw[:40]!r}")
    return value


def _price(raw: str) -> Decimal:
    raw = raw.strip()
    if len(raw) > DECIMAL_MAX_LENGTH or not DECIMAL_TEXT.fullmatch(raw):
        raise InputRefused(PRICE_REFUSED)
    price = Decimal(raw)
    exponent = price.as_tuple().exponent
    if price < MIN_PRICE or price > MAX_PRICE or (isinstance(exponent, int) and exponent < -2):
        raise InputRefused(PRICE_REFUSED)
    return price


@staff_page(permission=TRADE_MARKETS)
@require_POST
def market_suspend_view(request: HttpRequest, market_id: int) -> HttpResponse:
    def act(market: Market) -> str:
        market_suspend(market=market, by=request.user)
        return f"Suspended {market}"

    return _market_action(request, market_id, act)


@staff_page(permission=TRADE_MARKETS)
@require_POST
def market_resume_view(request: HttpRequest, market_id: int) -> HttpResponse:
    def act(market: Market) -> str:
        market_resume(market=market, by=request.user)
        return f"Resumed {market}"

    return _market_action(request, market_id, act)


def _price_confirm(request: HttpRequest, market: Market, unconfirmed: PriceChangeUnconfirmed) -> HttpResponse:
    """The fat-finger question: the script gets it as JSON (``confirm``) and asks beside the field;
    a plain form gets a page with the change and a button that applies it."""
    if _wants_json(request):
        return JsonResponse(
            {"ok": False, "confirm": True, "message": unconfirmed.message, "price": str(unconfirmed.price)}, status=409
        )
    return render(
        request,
        "odds/trading/price_confirm.html",
        {
            "market": market,
            "unconfirmed": unconfirmed,
            "next": next_url(request, default=reverse("trading-event", kwargs={"event_id": market.event_id})),
            "page": "markets",
        },
        status=409,
    )


@staff_page(permission=TRADE_MARKETS)
@require_POST
def selection_price_view(request: HttpRequest, market_id: int) -> HttpResponse:
    """Set a selection's price; one beyond the fat-finger ratio of the live price is applied only
    when the post says ``confirm=yes`` (after the trader was asked)."""

    def act(market: Market) -> str:
        selection_id = _selection_id(request.POST.get("selection_id", ""), what="the selection")
        price = _price(request.POST.get("price", ""))
        selection = get_object_or_404(Selection, id=selection_id, market=market)
        confirmed = request.POST.get("confirm") == "yes"
        try:
            updated = selection_price_set(selection=selection, price=price, by=request.user, confirmed=confirmed)
        except ValueError as exc:
            raise InputRefused(PRICE_REFUSED) from exc
        return f"{updated.name} priced at {updated.price}"

    return _market_action(request, market_id, act)


@staff_page(permission=TRADE_MARKETS)
@require_POST
def market_margin_view(request: HttpRequest, market_id: int) -> HttpResponse:
    """Set the market's margin as a percentage (empty: the pricing model's own); the feed prices
    the market's next book with it."""

    def act(market: Market) -> str:
        try:
            margin = margin_from_percent(request.POST.get("margin", "")[:40])
        except ValueError as exc:
            raise InputRefused(str(exc)) from exc
        note = request.POST.get("note", "")[:NOTE_MAX_LENGTH]
        market_margin_set(market=market, margin=margin, by=request.user, reason=note)
        if margin is None:
            return f"{market.name}: margin back to the pricing model's own"
        return f"{market.name}: margin {margin * 100:.2f} %, on its next prices"

    return _market_action(request, market_id, act)


def _winners(market: Market, raw: str) -> list[int] | None:
    """The winning selections' ids, or None for "void". A market resulted by the match outcome
    takes ``home``, ``draw`` or ``away``; any other takes its winning selection's id, and a value
    that is not a selection of this market is refused (not an id) or not found (another market's
    selection)."""
    if raw == "void":
        return None
    if market_entered_by_outcome(market=market):
        entry = next((c for c in market_result_choices(market=market) if c.key == raw), None)
        if entry is None:
            raise InputRefused(f"the result must be one of the match's outcomes, not {raw[:40]!r}")
        return entry.winners
    winner_id = _selection_id(raw, what="the winner")
    return [get_object_or_404(Selection, id=winner_id, market=market).id]


def _confirm(request: HttpRequest, market: Market, *, action: str, winner: str) -> HttpResponse:
    """The confirmation step of a result or a settlement: the bets it settles and what they pay."""
    winners = _winners(market, winner) if action == "result" else None
    impact = market_result_impact(market=market, winners=winners)
    return render(
        request,
        "odds/trading/confirm.html",
        {
            "market": market,
            "action": action,
            "winner": winner,
            "impact": impact,
            "next": next_url(request, default=reverse("trading-event", kwargs={"event_id": market.event_id})),
            "page": "markets",
        },
    )


@staff_page(permission=RESULT_MARKETS)
def market_result_confirm_view(request: HttpRequest, market_id: int) -> HttpResponse:
    market = get_object_or_404(trading_market_query(), id=market_id)
    try:
        return _confirm(request, market, action="result", winner=request.GET.get("winner", ""))
    except InputRefused as exc:
        return _refused(request, str(exc))


@staff_page(permission=RESULT_MARKETS)
def market_settle_confirm_view(request: HttpRequest, market_id: int) -> HttpResponse:
    market = get_object_or_404(trading_market_query(), id=market_id)
    return _confirm(request, market, action="settle", winner="")


@staff_page(permission=RESULT_MARKETS)
@require_POST
def market_result_view(request: HttpRequest, market_id: int) -> HttpResponse:
    """Result a market once the trader has seen and confirmed its impact (``confirm=yes``); a
    post without it shows the confirmation step instead."""
    market = get_object_or_404(trading_market_query(), id=market_id)
    winner = request.POST.get("winner", "")
    try:
        winners = _winners(market, winner)
        if request.POST.get("confirm") != "yes":
            return _confirm(request, market, action="result", winner=winner)
        market_result(market=market, winners=winners, by=request.user)
    except InputRefused as exc:
        return _refused(request, str(exc))
    except MarketStateError as exc:
        messages.error(request, str(exc))
        return redirect(next_url(request, default=reverse("trading-markets")))
    messages.success(request, f"Resulted {market}; settlement queued")
    return redirect("trading-settlement", market_id=market.id)


@staff_page(permission=RESULT_MARKETS)
@require_POST
def market_settle_view(request: HttpRequest, market_id: int) -> HttpResponse:
    market = get_object_or_404(trading_market_query(), id=market_id)
    if request.POST.get("confirm") != "yes":
        return _confirm(request, market, action="settle", winner="")
    try:
        market_settlement_request(market=market, by=request.user)
    except MarketStateError as exc:
        messages.error(request, str(exc))
        return redirect(next_url(request, default=reverse("trading-markets")))
    return redirect("trading-settlement", market_id=market.id)


@staff_page
def settlement_page(request: HttpRequest, market_id: int) -> HttpResponse:
    market = get_object_or_404(Market.objects.select_related("event"), id=market_id)
    return render(request, "odds/trading/settlement.html", {"market": market, "page": "markets"})


@staff_page
def liability_page(request: HttpRequest) -> HttpResponse:
    return render(request, "odds/trading/liability.html", {"page": "liability"})


# The ticker's filters, read by the page's script from the form the view fills in.
TICKER_FILTERS = ("sport", "stake_over", "customer", "in_play", "kind")
# What can happen to a bet, as the ticker names it (a ``desk.bet`` frame's ``kind``); the page's
# script takes its labels from the filter's options.
TICKER_KINDS = (
    ("placed", "Placed"),
    ("pending", "Pending"),
    ("referred", "Referred"),
    ("rejected", "Rejected"),
    ("settled", "Settled"),
    ("voided", "Voided"),
    ("cashed_out", "Cashed out"),
    ("offered", "Offered"),
    ("resettled", "Resettled"),
    ("reopened", "Open again"),
)


@staff_page
def movers_page(request: HttpRequest) -> HttpResponse:
    """The markets whose prices moved most in each of the newest event-time windows (the movers
    query's rankings); ``?fragment=table`` is the table alone, which the page reads again on each
    ``desk.movers`` frame."""
    context = {"page": "movers", "windows": desk_movers()}
    if request.GET.get("fragment") == "table":
        return render(request, "odds/trading/_movers.html", context)
    return render(request, "odds/trading/movers.html", context)


@staff_page
def risk_page(request: HttpRequest) -> HttpResponse:
    return render(request, "odds/trading/risk.html", {"page": "risk", "books": desk_risk_books()})


@staff_page
def ticker_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "odds/trading/ticker.html",
        {
            "page": "ticker",
            "bets": desk_ticker(),
            "sports": desk_sports(),
            "kinds": TICKER_KINDS,
            "filters": {name: request.GET.get(name, "")[:40] for name in TICKER_FILTERS},
        },
    )


@staff_page
def subscriptions_page(request: HttpRequest) -> HttpResponse:
    return render(request, "odds/trading/subscriptions.html", {"page": "subscriptions"})


AUDIT_PAGE_SIZE = 50


def _day(raw: str) -> date | None:
    try:
        return date.fromisoformat(raw.strip()) if raw.strip() else None
    except ValueError:
        return None


def _audit_filters(request: HttpRequest) -> AuditFilters:
    """The audit page's filters from its query string (a value that cannot be read is ignored)."""
    query = request.GET
    kind = query.get("kind", "")
    return AuditFilters(
        actor=query.get("actor", "")[:150].strip(),
        kind=kind if kind in AuditEntry.Kind.values else "",
        object=query.get("object", "")[:100].strip(),
        since=_day(query.get("since", "")),
        until=_day(query.get("until", "")),
    )


@staff_page(permission=VIEW_AUDIT)
def audit_page(request: HttpRequest) -> HttpResponse:
    filters = _audit_filters(request)
    page = Paginator(audit_entries(filters=filters), AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    params = request.GET.copy()
    params.pop("page", None)
    return render(
        request,
        "odds/trading/audit.html",
        {
            "entries": page,
            "filters": filters,
            "actors": audit_actors(),
            "kinds": AuditEntry.Kind.choices,
            "query_without_page": params.urlencode(),
            "page": "audit",
        },
    )


@staff_page(permission=VIEW_AUDIT)
def audit_csv(request: HttpRequest) -> StreamingHttpResponse:
    """The filtered rows as CSV, streamed (however many there are)."""
    entries = audit_entries(filters=_audit_filters(request)).iterator(chunk_size=500)
    response = StreamingHttpResponse(audit_csv_lines(entries=entries), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="audit.csv"'
    return response


@staff_page(permission=VOID_BETS)
@require_POST
def bet_void_view(request: HttpRequest, bet_id: int) -> HttpResponse:
    """Void an open bet with a reason the punter reads in My bets (required)."""
    bet = get_object_or_404(Bet.objects.select_related("user__wallet"), id=bet_id)
    back = next_url(request, default=reverse("trading-markets"))
    reason = " ".join(request.POST.get("reason", "").split())
    if not reason:
        messages.error(request, f"Bet {bet.id} not voided: give the punter a reason")
        return redirect(back)
    voided = bet_void(bet=bet, by=request.user, reason=reason)
    if voided.status == Bet.Status.VOID and bet.status == Bet.Status.ACCEPTED:
        refund = money_text(voided.stake, bet.user.wallet.currency)
        messages.success(request, f"Voided bet {bet.id}; {refund} returned to {bet.user.get_username()}")
    else:
        messages.error(request, f"Bet {bet.id} is {voided.get_status_display().lower()}; only an open bet is voided")
    return redirect(back)


class ExchangeRateForm(forms.Form):
    """A new rate for one currency: a decimal of at most six places (``reducers.rates.rate_check``
    holds the bounds and says what is wrong)."""

    currency = forms.ChoiceField(choices=[(c, c) for c in CURRENCY_SYMBOLS if c != BOOK_CURRENCY])
    rate = forms.DecimalField(max_digits=20, decimal_places=12, min_value=0)
    note = forms.CharField(max_length=200, required=False)

    def clean(self) -> dict:
        data = super().clean() or {}
        if "currency" in data and "rate" in data:
            try:
                data["rate"] = rate_check(currency=data["currency"], rate=data["rate"])
            except RateRefused as exc:
                self.add_error("rate", str(exc))
        return data


def _rates(request: HttpRequest, *, form: ExchangeRateForm | None = None, status: int = 200) -> HttpResponse:
    return render(
        request,
        "odds/trading/rates.html",
        {
            "rates": exchange_rates_current(),
            "history": exchange_rate_history(),
            "form": form,
            "can_set": request.user.has_perm(SET_EXCHANGE_RATES),
            "page": "rates",
        },
        status=status,
    )


@staff_page
def rates_page(request: HttpRequest) -> HttpResponse:
    """The exchange rates the desk converts at, and their history; a post sets one (operators)."""
    if request.method != "POST":
        return _rates(request)
    if not request.user.has_perm(SET_EXCHANGE_RATES):
        raise PermissionDenied(f"this action needs the permission {SET_EXCHANGE_RATES}")
    form = ExchangeRateForm(request.POST)
    if not form.is_valid():
        return _rates(request, form=form, status=400)
    row = exchange_rate_set(
        currency=form.cleaned_data["currency"],
        rate=form.cleaned_data["rate"],
        by=request.user,
        note=" ".join(form.cleaned_data["note"].split()),
    )
    messages.success(request, f"1 {row.currency} is now {row.rate.normalize()} {BOOK_CURRENCY}")
    return redirect("trading-rates")
