"""JSON Schema checking of one profile, with messages that say where and how to fix."""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import cache
from typing import TYPE_CHECKING, Any

from mpigen.load import ProfileFile, to_plain
from mpigen.support.compiled_schema import CompiledSchema, compile_schema
from mpigen.support.diagnostics import Diagnostic, did_you_mean, raises, with_rule
from mpigen.support.profile_rules import SCHEMA_QUANTITY, schema_rule
from mpigen.support.schema_files import KIND_SCHEMA_FILES, load_schema_file
from mpigen.validate.fields import field_name
from mpigen.validate.text import profile_strings
from mpigen.vocabulary import kubernetes

if TYPE_CHECKING:  # jsonschema is imported where a profile breaks its schema: a valid fleet never needs it
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

TYPE_NAMES = {"integer": "a whole number", "string": "a string", "object": "a mapping", "array": "a list",
              "boolean": "true or false", "number": "a number"}
# What the name patterns of the schemas allow, in words.
PATTERN_RULES = {
    "^[a-z]([-a-z0-9]*[a-z0-9])?$": "a DNS-1035 label has only lower-case letters, digits and `-`, starts with a "
                                    "letter and ends with a letter or digit",
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$": "a DNS-1123 label has only lower-case letters, digits and `-`, and starts "
                                       "and ends with a letter or digit",
}
# Checks of one value; where several fail on the same value, only the first of this order is reported
# (`.inf` as a count is not a whole number; that it is also too large is noise).
VALUE_CHECKS = ("type", "const", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum",
                "exclusiveMinimum", "exclusiveMaximum")
QUANTITY_UNITS = {"cpu": kubernetes.MILLICORES, "memory": kubernetes.BYTES, "shmSize": kubernetes.BYTES}
"""What Kubernetes counts each quantity of a profile in, by its key (every field of the schemas with the quantity
pattern: a test holds them equal)."""


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    """`pattern` as JSON Schema means it (ECMA-262): `$` is the end of the string. Python's `$` also matches
    before a final newline, so `name: "dgx-lab\\n"` passed `^[a-z]...$` and reached the charts."""
    return re.compile(re.sub(r"(?<!\\)\$$", r"\\Z", pattern))


def _matches(pattern: str, text: str) -> bool:
    return _regex(pattern).search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


class _CompiledPattern:
    """`pattern` in the compiled validator: the very test jsonschema's `_pattern` makes, so both read a pattern
    alike. jsonschema-rs's own engine also ends `$` at the end of the string, but its `\\s` is ECMA-262's white
    space, not Python's (U+0085 and U+001C-U+001F are space to Python only, U+FEFF to ECMA-262 only):
    `repoURL: "https://git.example.com/a\\x85"` would pass its `[^\\s]+` and not jsonschema's."""

    def __init__(self, parent_schema: dict[str, Any], value: str, schema_path: list[str | int]) -> None:
        self.search = _regex(value).search

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str) and self.search(instance) is None:
            raise ValueError(f"{instance!r} does not match its pattern")


@cache
def _validator(schema_file: str) -> Draft202012Validator:
    """jsonschema's validator of a schema file: the messages where a profile breaks it."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    schema = load_schema_file(schema_file)
    Draft202012Validator.check_schema(schema)
    return extend(Draft202012Validator, {"pattern": _pattern})(schema)


@cache
def _compiled(schema_file: str) -> CompiledSchema | None:
    """The compiled validator of a schema file (support/compiled_schema.py): where it finds a profile valid,
    jsonschema is not asked."""
    return compile_schema(load_schema_file(schema_file), keywords={"pattern": _CompiledPattern})


def _errors(schema_file: str, data: Any) -> list[ValidationError]:
    """Where plain `data` breaks the schema: none where the compiled validator finds it valid, else jsonschema's."""
    compiled = _compiled(schema_file)
    if compiled is not None and compiled.accepts(data):
        return []
    return list(_validator(schema_file).iter_errors(data))


def schema_verdicts(schema_file: str, data: Any) -> tuple[bool | None, bool]:
    """Whether plain `data` is valid, to the compiled validator (None where it is not asked) and to jsonschema: the
    two must agree (tests/unit/validate/test_validate_compiled_schema.py)."""
    compiled = _compiled(schema_file)
    return (None if compiled is None else compiled.verdict(data)), _validator(schema_file).is_valid(data)


def schema_errors(schema_file: str, data: Any) -> list[tuple[tuple[str | int, ...], str, Any]]:
    """Where plain `data` breaks a profile schema: (path, keyword, the keyword's value in the schema), for a caller
    that builds a profile and leaves out what the schema refuses (an import) rather than report it at a line."""
    return [(tuple(error.absolute_path), str(error.validator), error.validator_value)
            for error in _errors(schema_file, data)]


@raises(schema_rule("kind"))
def check_kind(document: ProfileFile) -> list[Diagnostic]:
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


def check_schema(document: ProfileFile, schema_file: str | None = None) -> tuple[list[Diagnostic], bool]:
    """Schema findings, and whether the profile's shape is still sound enough for cross-checks. `schema_file`:
    a schema of schemas/ other than the profile kind's (the repository config's), judged and worded alike.

    Unknown keys leave every known field typed as the schema says, so references can still be
    checked and reported in the same run; any other schema error stops the profile there.
    """
    schema_file = schema_file or KIND_SCHEMA_FILES[document.kind]
    schema = load_schema_file(schema_file)
    instance = to_plain(document.data)
    found: list[Diagnostic] = []
    sound = True
    errors = sorted(_errors(schema_file, instance), key=lambda e: list(e.absolute_path))
    first_check: dict[tuple[Any, ...], int] = {}
    for error in errors:
        if error.validator in VALUE_CHECKS:
            path = tuple(error.absolute_path)
            first_check[path] = min(first_check.get(path, len(VALUE_CHECKS)), VALUE_CHECKS.index(error.validator))
    meant = _meant_keys(errors)
    for error in errors:
        sound = sound and error.validator == "additionalProperties"
        if error.validator in VALUE_CHECKS and VALUE_CHECKS.index(error.validator) > first_check[
                tuple(error.absolute_path)]:
            continue
        if error.validator == "required" and (tuple(error.absolute_path), _required_key(error)) in meant:
            continue  # the misspelt key is reported, with this one as its did-you-mean
        found += with_rule(schema_rule(str(error.validator)), _diagnose(document, error, schema))
    judged = {tuple(error.absolute_path) for error in errors}
    quantities = [problem for path, text, key in profile_strings(document.data)
                  if not key and path and path[-1] in QUANTITY_UNITS and path not in judged
                  and _subschema(schema, list(path)).get("pattern") == kubernetes.PROFILE_QUANTITY_PATTERN
                  for problem in _quantity_problem(document, path, text)]
    return found + with_rule(SCHEMA_QUANTITY, quantities), sound and not quantities


def _quantity_problem(document: ProfileFile, path: tuple[str | int, ...], text: str) -> list[Diagnostic]:
    """A quantity Kubernetes would not keep as written (rounded up to its unit, or more than it counts): refused
    here, since every later stage computes with the very number the cluster would not use."""
    problem = kubernetes.quantity_problem(text, QUANTITY_UNITS[str(path[-1])])
    if problem is None:
        return []
    what, fix = problem
    shown = text if len(text) <= 64 else f"{text[:24]}...{text[-8:]} ({len(text)} characters)"
    return [Diagnostic(document.location(*path), f"{field_name(list(path))} is {shown}, {what}", fix)]


def _required_key(error: ValidationError) -> str:
    match = re.match(r"^'(.+)' is a required property$", error.message)
    return match.group(1) if match else str(error.validator_value)


def _meant_keys(errors: list[ValidationError]) -> set[tuple[tuple[Any, ...], str]]:
    """(path, key) for each unknown key's did-you-mean: a typo of a required key is one mistake, not two."""
    meant: set[tuple[tuple[Any, ...], str]] = set()
    for error in errors:
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = list(error.schema.get("properties", {})) if isinstance(error.schema, dict) else []
            for key in error.instance:
                if key not in allowed:
                    meant.update((tuple(error.absolute_path), m) for m in difflib.get_close_matches(str(key), allowed,
                                                                                                    n=1, cutoff=0.6))
    return meant


def _subschema(schema: dict[str, Any], path: list[str | int]) -> dict[str, Any]:
    node: dict[str, Any] = schema
    for key in path:
        if isinstance(key, int):
            node = node.get("items", {})
        elif key in node.get("properties", {}):
            node = node["properties"][key]
        else:
            extra = node.get("additionalProperties")
            node = extra if isinstance(extra, dict) else {}
    return node


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f"'{''.join(ch if ch.isprintable() else _escape(ch) for ch in value)}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    return str(value)


def _escape(ch: str) -> str:
    """A character one cannot see (a control character, a zero-width space, a direction mark) as an escape."""
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def _why_not(value: str, pattern: str) -> str:
    """What in `value` breaks `pattern`, in words: a character that is not ASCII (a look-alike, an invisible
    one), white space where there may be none, template text, or else the rule the pattern stands for."""
    for i, ch in enumerate(value, start=1):
        if not (ch.isascii() and ch.isprintable()):
            name = unicodedata.name(ch, "")
            what = f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X}, a control character"
            return f"character {i} is {what}" + ("" if ch.isascii() else ", which is not ASCII")
    space = re.search(r"\s", value)
    if space and re.fullmatch(pattern, re.sub(r"\s", "", value)):
        return f"character {space.start() + 1} is a space, and there may be none"
    if "{{" in value:
        return "Helm template text (`{{ ... }}`) is not allowed in it"
    return PATTERN_RULES.get(pattern, "")


def _written(document: ProfileFile, where: Any, value: Any) -> str:
    """A number as the profile wrote it (`1.30`, `.inf`), else as `_show` puts it."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return document.token_at(where) or _show(value)
    return _show(value)


def _diagnose(document: ProfileFile, error: ValidationError, schema: dict[str, Any]) -> list[Diagnostic]:
    path = list(error.absolute_path)
    # Set on every error jsonschema yields; its stubs also allow them unset.
    instance: Any = error.instance
    expected_value: Any = error.validator_value
    where = document.location(*path)
    sub = error.schema if isinstance(error.schema, dict) else {}
    about = sub.get("description", "")
    field = field_name(path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = list(sub.get("properties", {}))
        extras = [k for k in instance if k not in allowed]
        return [Diagnostic(document.location(*path, key, at_key=True),
                           f"unknown key {_show(str(key))} in {field}",
                           "only a hardware profile can extend another; write this one out in full"
                           if key == "extends" and not path else did_you_mean(str(key), allowed)) for key in extras]
    if kind == "required":
        key = _required_key(error)
        # A `required` in a conditional (hardware's `else`) has no described property beside it: look it up in place.
        described = (sub.get("properties", {}).get(key, {}).get("description")
                     or _subschema(schema, path).get("properties", {}).get(key, {}).get("description", ""))
        return [Diagnostic(where if path else document.location(), f"missing required key '{key}' in {field}",
                           f"add `{key}:` ({described})" if described else f"add `{key}:`")]
    if kind == "type":
        expected = expected_value if isinstance(expected_value, list) else [expected_value]
        expected_text = " or ".join(TYPE_NAMES.get(e, str(e)) for e in expected)
        hint = about
        written = _written(document, where, instance)
        if "string" in expected and isinstance(instance, (int, float)) and not isinstance(instance, bool):
            hint = f'quote it: "{written}"'
        return [Diagnostic(where, f"{field} must be {expected_text}, not {written}", hint)]
    if kind == "enum":
        options = [str(o) for o in expected_value]
        return [Diagnostic(where, f"{field} is {_show(instance)}, which is not allowed",
                           did_you_mean(str(instance), options))]
    if kind == "const":
        return [Diagnostic(where, f"{field} is {_show(instance)}",
                           f"it must be `{expected_value}`")]
    if kind == "pattern":
        why = _why_not(str(instance), str(expected_value))
        what = f"{field} {_show(instance)}"
        if "propertyNames" in error.schema_path:
            where, what = document.location(*path, instance, at_key=True), f"key {_show(instance)} in {field}"
        return [Diagnostic(where, f"{what} is not valid" + (f": {why}" if why else ""),
                           about or f"it must match {expected_value}")]
    if kind in ("maxLength", "minLength"):
        limit = expected_value
        word = "at most" if kind == "maxLength" else "at least"
        return [Diagnostic(where, f"{field} is {len(instance)} characters; it must be {word} {limit}",
                           about)]
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        op = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[kind]
        return [Diagnostic(where, f"{field} is {_written(document, where, instance)}; it must be {op} "
                           f"{expected_value}", about)]
    if kind == "minItems":
        return [Diagnostic(where, f"{field} needs at least {expected_value} item(s)", about)]
    if kind == "uniqueItems":
        return [Diagnostic(where, f"{field} lists the same item twice", "remove the repeated entry")]
    message = re.sub(r"\s+", " ", error.message)
    return [Diagnostic(where, f"{field}: {message}", about)]
