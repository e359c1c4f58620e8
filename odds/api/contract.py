"""The browser's contract types, generated from the pydantic schemas (``manage.py contract``).

Two TypeScript modules under ``frontend/src/contract/``:

- ``api.ts``: every request and answer body of the JSON APIs (``odds/api/schemas/``), read as
  the server validates them (a member with a default or absent unless given is optional);
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
from pydantic.json_schema import models_json_schema

from odds.api import typescript
from odds.api.schemas import common, game, meta, ops, snapshots, streams, views
from reducers import frames

CONTRACT_DIR = Path(__file__).resolve().parents[2] / "frontend" / "src" / "contract"
SCHEMA_MODULES: tuple[ModuleType, ...] = (common, views, streams, snapshots, ops, game, meta)
# The bases the bodies are built on: not bodies themselves.
BASES = (common.Model, common.Sparse, common.Body, common.Answer)
REF = "#/$defs/{model}"


def _header(source: str) -> str:
    return (
        f"// Generated from {source} by `make contract` (manage.py contract --write).\n"
        "// Edit the schemas, not this file; tests/unit/test_contract.py fails when it is not current."
    )


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
    _, document = models_json_schema([(model, "validation") for model in api_models()], ref_template=REF)
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
