"""What every router's schemas share: the error answered as JSON and its body, the field types
(money, decimals, ids, versions), the base models, the refusals more than one router answers, and
the enumerations more than one router names."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    SerializerFunctionWrapHandler,
    Strict,
    WithJsonSchema,
    create_model,
    model_serializer,
)
from pydantic_core import PydanticCustomError, core_schema

from odds.betting.models import BetLeg
from odds.core.text import DECIMAL_MAX_LENGTH, DECIMAL_TEXT, MAX_ID

API_VERSION = 1

DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
MONEY_PATTERN = r"^-?[0-9]+(\.[0-9]{1,2})?$"


class ApiError(Exception):
    """An error answered as JSON. ``attachments`` are extra top-level members of the body."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        extra: dict[str, Any] | None = None,
        attachments: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.extra = extra or {}
        self.attachments = attachments or {}


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, BaseModel):
        return value.model_dump()
    raise TypeError(f"cannot encode {type(value).__name__}")


def dumps(payload: Any) -> bytes:
    return orjson.dumps(payload, default=_default)


def invalid(message: str, code: str = "invalid") -> PydanticCustomError:
    """A field's refusal: ``code`` and ``message`` are what the error body says."""
    return PydanticCustomError(code, message)


# ---------------------------------------------------------------------------------------------
# Field types


def _version(raw: Any) -> int:
    if isinstance(raw, bool) or raw != API_VERSION:
        raise invalid(f"unsupported version {str(raw)[:20]!r}; this server speaks v{API_VERSION}")
    return API_VERSION


Version = Annotated[int, PlainValidator(_version), WithJsonSchema({"const": API_VERSION})]


def _money(raw: Any) -> Decimal:
    """A decimal string (``"10.00"``) or a JSON number, with at most two decimal places; ranges
    are the services' business. Returned with exactly two places when not huge."""
    if raw is None:
        raise invalid("is required", code="required")
    if isinstance(raw, bool) or not isinstance(raw, str | int | Decimal):
        raise invalid('must be a decimal string such as "10.00"')
    if isinstance(raw, str) and (len(raw) > DECIMAL_MAX_LENGTH or not DECIMAL_TEXT.fullmatch(raw)):
        raise invalid(f'must be a decimal string such as "10.00" (digits, at most {DECIMAL_MAX_LENGTH})')
    value = raw if isinstance(raw, Decimal) else Decimal(raw)
    if not value.is_finite():
        raise invalid("must be a finite number")
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        raise invalid("at most 2 decimal places")
    if value.adjusted() < 20:
        # 1E+1 from a JSON number is 10.00 on the way back out, not "1E+1".
        value = value.quantize(Decimal("0.01"))
    return value


# A decimal request field: a string of digits with at most two decimal places, or a JSON number
# (read exactly, never through float).
Money = Annotated[
    Decimal,
    PlainValidator(_money),
    WithJsonSchema(
        {"oneOf": [{"type": "string", "pattern": MONEY_PATTERN, "maxLength": DECIMAL_MAX_LENGTH}, {"type": "number"}]}
    ),
]
# A decimal in an answer, always written as a string: a Decimal the code computed, or the text a
# selector already made of one (``DecimalText``).
DecimalOut = Annotated[Decimal, Strict(), WithJsonSchema({"type": "string", "pattern": DECIMAL_PATTERN})]
DecimalText = Annotated[str, WithJsonSchema({"type": "string", "pattern": DECIMAL_PATTERN})]
Id = Annotated[int, Strict(), Field(ge=1, le=MAX_ID)]
# An id in a path or a query string, which arrive as text.
PathId = Annotated[int, Field(ge=1, le=MAX_ID)]
Count = Annotated[int, Field(ge=0)]
Timestamp = Annotated[int, Field(description="epoch milliseconds")]
Text = Annotated[str, Strict()]


class Whole:
    """A query parameter: a whole number in ASCII digits between ``low`` and ``high`` (``int()``
    would also read other scripts' digits, fullwidth ones, `` 4`` or ``+3``)."""

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        return core_schema.no_info_plain_validator_function(self.read)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.low, "maximum": self.high}

    def read(self, raw: Any) -> int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            value: int | None = raw
        else:
            text = str(raw)
            value = int(text) if len(text) <= 19 and re.fullmatch(r"[0-9]+", text, re.ASCII) else None
        if value is None or not self.low <= value <= self.high:
            raise invalid(f"a whole number between {self.low} and {self.high}")
        return value


def values(choices: Iterable[Any]) -> tuple[str, ...]:
    return tuple(str(choice) for choice in choices)


# Literal types made at run time are strings to the type checker.
if TYPE_CHECKING:
    LegResult: TypeAlias = str
else:
    LegResult = Literal[values(BetLeg.Result.values)]


class Model(BaseModel):
    """A response body or a part of one; members a selector adds beyond those described are
    passed on."""

    model_config = ConfigDict(extra="allow")


class Sparse(Model):
    """A ``Model`` some of whose members may be absent (default None): each is left out unless it
    was given."""

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        body: dict[str, Any] = handler(self)
        for name in _absent_unless_given(type(self)):
            if name not in self.model_fields_set:
                del body[name]
        return body


@functools.cache
def _absent_unless_given(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, field in model.model_fields.items() if field.default is None)


class Body(BaseModel):
    """A request body: fields not named are ignored; ``v`` is the API version (1)."""

    model_config = ConfigDict(hide_input_in_errors=True)

    v: Version = API_VERSION


class Answer(Model):
    """A response body."""

    v: Literal[1] = 1


# ---------------------------------------------------------------------------------------------
# Errors


class ErrorDetail(BaseModel):
    code: str
    message: Annotated[str, Field(min_length=1)]
    field: Annotated[str, Field(min_length=1)] | None = None


class ErrorBody(BaseModel):
    """Every refusal: ``{"v": 1, "error": {"code", "message", "field"?}}``."""

    v: Literal[1]
    error: ErrorDetail


def refusal(name: str, *codes: str, **extra: Any) -> type[ErrorBody]:
    """An error body whose ``code`` is one of ``codes``; ``extra``: more members of ``error``
    (name → type), or with a leading ``_`` members of the body itself (``_bet``)."""
    outer: dict[str, Any] = {key[1:]: (kind, ...) for key, kind in extra.items() if key.startswith("_")}
    inner: dict[str, Any] = {key: (kind | None, None) for key, kind in extra.items() if not key.startswith("_")}
    code: Any = Literal[codes]
    detail = create_model(f"{name}Detail", __base__=ErrorDetail, code=(code, ...), **inner)
    return create_model(name, __base__=ErrorBody, error=(detail, ...), **outer)


BODY_ERRORS = ("bad_json", "invalid", "required", "number_out_of_range")
RetryAfter = Annotated[int, Field(ge=1)]

NotAuthenticated = refusal("NotAuthenticated", "not_authenticated")
CsrfFailed = refusal("CsrfFailed", "csrf_failed")
StaffOnly = refusal("StaffOnly", "staff_only", "csrf_failed")
StaffRead = refusal("StaffRead", "staff_only")
Excluded = refusal("Excluded", "csrf_failed", "excluded", "email_unverified")
BodyRefused = refusal("BodyRefused", *BODY_ERRORS)
QueryRefused = refusal("QueryRefused", "invalid")
TooLarge = refusal("TooLarge", "body_too_large")
NotFound = refusal("NotFound", "not_found")
DatabaseUnavailable = refusal("DatabaseUnavailable", "database_unavailable", "state_unavailable")
CommandUnavailable = refusal("CommandUnavailable", "database_unavailable", "command_not_sent", "state_unavailable")
PlacementUnavailable = refusal(
    "PlacementUnavailable", "database_unavailable", "state_unavailable", "overloaded", retry_after_s=RetryAfter
)

RateLimited = refusal("RateLimited", "rate_limited", retry_after_s=RetryAfter)


def timestamp(value: datetime | None) -> int | None:
    return int(value.timestamp() * 1000) if value is not None else None


# ---------------------------------------------------------------------------------------------
# Path and query parameters

ChannelId = Annotated[str, Field(min_length=1, description="A channel id from `POST /api/streams` (32 characters).")]
