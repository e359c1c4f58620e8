"""The browser's contract types (frontend/src/contract/) are generated from the pydantic schemas of
the JSON APIs and the websocket frames, and the check fails when they are not current."""

from __future__ import annotations

import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired

import pytest
from django.core.management import CommandError, call_command
from pydantic import TypeAdapter
from typing_extensions import TypedDict

from odds.api import contract, typescript
from reducers import frames

ROOT = Path(__file__).resolve().parents[2]


def test_the_browsers_contract_types_are_what_the_schemas_give():
    """Fails when a schema changed without `make contract`, or a generated file was edited."""
    assert contract.stale_files(contract.contract_files()) == [], "run `make contract`"


def test_the_check_fails_on_a_file_that_is_not_current(tmp_path, monkeypatch):
    files = contract.contract_files()
    monkeypatch.setattr(contract, "CONTRACT_DIR", tmp_path)
    for path, text in files.items():
        (tmp_path / path.name).write_text(text.replace("  bet_id: number;", "  bet_id: string;"))
    with pytest.raises(CommandError, match="make contract"):
        call_command("contract", "--check")
    call_command("contract", "--write")
    call_command("contract", "--check")


def test_the_check_runs_as_a_command():
    result = subprocess.run(
        [sys.executable, "manage.py", "contract", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


def test_every_server_frame_type_is_in_the_generated_union():
    text = (contract.CONTRACT_DIR / "frames.ts").read_text()
    union = re.search(r"export type ServerFrame =(.*?);\n", text, re.S)
    assert union is not None
    members = {name.strip() for name in union.group(1).split("|") if name.strip()}
    (server, _) = typing.get_args(frames.ServerFrame)
    assert members == {member.__name__ for member in typing.get_args(server)}


def test_every_api_body_is_declared():
    text = (contract.CONTRACT_DIR / "api.ts").read_text()
    for name in ("BetPlaceRequest", "BetOut", "BetRejected", "SubscriptionSpec", "ChannelCreated", "OpsSnapshot"):
        assert re.search(rf"^export interface {name} \{{", text, re.M), name


class _Leg(TypedDict):
    selection_id: int
    result: Literal["won", "lost"]


class _Frame(TypedDict):
    """A frame.

    Two paragraphs."""

    type: Literal["x"]
    legs: list[_Leg]
    price: str | None
    since: NotRequired[dict[str, tuple[int, str]]]
    tags: list[int | str]


def _declarations(schema_type: Any) -> str:
    document = TypeAdapter(schema_type).json_schema(ref_template=contract.REF)
    definitions = document.pop("$defs", {})
    return typescript.module(header="// h", definitions=definitions, roots={"Root": document})


def test_a_typed_dict_becomes_an_interface_with_its_optional_members_and_doc():
    text = _declarations(_Frame)
    assert "/**\n * A frame.\n *\n * Two paragraphs.\n */\nexport interface Root {" in text
    assert '  type: "x";\n  legs: _Leg[];\n  price: string | null;\n' in text
    assert "  since?: Record<string, [number, string]>;\n  tags: (number | string)[];\n}" in text
    assert 'export interface _Leg {\n  selection_id: number;\n  result: "won" | "lost";\n}' in text


def test_a_discriminated_union_is_a_union_of_its_members():
    class _Other(TypedDict):
        type: Literal["y"]

    from pydantic import Discriminator

    text = _declarations(Annotated[_Frame | _Other, Discriminator("type")])
    assert "export type Root = _Frame | _Other;" in text


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({}, "unknown"),
        ({"type": "object"}, "Record<string, unknown>"),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "Record<string, number>"),
        (
            {"type": "object", "propertyNames": {"enum": ["a", "b"]}, "additionalProperties": {"type": "boolean"}},
            'Partial<Record<"a" | "b", boolean>>',
        ),
        ({"oneOf": [{"type": "string", "pattern": "^[0-9]+$"}, {"type": "number"}]}, "string | number"),
        ({"anyOf": [{"type": "string"}, {}]}, "unknown"),
        ({"type": ["string", "null"]}, "string | null"),
        ({"const": 1}, "1"),
        ({"type": "string", "format": "date-time"}, "string"),
        ({"not": {"type": "string"}}, "unknown"),
    ],
)
def test_a_schema_maps_to_the_typescript_type_it_allows(schema, expected):
    assert typescript.ts_type(schema) == expected


def test_a_member_whose_name_is_not_an_identifier_is_quoted():
    text = typescript.declaration("X", {"type": "object", "properties": {"break": {"type": "string"}, "a-b": {}}})
    assert text == 'export interface X {\n  break?: string;\n  "a-b"?: unknown;\n}'


@pytest.mark.parametrize(
    ("model", "given"),
    [
        (
            "streams.ChannelCreated",
            {
                "channel": "c" * 32,
                "websocket": "/ws/odds",
                "spec": {"view": "slip", "markets": [], "query": None, "slip": [], "stake": None, "bets": []},
            },
        ),
        ("streams.SpecOut", {"view": "slip", "markets": [], "query": None, "slip": [], "stake": None, "bets": []}),
        ("ops.KafkaHealth", {"brokers": 1, "under_replicated": 0, "offline": 0}),
        ("ops.AlertsNow", {"available": False, "alerts": []}),
        ("views.BreakOut", {"break": {"exclusion": "time_out", "until": 1}}),
    ],
)
def test_an_answers_required_members_are_those_it_always_writes(model, given):
    """The generated answer types call a member required exactly when the server writes it even
    when it was not given (defaults are written; a Sparse answer's ungiven members are not)."""
    from odds.api.schemas import ops, streams, views

    module, name = model.split(".")
    cls = getattr({"streams": streams, "ops": ops, "views": views}[module], name)
    written = set(cls.model_validate(given).model_dump(by_alias=True))
    assert written == set(contract._always_written(cls))
    declared = re.search(
        rf"^export interface {name} \{{\n(.*?)\n\}}", (contract.CONTRACT_DIR / "api.ts").read_text(), re.M | re.S
    )
    assert declared is not None
    required = set(re.findall(r"^  (\w+): ", declared.group(1), re.M))
    assert required == written
