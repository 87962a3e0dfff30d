"""JSON Schema checking of one profile, with messages that say where and how to fix."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from generator.diagnostics import Diagnostic, did_you_mean
from generator.load import Document, to_plain
from generator.schema_files import KIND_SCHEMA_FILES, load_schema

TYPE_NAMES = {"integer": "a whole number", "string": "a string", "object": "a mapping", "array": "a list",
              "boolean": "true or false", "number": "a number"}


@cache
def _validator(kind: str) -> Draft202012Validator:
    schema = load_schema(kind)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def check_kind(document: Document) -> list[Diagnostic]:
    """The `apiVersion`/`kind` header, before a schema can even be chosen."""
    kind = document.kind
    if "kind" not in document.data:
        return [Diagnostic(document.location(), "missing `kind`",
                           f"add `kind:` with one of {', '.join(KIND_SCHEMA_FILES)}")]
    if type(kind) is not str:
        return [Diagnostic(document.location("kind"), "`kind` must be a plain string",
                           f"write one of {', '.join(KIND_SCHEMA_FILES)}, without tags or brackets")]
    if kind not in KIND_SCHEMA_FILES:
        return [Diagnostic(document.location("kind"), f"unknown kind {_show(kind)}",
                           did_you_mean(str(kind), KIND_SCHEMA_FILES))]
    return []


def check_schema(document: Document) -> tuple[list[Diagnostic], bool]:
    """Schema findings, and whether the profile's shape is still sound enough for cross-checks.

    Unknown keys leave every known field typed as the schema says, so references can still be
    checked and reported in the same run; any other schema error stops the profile there.
    """
    schema = load_schema(document.kind)
    instance = to_plain(document.data)
    found: list[Diagnostic] = []
    sound = True
    for error in sorted(_validator(document.kind).iter_errors(instance), key=lambda e: list(e.absolute_path)):
        found.extend(_diagnose(document, error, schema))
        sound = sound and error.validator == "additionalProperties"
    return found, sound


def _subschema(schema: dict[str, Any], path: list[str | int]) -> dict[str, Any]:
    node = schema
    for key in path:
        if isinstance(key, int):
            node = node.get("items", {})
        elif key in node.get("properties", {}):
            node = node["properties"][key]
        else:
            node = node.get("additionalProperties") if isinstance(node.get("additionalProperties"), dict) else {}
    return node


def _field(path: list[str | int]) -> str:
    if not path:
        return "the profile"
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return f"`{text}`"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return str(value)


def _diagnose(document: Document, error: ValidationError, schema: dict[str, Any]) -> list[Diagnostic]:
    path = list(error.absolute_path)
    where = document.location(*path)
    sub = error.schema if isinstance(error.schema, dict) else {}
    about = sub.get("description", "")
    field = _field(path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = list(sub.get("properties", {}))
        extras = [k for k in error.instance if k not in allowed]
        return [Diagnostic(document.location(*path, key, at_key=True),
                           f"unknown key '{key}' in {field}",
                           did_you_mean(str(key), allowed)) for key in extras]
    if kind == "required":
        match = re.match(r"^'(.+)' is a required property$", error.message)
        key = match.group(1) if match else str(error.validator_value)
        # A `required` in a conditional (hardware's `else`) has no described property beside it: look it up in place.
        described = (sub.get("properties", {}).get(key, {}).get("description")
                     or _subschema(schema, path).get("properties", {}).get(key, {}).get("description", ""))
        return [Diagnostic(where if path else document.location(), f"missing required key '{key}' in {field}",
                           f"add `{key}:` ({described})" if described else f"add `{key}:`")]
    if kind == "type":
        expected = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        expected_text = " or ".join(TYPE_NAMES.get(e, str(e)) for e in expected)
        hint = about
        if "string" in expected and isinstance(error.instance, (int, float)) and not isinstance(error.instance, bool):
            written = document.token_at(where) or str(error.instance)
            hint = f'quote it: "{written}"'
        return [Diagnostic(where, f"{field} must be {expected_text}, not {_show(error.instance)}", hint)]
    if kind == "enum":
        options = [str(o) for o in error.validator_value]
        return [Diagnostic(where, f"{field} is {_show(error.instance)}, which is not allowed",
                           did_you_mean(str(error.instance), options))]
    if kind == "const":
        return [Diagnostic(where, f"{field} is {_show(error.instance)}",
                           f"it must be `{error.validator_value}`")]
    if kind == "pattern" and "propertyNames" in error.schema_path:
        return [Diagnostic(document.location(*path, error.instance, at_key=True),
                           f"key {_show(error.instance)} in {field} is not valid", about or
                           f"it must match {error.validator_value}")]
    if kind == "pattern":
        return [Diagnostic(where, f"{field} {_show(error.instance)} is not valid", about or
                           f"it must match {error.validator_value}")]
    if kind in ("maxLength", "minLength"):
        limit = error.validator_value
        word = "at most" if kind == "maxLength" else "at least"
        return [Diagnostic(where, f"{field} is {len(error.instance)} characters; it must be {word} {limit}",
                           about)]
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        op = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[kind]
        return [Diagnostic(where, f"{field} is {error.instance}; it must be {op} {error.validator_value}", about)]
    if kind == "minItems":
        return [Diagnostic(where, f"{field} needs at least {error.validator_value} item(s)", about)]
    if kind == "uniqueItems":
        return [Diagnostic(where, f"{field} lists the same item twice", "remove the repeated entry")]
    message = re.sub(r"\s+", " ", error.message)
    return [Diagnostic(where, f"{field}: {message}", about)]
