"""TypeScript declarations from JSON Schema, as pydantic writes it: the browser's contract types
are generated from the models that validate and build the messages (``odds/api/contract.py``).

The part of JSON Schema pydantic emits is covered: ``$ref`` (to ``$defs``), ``const``, ``enum``,
``anyOf``/``oneOf``, the types ``string``, ``integer``, ``number``, ``boolean``, ``null``,
``array`` (``items``, ``prefixItems`` as a tuple) and ``object`` (``properties`` and
``required``; ``additionalProperties`` as a record, its keys from ``propertyNames``' ``enum``).
Anything else is ``unknown``, so a type is never claimed narrower than the schema says.
Constraints a type cannot state (lengths, ranges, patterns) are left to the server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

Schema = Mapping[str, Any]

IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean", "null": "null"}


def type_name(ref_or_name: str) -> str:
    """The TypeScript name of a definition: the last part of its ``$ref``, made an identifier
    (pydantic names a model seen in both modes ``Name-Input`` / ``Name-Output``)."""
    name = ref_or_name.rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9_$]", "", name)


def _union(members: list[str]) -> str:
    unique = list(dict.fromkeys(members))
    if "unknown" in unique:
        return "unknown"
    return " | ".join(unique)


def _element(text: str) -> str:
    """An array's element type, parenthesised when it is a union."""
    return f"({text})" if " | " in text else text


def _doc(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = [line.rstrip() for line in text.strip().splitlines()]
    body = [line.replace("*/", "*\\/") for line in lines]
    if len(body) == 1:
        return [f"{indent}/** {body[0]} */"]
    return [f"{indent}/**", *(f"{indent} * {line}" if line else f"{indent} *" for line in body), f"{indent} */"]


def _key(name: str) -> str:
    return name if IDENTIFIER.match(name) else json.dumps(name)


def _members(schema: Schema, indent: str) -> list[str]:
    required = set(schema.get("required", ()))
    lines: list[str] = []
    for name, member in schema.get("properties", {}).items():
        lines += _doc(member.get("description"), indent)
        optional = "" if name in required else "?"
        lines.append(f"{indent}{_key(name)}{optional}: {ts_type(member, indent=indent)};")
    return lines


def _object(schema: Schema, indent: str) -> str:
    if schema.get("properties"):
        inner = indent + "  "
        return "{\n" + "\n".join(_members(schema, inner)) + f"\n{indent}}}"
    extra = schema.get("additionalProperties", True)
    value = "unknown" if extra is True or extra == {} else ts_type(extra, indent=indent)
    keys = schema.get("propertyNames", {}).get("enum")
    if keys:
        return f"Partial<Record<{_union([json.dumps(key) for key in keys])}, {value}>>"
    return f"Record<string, {value}>"


def ts_type(schema: Schema | bool, *, indent: str = "") -> str:
    """The TypeScript type of one JSON schema."""
    if schema is True or schema == {}:
        return "unknown"
    if schema is False:
        return "never"
    assert isinstance(schema, Mapping)
    if "$ref" in schema:
        return type_name(schema["$ref"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return _union([json.dumps(value) for value in schema["enum"]])
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return _union([ts_type(member, indent=indent) for member in schema[combinator]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([ts_type({**schema, "type": one}, indent=indent) for one in kind])
    if kind in SCALARS:
        return SCALARS[kind]
    if kind == "array":
        if "prefixItems" in schema:
            return "[" + ", ".join(ts_type(item, indent=indent) for item in schema["prefixItems"]) + "]"
        return _element(ts_type(schema.get("items", {}), indent=indent)) + "[]"
    if kind == "object":
        return _object(schema, indent)
    return "unknown"


def declaration(name: str, schema: Schema) -> str:
    """``export interface`` for an object with properties, else ``export type``."""
    lines = _doc(schema.get("description"), "")
    if schema.get("type") == "object" and schema.get("properties"):
        lines.append(f"export interface {type_name(name)} {{")
        lines += _members(schema, "  ")
        lines.append("}")
    else:
        members = schema.get("oneOf") or schema.get("anyOf")
        if members and len(members) > 3:
            alternatives = "\n".join(f"  | {ts_type(member, indent='  ')}" for member in members)
            lines.append(f"export type {type_name(name)} =\n{alternatives};")
        else:
            lines.append(f"export type {type_name(name)} = {ts_type(schema)};")
    return "\n".join(lines)


def module(*, header: str, definitions: Mapping[str, Schema], roots: Mapping[str, Schema] | None = None) -> str:
    """A TypeScript module declaring every definition (sorted by name), then the ``roots``."""
    parts = [header.rstrip()]
    for name in sorted(definitions):
        parts.append(declaration(name, definitions[name]))
    for name, schema in (roots or {}).items():
        parts.append(declaration(name, schema))
    return "\n\n".join(parts) + "\n"
