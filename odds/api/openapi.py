"""The OpenAPI 3.1 description of the JSON APIs, served at ``GET /api/openapi.json``.

Built from the same constants the validators use (stake limits, legs, list sizes, views, ranges),
so a limit changed in code changes here too. ``tests/unit/test_openapi.py`` checks that every
JSON route of the URL configuration is described with the methods it answers, and
``tests/integration/security/test_api_fuzz.py`` fuzzes the application against it.
"""

from __future__ import annotations

import functools
from typing import Any

from django.http import HttpRequest, HttpResponse

from odds.api.http import json_response, public_get
from odds.api.ops import BROWSER_SAMPLES_PER_POST
from odds.api.schemas import API_VERSION, DECIMAL_MAX_LENGTH
from odds.api.views import MAX_LIST
from odds.formatting import OddsFormat
from odds.models import Bet, BetLeg, LedgerEntry, Market
from odds.selectors.catalogue import STARTING_SOON
from odds.selectors.ops import RANGES
from odds.services.health import CHECKS
from odds.services.placement import MAX_KEY_LENGTH, MAX_LEGS, MAX_RETURN, MAX_STAKE
from reducers import betting
from reducers.rules import SLIP_VIEW_MAX_STAKE as SLIP_MAX_STAKE
from reducers.subscriptions import MAX_CHANNEL_MARKETS, VIEWS

JsonSchema = dict[str, Any]

# Every id is a PostgreSQL bigint; the JSON edge refuses integers outside the signed 64-bit range.
MAX_ID = 2**63 - 1
MAX_SAMPLE_MS = 600_000
MAX_QUERY_MINUTES = 7 * 24 * 60

DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
MONEY_PATTERN = r"^-?[0-9]+(\.[0-9]{1,2})?$"


def _ref(name: str) -> JsonSchema:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: JsonSchema) -> JsonSchema:
    return {"anyOf": [schema, {"type": "null"}]}


def _object(properties: dict[str, JsonSchema], *, required: tuple[str, ...] = (), closed: bool = False) -> JsonSchema:
    schema: JsonSchema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def _array(items: JsonSchema, **limits: int) -> JsonSchema:
    return {"type": "array", "items": items, **limits}


def _enum(values: Any) -> JsonSchema:
    return {"type": "string", "enum": [str(v) for v in values]}


ID: JsonSchema = {"type": "integer", "minimum": 1, "maximum": MAX_ID}
DECIMAL_OUT: JsonSchema = {"type": "string", "pattern": DECIMAL_PATTERN}
TIMESTAMP: JsonSchema = {"type": "integer", "description": "epoch milliseconds"}
VERSION: JsonSchema = {"const": API_VERSION}


def _money_in(description: str) -> JsonSchema:
    """A decimal request field: a string of digits with at most two decimal places, or a JSON number
    (read exactly, never through float)."""
    return {
        "description": description,
        "oneOf": [
            {"type": "string", "pattern": MONEY_PATTERN, "maxLength": DECIMAL_MAX_LENGTH},
            {"type": "number"},
        ],
    }


def _error_schema(codes: tuple[str, ...], *, extra: dict[str, JsonSchema] | None = None) -> JsonSchema:
    error = _object(
        {
            "code": _enum(codes),
            "message": {"type": "string", "minLength": 1},
            "field": {"type": "string", "minLength": 1},
            **(extra or {}),
        },
        required=("code", "message"),
    )
    return _object({"v": VERSION, "error": error}, required=("v", "error"))


def _json(description: str, schema: JsonSchema, *, headers: dict[str, Any] | None = None) -> JsonSchema:
    response: JsonSchema = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


def _error(description: str, *codes: str, extra: dict[str, JsonSchema] | None = None) -> JsonSchema:
    return _json(description, _error_schema(codes, extra=extra))


BODY_ERRORS = ("bad_json", "invalid", "required", "number_out_of_range")
UNAUTHENTICATED = _json(
    "Not logged in.",
    _error_schema(("not_authenticated",)),
    headers={"WWW-Authenticate": {"schema": {"type": "string"}}},
)


def _unavailable(*, kafka: bool) -> JsonSchema:
    description = "The database cannot be reached (retry after `Retry-After` seconds); nothing was written."
    codes: tuple[str, ...] = ("database_unavailable",)
    if kafka:
        description += (
            " Or Kafka did not acknowledge the command (`command_not_sent`), or Redis refused the write"
            " (`state_unavailable`: at its memory limit, or unreachable); try again."
        )
        codes += ("command_not_sent", "state_unavailable")
    return _json(description, _error_schema(codes), headers={"Retry-After": {"schema": {"type": "string"}}})


BETS_UNAVAILABLE = _json(
    "The database cannot be reached (`database_unavailable`), or this web process's placement pool is"
    " saturated (`overloaded`, answered at once); nothing was recorded: send the same request (same key)"
    " again after `Retry-After` seconds.",
    _error_schema(("database_unavailable", "overloaded"), extra={"retry_after_s": {"type": "integer", "minimum": 1}}),
    headers={"Retry-After": {"schema": {"type": "string"}}},
)

TOO_LARGE = _error("The body is larger than `DATA_UPLOAD_MAX_MEMORY_SIZE`.", "body_too_large")


def _operation(
    *,
    summary: str,
    tag: str,
    responses: dict[str, JsonSchema],
    write: bool = False,
    staff: bool = False,
    body: JsonSchema | None = None,
    examples: dict[str, Any] | None = None,
    parameters: list[JsonSchema] | None = None,
    kafka: bool = False,
    unavailable: JsonSchema | None = None,
    body_required: bool = True,
) -> JsonSchema:
    """One operation with the answers every ``api_view`` gives: 401, 403 (CSRF, staff), 503
    (``unavailable`` when the operation has more reasons for it than the database)."""
    operation: JsonSchema = {"summary": summary, "tags": [tag], "responses": dict(responses)}
    if parameters:
        operation["parameters"] = parameters
    operation["security"] = [{"session": [], "csrf": []}] if write else [{"session": []}]
    forbidden = (("csrf_failed",) if write else ()) + (("staff_only",) if staff else ())
    if forbidden:
        reasons = " or ".join(("the CSRF token is missing or wrong",) * write + ("the user is not staff",) * staff)
        operation["responses"]["403"] = _error(f"Refused: {reasons}.", *forbidden)
    operation["responses"]["401"] = UNAUTHENTICATED
    operation["responses"]["503"] = unavailable or _unavailable(kafka=kafka)
    if body is not None:
        media: JsonSchema = {"schema": body}
        if examples:
            media["examples"] = {name: {"value": value} for name, value in examples.items()}
        operation["requestBody"] = {"required": body_required, "content": {"application/json": media}}
        operation["responses"].setdefault("400", _error("The body is not JSON or a field is invalid.", *BODY_ERRORS))
        operation["responses"]["413"] = TOO_LARGE
    return operation


def _path(name: str, schema: JsonSchema, description: str) -> JsonSchema:
    return {"name": name, "in": "path", "required": True, "schema": schema, "description": description}


def _query(name: str, schema: JsonSchema, description: str) -> JsonSchema:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


BET_ID = _path("bet_id", {"type": "integer", "minimum": 0}, "A bet of the logged-in punter.")
CHANNEL_ID = _path(
    "channel_id", {"type": "string", "minLength": 1}, "A channel id from `POST /api/streams` (32 characters)."
)
MARKET_ID = _path("market_id", {"type": "integer", "minimum": 0}, "A market id.")
# What a client already holds (a view snapshot's or its own frames' sequences): market id →
# [sequence, status]; an image leaves out every market still at that state.
HELD = {
    "type": "object",
    "maxProperties": 500,
    "propertyNames": {"pattern": "^[0-9]{1,18}$"},
    "additionalProperties": {
        "type": "array",
        "prefixItems": [{"type": "integer", "minimum": 0}, {"type": "string", "minLength": 1, "maxLength": 16}],
        "minItems": 2,
        "maxItems": 2,
    },
}
BEGIN_BODY = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"since": HELD},
    "description": "Optional. `since`: the markets the client holds; the image carries only those that moved since.",
}


def _components() -> JsonSchema:
    leg_out = _object(
        {
            "selection_id": ID,
            "selection": {"type": "string"},
            "market_id": ID,
            "market": {"type": "string"},
            "event_id": ID,
            "event": {"type": "string"},
            "price": DECIMAL_OUT,
            "price_display": {"type": "string"},
            "price_seen": DECIMAL_OUT,
            "result": _enum(BetLeg.Result.values),
        },
        required=("selection_id", "market_id", "event_id", "price", "price_seen", "result"),
    )
    bet = _object(
        {
            "id": ID,
            "idempotency_key": {"type": "string"},
            "kind": _enum(Bet.Kind.values),
            "status": _enum(Bet.Status.values),
            "price_policy": _enum(Bet.PricePolicy.values),
            "stake": DECIMAL_OUT,
            "odds": DECIMAL_OUT,
            "odds_display": {"type": "string"},
            "potential_return": DECIMAL_OUT,
            "payout": _nullable(DECIMAL_OUT),
            "placed_at": _nullable(TIMESTAMP),
            "settled_at": _nullable(TIMESTAMP),
            "accept_at": {
                **TIMESTAMP,
                "description": "A bet held by the in-play delay (`pending`): when it is decided.",
            },
            "legs": _array(leg_out, minItems=1, maxItems=MAX_LEGS),
            "cash_out": _object(
                {"available": {"type": "boolean"}, "quote": _nullable(DECIMAL_OUT)}, required=("available", "quote")
            ),
            "reject": _object(
                {"code": {"type": "string"}, "message": {"type": "string"}}, required=("code", "message")
            ),
        },
        required=("id", "idempotency_key", "kind", "status", "stake", "odds", "potential_return", "legs"),
    )
    query = {
        **_object(
            {
                "sport": _nullable({"type": "string", "minLength": 1, "maxLength": 32}),
                "in_play": _nullable({"type": "boolean"}),
                "starting_within_minutes": _nullable({"type": "integer", "minimum": 1, "maximum": MAX_QUERY_MINUTES}),
            },
            closed=True,
        ),
        "description": "At least one condition must be given (not null).",
        "anyOf": [
            {"required": ["sport"], "properties": {"sport": {"type": "string"}}},
            {"required": ["in_play"], "properties": {"in_play": {"type": "boolean"}}},
            {"required": ["starting_within_minutes"], "properties": {"starting_within_minutes": {"type": "integer"}}},
        ],
    }
    slip_leg = _object({"selection_id": ID, "market_id": ID}, required=("selection_id", "market_id"))
    open_bet_leg = _object(
        {"selection_id": ID, "market_id": ID, "price": {"type": "string", "description": "decimal odds, 1.01-1000"}},
        required=("selection_id", "market_id", "price"),
    )
    spec = {
        **_object(
            {
                "view": {**_enum(VIEWS), "default": "markets"},
                "markets": _nullable(_array(ID)),
                "query": _nullable(query),
                "slip": _nullable(_array(slip_leg, maxItems=MAX_LEGS)),
                "stake": _nullable({"type": "string", "description": f"a decimal amount, 0-{SLIP_MAX_STAKE}"}),
                "bets": _nullable(
                    _array(
                        _object(
                            {
                                "bet_id": ID,
                                "stake": {"type": "string", "description": f"a decimal amount, 0-{MAX_STAKE}"},
                                "legs": _array(open_bet_leg, minItems=1, maxItems=MAX_LEGS),
                            },
                            required=("bet_id", "stake", "legs"),
                        )
                    )
                ),
            }
        ),
        "description": (
            f"What a channel streams. A markets view needs `markets` or `query`, a slip view at least one leg; "
            f"at most {MAX_CHANNEL_MARKETS} distinct markets. Each of `bets` must be a bet that placement "
            f"would take: a potential return (stake times the prices) of at most {MAX_RETURN}."
        ),
    }
    spec_out = _object(
        {
            "view": _enum(VIEWS),
            "markets": _array(ID),
            "query": _nullable(_object({"sport": {}, "in_play": {}, "starting_within_minutes": {}})),
            "slip": _array(slip_leg),
            "stake": _nullable(DECIMAL_OUT),
            "bets": _array({"type": "object"}),
        },
        required=("view", "markets", "query", "slip", "stake", "bets"),
    )
    return {
        "securitySchemes": {
            "session": {"type": "apiKey", "in": "cookie", "name": "sessionid", "description": "Django session"},
            "csrf": {
                "type": "apiKey",
                "in": "header",
                "name": "X-CSRFToken",
                "description": "the `csrftoken` cookie's value, on every write",
            },
        },
        "schemas": {
            "Bet": bet,
            "BetPlaceRequest": _object(
                {
                    "v": VERSION,
                    "idempotency_key": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_KEY_LENGTH,
                        "description": "printable characters; unique per punter; a retry with the same key and "
                        "body returns the first attempt's bet",
                    },
                    "stake": _money_in("0.10 to 10000.00"),
                    "price_policy": {**_enum(Bet.PricePolicy.values), "default": Bet.PricePolicy.NONE.value},
                    "selections": _array(
                        _object(
                            {"selection_id": ID, "price": _money_in("the price the punter saw, 1.01-1000")},
                            required=("selection_id", "price"),
                        ),
                        minItems=1,
                        maxItems=MAX_LEGS,
                    ),
                },
                required=("idempotency_key", "stake", "selections"),
            ),
            "CashOutRequest": _object(
                {
                    "v": VERSION,
                    "quote": _money_in("the cash-out quote the punter confirmed (positive)"),
                    "accept": {
                        **_enum(betting.CASH_OUT_POLICIES),
                        "default": betting.CASH_OUT_POLICY_DEFAULT,
                        "description": "How far the quote may have moved: `exact` only the quote confirmed,"
                        " `better` (default) it or a higher one, `any` whatever it is now. The current quote is paid.",
                    },
                },
                required=("quote",),
            ),
            "SubscriptionSpec": spec,
            "SubscriptionSpecOut": spec_out,
            "Wallet": _object(
                {
                    "v": VERSION,
                    "wallet": _object(
                        {"currency": {"type": "string"}, "balance": DECIMAL_OUT}, required=("currency", "balance")
                    ),
                    "ledger": _array(
                        _object(
                            {
                                "id": ID,
                                "kind": _enum(LedgerEntry.Kind.values),
                                "amount": DECIMAL_OUT,
                                "balance_after": DECIMAL_OUT,
                                "bet_id": _nullable(ID),
                                "reference": {"type": "string"},
                                "ts": TIMESTAMP,
                            },
                            required=("id", "kind", "amount", "balance_after", "bet_id", "reference", "ts"),
                        ),
                        maxItems=20,
                    ),
                },
                required=("v", "wallet", "ledger"),
            ),
            "Health": _object(
                {
                    "ok": {"type": "boolean"},
                    "failing": _array(_enum(CHECKS)),
                    "components": {
                        "type": "object",
                        "required": list(CHECKS),
                        "additionalProperties": _object(
                            {"ok": {"type": "boolean"}, "latency_ms": {"type": "number"}, "error": {"type": "string"}},
                            required=("ok", "latency_ms"),
                        ),
                    },
                },
                required=("ok", "failing", "components"),
            ),
        },
    }


def _bets_paths() -> dict[str, JsonSchema]:
    placed = _object(
        {"v": VERSION, "created": {"type": "boolean"}, "bet": _ref("Bet")}, required=("v", "created", "bet")
    )
    rejected = {
        **_error_schema(
            ("market_suspended", "market_closed", "selection_unavailable", "price_changed", "insufficient_funds"),
            extra={
                "selections": _array(
                    _object(
                        {"selection_id": ID, "price_seen": DECIMAL_OUT, "price": DECIMAL_OUT},
                        required=("selection_id", "price_seen", "price"),
                    )
                )
            },
        ),
    }
    rejected["properties"]["bet"] = _ref("Bet")
    rejected["required"] = ["v", "error", "bet"]
    one_bet = _object({"v": VERSION, "bet": _ref("Bet")}, required=("v", "bet"))
    paths: dict[str, JsonSchema] = {
        "/api/bets": {
            "get": _operation(
                summary="My bets, newest first, each open bet with its live cash-out quote",
                tag="bets",
                parameters=[
                    _query("state", _enum(("open", "settled")), "open or settled (rejected bets count as settled)"),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIST, "default": 50}, "how many"),
                    _query("format", {**_enum(OddsFormat), "default": "decimal"}, "odds format of `*_display`"),
                ],
                responses={
                    "200": _json(
                        "The bets.", _object({"v": VERSION, "bets": _array(_ref("Bet"))}, required=("v", "bets"))
                    ),
                    "400": _error("A query parameter is invalid (`field` names it).", "invalid"),
                },
            ),
            "post": _operation(
                summary="Place a single (one selection) or an accumulator (several, one per event)",
                tag="bets",
                write=True,
                unavailable=BETS_UNAVAILABLE,
                body=_ref("BetPlaceRequest"),
                examples={
                    "accumulator": {
                        "v": 1,
                        "idempotency_key": "5b1c0f9e",
                        "stake": "10.00",
                        "price_policy": "better",
                        "selections": [{"selection_id": 101, "price": "2.50"}, {"selection_id": 205, "price": "1.91"}],
                    },
                    "single": {"idempotency_key": "a1", "stake": 5, "selections": [{"selection_id": 1, "price": 2.1}]},
                },
                responses={
                    "200": _json("A retry of a bet already placed with this key: the first attempt's bet.", placed),
                    "201": _json("Placed: the stake is held.", placed),
                    "202": _json(
                        "Held by the in-play delay (`status: pending`, `accept_at`): the stake is held and the"
                        " decision follows as a `bet.decided` websocket frame (and in `GET /api/bets`).",
                        placed,
                    ),
                    "400": _error(
                        "Malformed or against a rule of the bet; nothing was recorded.",
                        *BODY_ERRORS,
                        "stake_too_low",
                        "stake_too_high",
                        "return_too_high",
                        "unknown_selection",
                        "same_event",
                        "idempotency_key_reused",
                    ),
                    "409": _json("Refused and recorded as rejected, with every leg's current price.", rejected),
                    "429": _error(
                        "Above the placement rate limit; nothing was recorded.",
                        "rate_limited",
                        extra={"retry_after_s": {"type": "integer", "minimum": 1}},
                    ),
                },
            ),
        },
        "/api/bets/{bet_id}/cash-out": {
            "post": _operation(
                summary="Cash out an open bet at the quote the punter saw",
                tag="bets",
                write=True,
                parameters=[BET_ID],
                body=_ref("CashOutRequest"),
                examples={
                    "quote": {"v": 1, "quote": "12.34"},
                    "exact": {"v": 1, "quote": "12.34", "accept": "exact"},
                },
                responses={
                    "200": _json("Cashed out: the current quote (`payout`) is paid into the wallet.", one_bet),
                    "404": _error("No such bet of this punter.", "not_found"),
                    "409": _error(
                        "No cash-out at this quote: `quote` is the current offer (null when none).",
                        "quote_changed",
                        "cash_out_unavailable",
                        extra={"quote": _nullable(DECIMAL_OUT)},
                    ),
                },
            ),
        },
        "/api/wallet": {
            "get": _operation(
                summary="Balance and the latest ledger entries that changed it",
                tag="wallet",
                responses={"200": _json("The wallet.", _ref("Wallet"))},
            ),
        },
        **_wallet_paths(),
    }
    # Placement and cash-out are closed while the punter's time-out or self-exclusion runs.
    _excludable(paths["/api/bets"]["post"])
    _excludable(paths["/api/bets/{bet_id}/cash-out"]["post"])
    return paths


EXCLUDED = _error(
    "Refused: the CSRF token is missing or wrong, or the punter's time-out or self-exclusion runs"
    " (`excluded`: the message says until when).",
    "csrf_failed",
    "excluded",
)


def _excludable(operation: JsonSchema) -> JsonSchema:
    operation["responses"]["403"] = EXCLUDED
    return operation


def _wallet_paths() -> dict[str, JsonSchema]:
    entry = _object(
        {
            "id": ID,
            "kind": _enum(LedgerEntry.Kind.values),
            "amount": DECIMAL_OUT,
            "balance_after": DECIMAL_OUT,
            "bet_id": _nullable(ID),
            "reference": {"type": "string"},
            "ts": TIMESTAMP,
        },
        required=("id", "kind", "amount", "balance_after", "bet_id", "reference", "ts"),
    )
    payment_in = _object(
        {
            "v": VERSION,
            "amount": _money_in("pounds and pence, above zero"),
            "request_id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "description": "Chosen by the client per payment: a repeat with the same id pays once.",
            },
        },
        required=("amount", "request_id"),
    )
    payment_out = _object(
        {
            "v": VERSION,
            "created": {"type": "boolean"},
            "entry": entry,
            "wallet": _object({"currency": {"type": "string"}, "balance": DECIMAL_OUT}),
        },
        required=("v", "created", "entry", "wallet"),
    )
    refused = ("invalid", "required", "bad_json", "number_out_of_range", "too_low", "too_high")

    def payment(summary: str, *codes: str) -> JsonSchema:
        return _operation(
            summary=summary,
            tag="wallet",
            write=True,
            body=payment_in,
            examples={"pounds": {"v": 1, "amount": "20.00", "request_id": "5f2c0e9a"}},
            responses={
                "201": _json("Paid: the ledger entry and the balance after it.", payment_out),
                "200": _json("A repeat of a request already paid: its entry, nothing paid again.", payment_out),
                "400": _error("The amount or request id is not acceptable; nothing was paid.", *refused, *codes),
            },
        )

    return {
        "/api/wallet/deposits": {
            "post": _excludable(payment("Deposit through the demo payment form", "over_deposit_limit")),
        },
        "/api/wallet/withdrawals": {
            "post": payment("Withdraw, at most the balance (open during a break)", "insufficient_funds"),
        },
        "/api/wallet/limits/{period}": {
            "put": _operation(
                summary="Set a deposit limit: lower at once, higher after the cooling-off period",
                tag="wallet",
                write=True,
                parameters=[_path("period", _enum(("day", "week", "month")), "The limit's rolling period.")],
                body=_object({"v": VERSION, "amount": _money_in("the new limit")}, required=("amount",)),
                responses={
                    "400": _error("The period or the amount is not acceptable; the limit is unchanged.", *refused),
                    "404": _error("The path names no period.", "not_found"),
                    "200": _json(
                        "The limit: `amount` applies now; a raise waits in `pending_amount` until `pending_from`.",
                        _object(
                            {
                                "v": VERSION,
                                "limit": _object(
                                    {
                                        "period": _enum(("day", "week", "month")),
                                        "amount": DECIMAL_OUT,
                                        "pending_amount": _nullable(DECIMAL_OUT),
                                        "pending_from": _nullable(TIMESTAMP),
                                    },
                                    required=("period", "amount", "pending_amount", "pending_from"),
                                ),
                            },
                            required=("v", "limit"),
                        ),
                    ),
                },
            ),
        },
        "/api/wallet/break": {
            "post": _operation(
                summary="Take a time-out or self-exclude; it cannot be shortened",
                tag="wallet",
                write=True,
                body=_object(
                    {
                        "v": VERSION,
                        "length": _enum(
                            ("time_out_24h", "time_out_7d", "time_out_30d", "exclude_6m", "exclude_1y", "exclude_5y")
                        ),
                    },
                    required=("length",),
                ),
                responses={
                    "200": _json(
                        "The break that runs now (a longer one already running stays).",
                        _object(
                            {
                                "v": VERSION,
                                "break": _object(
                                    {"exclusion": _enum(("time_out", "self_exclusion")), "until": TIMESTAMP},
                                    required=("exclusion", "until"),
                                ),
                            },
                            required=("v", "break"),
                        ),
                    ),
                },
            ),
        },
    }


SPEC_EXAMPLES: dict[str, Any] = {
    "markets": {"view": "markets", "markets": [42, 43]},
    "query": {"view": "markets", "query": {"sport": "football", "starting_within_minutes": 60}},
    "in_play": {"view": "markets", "query": {"sport": "tennis", "in_play": True}},
    "slip": {
        "view": "slip",
        "slip": [{"selection_id": 101, "market_id": 42}, {"selection_id": 205, "market_id": 57}],
        "stake": "10.00",
    },
    "bets": {
        "view": "bets",
        "bets": [{"bet_id": 7, "stake": "10.00", "legs": [{"selection_id": 101, "market_id": 42, "price": "2.50"}]}],
    },
}


def _streams_paths() -> dict[str, JsonSchema]:
    no_channel = _error("No such channel of this user and session.", "no_such_channel", "not_found")
    spec_answer = _object(
        {"v": VERSION, "channel": {"type": "string"}, "spec": _ref("SubscriptionSpecOut")},
        required=("v", "channel", "spec"),
    )
    status_answer = _object(
        {"v": VERSION, "channel": {"type": "string"}, "status": {"type": "string"}}, required=("v", "channel", "status")
    )
    spec_errors = _error("The body is not JSON or the spec is invalid (`field` names the part).", *BODY_ERRORS)
    control_limited = _json(
        "Above the punter's begin, resync and change rate limit; retry after `Retry-After` seconds.",
        _error_schema(("rate_limited",), extra={"retry_after_s": {"type": "integer", "minimum": 1}}),
        headers={"Retry-After": {"schema": {"type": "string"}}},
    )
    return {
        "/api/streams": {
            "post": _operation(
                summary="Create a subscriber channel bound to this user and session",
                tag="streams",
                write=True,
                kafka=True,
                body=_ref("SubscriptionSpec"),
                examples=SPEC_EXAMPLES,
                responses={
                    "201": _json(
                        "Created; attach to it on the websocket, then begin.",
                        _object(
                            {
                                "v": VERSION,
                                "channel": {"type": "string", "minLength": 32, "maxLength": 32},
                                "spec": _ref("SubscriptionSpecOut"),
                                "websocket": {"type": "string"},
                            },
                            required=("v", "channel", "spec", "websocket"),
                        ),
                    ),
                    "400": spec_errors,
                    "409": _error("The punter or the browser session has its most live channels.", "too_many_channels"),
                    "429": _error("Above the subscription rate limit.", "rate_limited"),
                },
            ),
        },
        "/api/streams/{channel_id}/begin": {
            "post": _operation(
                summary="Ask the reducers for the channel's image, then deltas",
                tag="streams",
                write=True,
                kafka=True,
                parameters=[
                    CHANNEL_ID,
                    _query("resync", {"type": "string"}, "`1` asks for a fresh image flagged `resync`"),
                ],
                body=BEGIN_BODY,
                examples={"since": {"since": {"42": [17, "open"]}}},
                responses={
                    "202": _json("Requested.", status_answer),
                    "400": _error(
                        "The body is not JSON, has unknown fields, or `since` is not an object of market-id"
                        " strings to `[sequence, status]` (at most 500).",
                        *BODY_ERRORS,
                        "bad_since",
                    ),
                    "404": no_channel,
                    "429": control_limited,
                },
                body_required=False,
            ),
        },
        "/api/streams/{channel_id}": {
            "put": _operation(
                summary="Change the channel's spec; a new image follows",
                tag="streams",
                write=True,
                kafka=True,
                parameters=[CHANNEL_ID],
                body=_ref("SubscriptionSpec"),
                examples=SPEC_EXAMPLES,
                responses={
                    "202": _json("Requested.", spec_answer),
                    "400": spec_errors,
                    "404": no_channel,
                    "429": control_limited,
                },
            ),
            "delete": _operation(
                summary="End the channel",
                tag="streams",
                write=True,
                kafka=True,
                parameters=[CHANNEL_ID],
                responses={
                    "202": _json("Ended.", status_answer),
                    "404": no_channel,
                },
            ),
        },
    }


def _staff_paths() -> dict[str, JsonSchema]:
    loose = {"type": "object"}
    liability_row = _object(
        {
            "selection_id": ID,
            "selection": {"type": "string"},
            "market_id": _nullable(ID),
            "liability": DECIMAL_OUT,
            "liability_pence": {"type": "integer"},
            "bets": {"type": "integer", "minimum": 0},
        },
        required=("selection_id", "liability", "liability_pence", "bets"),
    )
    channel_row = _object(
        {
            "channel": {"type": "string"},
            "user_id": {"type": "integer"},
            "markets": _array({"type": "integer"}),
            "status": {"type": "string"},
            "seq": {"type": "integer"},
            "partitions": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        required=("channel", "user_id", "markets", "status", "seq", "partitions"),
    )
    samples = _object(
        {
            "samples": _array(
                _object(
                    {
                        "e2e": {"type": "number", "minimum": 0, "maximum": MAX_SAMPLE_MS},
                        "ws": {"type": "number", "minimum": 0, "maximum": MAX_SAMPLE_MS},
                    },
                    required=("e2e",),
                ),
                maxItems=BROWSER_SAMPLES_PER_POST,
            )
        },
        required=("samples",),
    )
    return {
        "/trading/api/liability": {
            "get": _operation(
                summary="Selections by open liability, largest first",
                tag="trading",
                staff=True,
                responses={
                    "200": _json(
                        "Up to 100 selections.",
                        _object(
                            {"v": VERSION, "selections": _array(liability_row, maxItems=100)},
                            required=("v", "selections"),
                        ),
                    )
                },
            ),
        },
        "/trading/api/channels": {
            "get": _operation(
                summary="Live subscriber channels with the reducer partitions of their markets",
                tag="trading",
                staff=True,
                responses={
                    "200": _json(
                        "The channels, most recently active first.",
                        _object({"v": VERSION, "channels": _array(channel_row)}, required=("v", "channels")),
                    )
                },
            ),
        },
        "/trading/api/channels/{channel_id}/end": {
            "post": _operation(
                summary="End any live channel, whoever owns it",
                tag="trading",
                write=True,
                staff=True,
                kafka=True,
                parameters=[CHANNEL_ID],
                responses={
                    "202": _json(
                        "Ended.",
                        _object(
                            {"v": VERSION, "channel": {"type": "string"}, "ended": {"const": True}},
                            required=("v", "channel", "ended"),
                        ),
                    ),
                    "404": _error("No such live channel.", "no_such_channel", "not_found"),
                },
            ),
        },
        "/trading/api/markets/{market_id}/settlement": {
            "get": _operation(
                summary="Settlement progress of a market",
                tag="trading",
                staff=True,
                parameters=[MARKET_ID],
                responses={
                    "200": _json(
                        "How many of the market's bets are settled.",
                        _object(
                            {
                                "v": VERSION,
                                "market_id": ID,
                                "market_status": _enum(Market.Status.values),
                                "total": {"type": "integer", "minimum": 0},
                                "settled": {"type": "integer", "minimum": 0},
                                "done": {"type": "boolean"},
                            },
                            required=("v", "market_id", "market_status", "total", "settled", "done"),
                        ),
                    ),
                    "404": _error("No such market.", "not_found"),
                },
            ),
        },
        "/ops/api/snapshot": {
            "get": _operation(
                summary="Every figure of the lag dashboard at one moment",
                tag="ops",
                staff=True,
                responses={
                    "200": _json(
                        "The snapshot.",
                        _object(
                            {
                                "v": VERSION,
                                "ts": TIMESTAMP,
                                "queries": loose,
                                "latency": loose,
                                "websockets": {"type": "object", "additionalProperties": {"type": "integer"}},
                                "dead_letters": {"type": "object", "additionalProperties": {"type": "integer"}},
                                "late_records": {"type": "object", "additionalProperties": {"type": "integer"}},
                                "redis_memory_bytes": {"type": "integer", "minimum": 0},
                                "celery_queue_depth": {"type": "integer", "minimum": 0},
                                "kafka": _object(
                                    {
                                        "brokers": {"type": "integer", "minimum": 0},
                                        "replication_factor": {"type": "integer", "minimum": 1},
                                        "partitions": {"type": "integer", "minimum": 0},
                                        "under_replicated": {"type": "integer", "minimum": 0},
                                        "offline": {"type": "integer", "minimum": 0},
                                        "leaders": {"type": "object", "additionalProperties": {"type": "integer"}},
                                    },
                                    required=("brokers", "under_replicated", "offline"),
                                ),
                                "latency_markets": _array(ID),
                            },
                            required=("v", "ts", "queries", "latency", "websockets", "latency_markets"),
                        ),
                    )
                },
            ),
        },
        "/ops/api/history": {
            "get": _operation(
                summary="Sampled figures over a range, as column arrays",
                tag="ops",
                staff=True,
                parameters=[_query("range", {**_enum(RANGES), "default": "15m"}, "how far back")],
                responses={
                    "200": _json(
                        "The history.",
                        _object(
                            {
                                "v": VERSION,
                                "range": _enum(RANGES),
                                "stride_s": {"type": "integer", "minimum": 1},
                                "ts": _array(TIMESTAMP),
                                "series": {
                                    "type": "object",
                                    "additionalProperties": _array({"type": ["number", "null"]}),
                                },
                            },
                            required=("v", "range", "stride_s", "ts", "series"),
                        ),
                    ),
                    "400": _error("`range` is not one of the ranges.", "invalid"),
                },
            ),
        },
        "/ops/api/latency": {
            "post": _operation(
                summary="Latency samples an operator's browser measured (ms)",
                tag="ops",
                write=True,
                staff=True,
                body=samples,
                examples={"samples": {"samples": [{"e2e": 120, "ws": 8}, {"e2e": 95.5}]}},
                responses={
                    "202": _json(
                        "Kept.",
                        _object({"v": VERSION, "kept": {"type": "integer", "minimum": 0}}, required=("v", "kept")),
                    ),
                    "400": _error("The body is not JSON or a sample is invalid.", *BODY_ERRORS),
                },
            ),
        },
    }


def _snapshot_paths() -> dict[str, JsonSchema]:
    selection = _object(
        {"id": {"type": "integer"}, "name": {"type": "string"}, "price": DECIMAL_OUT, "status": {"type": "string"}},
        required=("id", "name", "price", "status"),
    )
    market = _object(
        {
            "market_id": {"type": "integer"},
            "name": {"type": "string"},
            "kind": {"type": "string"},
            "seq": {"type": "integer", "minimum": 0, "description": "The stream's sequence; 0: not priced yet."},
            "status": {"type": "string"},
            "tradable": {"type": "boolean"},
            "selections": _array(selection),
        },
        required=("market_id", "seq", "status", "tradable", "selections"),
    )
    event = _object(
        {
            "id": {"type": "integer"},
            "home": {"type": "string"},
            "away": {"type": "string"},
            "starts_at": {"type": "string", "format": "date-time"},
            "status": {"type": "string"},
            "sport": {"type": "string"},
            "competition": _object({"id": {"type": "integer"}, "name": {"type": "string"}}, required=("id", "name")),
            "markets": _array(market),
        },
        required=("id", "markets"),
    )
    snapshot = _object(
        {
            "type": {"const": "view.snapshot"},
            "v": VERSION,
            "view": {"type": "string"},
            "at": {"type": "integer", "description": "When it was taken (epoch ms)."},
            "events": _array(event),
        },
        required=("type", "v", "view", "at", "events"),
    )
    headers = {
        "ETag": {"schema": {"type": "string"}, "description": "Of the content; sent back in If-None-Match."},
        "Cache-Control": {"schema": {"type": "string"}, "description": "public, short max-age, stale-while-revalidate"},
    }
    about = (
        "The same for every punter (no cookie read or set), cacheable: `Cache-Control` public with a short "
        "max-age and `stale-while-revalidate`, an `ETag`, and `304 Not Modified` (no body) to an "
        "`If-None-Match` naming the current one. Each market's `seq` and `status` go in a `watch`'s "
        "`since` (docs/protocol.md), so the stream then brings only what moved."
    )

    def get(summary: str, *, parameters: list[JsonSchema] | None = None, missing: str | None = None) -> JsonSchema:
        responses = {"200": _json("The view's snapshot.", snapshot, headers=headers)}
        if missing is not None:
            responses["404"] = _error(f"No such {missing}.", "not_found")
        operation: JsonSchema = {
            "summary": summary,
            "description": about,
            "tags": ["views"],
            "security": [],
            "responses": responses,
        }
        if parameters:
            operation["parameters"] = parameters
        return {"get": operation}

    sport = _path("sport_slug", {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"}, "A sport's slug (football).")
    competition = _path("competition_id", {"type": "integer", "minimum": 0}, "A competition of that sport.")
    event_id = _path("event_id", {"type": "integer", "minimum": 0}, "An event.")
    return {
        "/api/views/home": get("Live and upcoming events with their main market"),
        "/api/views/in-play": get("Events in play with their main market"),
        "/api/views/starting-soon": get(
            f"Events kicking off within {STARTING_SOON.total_seconds() / 3600:g} hours, with their main market"
        ),
        "/api/views/sport/{sport_slug}": get("A sport's events", parameters=[sport], missing="sport"),
        "/api/views/sport/{sport_slug}/{competition_id}": get(
            "A competition's events", parameters=[sport, competition], missing="competition"
        ),
        "/api/views/event/{event_id}": get("An event with every market", parameters=[event_id], missing="event"),
    }


def _public_paths() -> dict[str, JsonSchema]:
    return {
        "/api/openapi.json": {
            "get": {
                "summary": "This description",
                "tags": ["meta"],
                "security": [],
                "responses": {"200": _json("OpenAPI 3.1.", {"type": "object", "required": ["openapi", "paths"]})},
            },
        },
        "/healthz": {
            "get": {
                "summary": "Health of every component",
                "tags": ["meta"],
                "security": [],
                "responses": {
                    "200": _json("Every component is healthy.", _ref("Health")),
                    "503": _json("At least one component is not (`failing` names them).", _ref("Health")),
                },
            },
        },
    }


@functools.cache
def openapi_description() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the JSON APIs (built once per process)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Sportsbook JSON API",
            "version": str(API_VERSION),
            "description": (
                "Bets, cash-out, wallet, the stream control API and the staff APIs. Every error is "
                '`{"v": 1, "error": {"code", "message", "field"?}}`; money and prices are decimal strings. '
                "Log in for a session cookie; send the `csrftoken` cookie's value as `X-CSRFToken` on writes. "
                "See docs/protocol.md."
            ),
        },
        "servers": [{"url": "/"}],
        "paths": {**_bets_paths(), **_streams_paths(), **_staff_paths(), **_snapshot_paths(), **_public_paths()},
        "components": _components(),
    }


@public_get
def openapi_json(request: HttpRequest) -> HttpResponse:
    """``GET /api/openapi.json``: public, like the API's documentation."""
    return json_response(openapi_description())
