"""The browser's contract types, generated from the pydantic schemas (``manage.py contract``).

Two TypeScript modules under ``frontend/src/contract/``:

- ``api.ts``: every request and answer body of the JSON APIs (``odds/api/schemas/``): a request's
  member with a default is optional; an answer's member is required unless it may be left out
  (a ``Sparse`` answer's member that was not given, a member excluded when empty);
- ``frames.ts``: every websocket frame (``reducers/frames.py``): the server's frames as they are
  written, ``ServerFrame`` their union, and the client's messages, ``ClientMessage``.

The browser imports its types from them instead of restating them; ``manage.py contract --check``
(and ``tests/unit/test_contract.py``) fails when either is not what the schemas give now.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from odds.api import typescript
from odds.api.schemas import common, game, meta, ops, play, snapshots, streams, views
from reducers import frames

CONTRACT_DIR = Path(__file__).resolve().parents[2] / "frontend" / "src" / "contract"
SCHEMA_MODULES: tuple[ModuleType, ...] = (common, views, play, streams, snapshots, ops, game, meta)
# The bases the bodies are built on: not bodies themselves.
BASES = (common.Model, common.Sparse, common.Body, common.Answer)
REF = "#/$defs/{model}"


def _header(source: str) -> str:
    return (
        f"// Generated from {source} by `make contract` (manage.py contract --write).\n"
        "// Edit the schemas, not this file; tests/unit/test_contract.py fails when it is not current."
    )


def _always_written(model: type[BaseModel]) -> list[str]:
    """The members an answer always carries: pydantic writes every member, defaults too, except
    a ``Sparse`` answer's members not given (default None) and a member with ``exclude_if``."""
    sparse = issubclass(model, common.Sparse)
    return [
        field.alias or name
        for name, field in model.model_fields.items()
        if field.exclude_if is None and not (sparse and field.default is None and not field.is_required())
    ]


class _BodySchema(GenerateJsonSchema):
    """Request bodies as the server validates them; answers with the members they always carry
    required (the validation schema would call every member with a default optional)."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        model = schema["cls"]
        if issubclass(model, common.Model) and "properties" in json_schema:
            written = set(_always_written(model))
            json_schema["required"] = [name for name in json_schema["properties"] if name in written]
            if not json_schema["required"]:
                del json_schema["required"]
        return json_schema


def api_models() -> list[type[BaseModel]]:
    """Every body model of the JSON APIs, each once, in the order the schema modules declare them."""
    found: dict[int, type[BaseModel]] = {}
    for module in SCHEMA_MODULES:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseModel)
                and value.__module__.startswith("odds.api.schemas.")
                and value not in BASES
            ):
                found.setdefault(id(value), value)
    return list(found.values())


def api_module() -> str:
    _, document = models_json_schema(
        [(model, "validation") for model in api_models()], ref_template=REF, schema_generator=_BodySchema
    )
    return typescript.module(header=_header("odds/api/schemas/"), definitions=document["$defs"])


def frames_module() -> str:
    keyed, document = TypeAdapter.json_schemas(
        [
            ("ServerFrame", "serialization", frames.SERVER_FRAME),
            ("ClientMessage", "validation", frames.CLIENT_MESSAGE),
        ],
        ref_template=REF,
    )
    roots: dict[str, Any] = {name: schema for (name, _mode), schema in keyed.items()}
    return typescript.module(header=_header("reducers/frames.py"), definitions=document["$defs"], roots=roots)


def contract_files() -> dict[Path, str]:
    """Each generated file and what it holds now."""
    return {CONTRACT_DIR / "api.ts": api_module(), CONTRACT_DIR / "frames.ts": frames_module()}


def stale_files(files: dict[Path, str]) -> list[Path]:
    """The files whose text on disk is not what the schemas give."""
    return [path for path, text in files.items() if not path.exists() or path.read_text() != text]
