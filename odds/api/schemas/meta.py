"""The meta routes' bodies (``odds/api/api.py``): ``/healthz`` and this API's OpenAPI document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from odds.api.schemas.common import Model
from odds.core.health import CHECKS

# Literal types made at run time are strings to the type checker.
if TYPE_CHECKING:
    Check: TypeAlias = str
else:
    Check = Literal[tuple(CHECKS)]


class ComponentHealth(Model):
    ok: bool


class Health(Model):
    """Whether each component is healthy; why not is for operators (``/healthz/detail``)."""

    ok: bool
    failing: list[Check]
    components: dict[Check, ComponentHealth]


class OpenApiDocument(Model):
    """OpenAPI 3.1."""

    openapi: str
    paths: dict[str, Any]
