"""A compiled JSON Schema validator (jsonschema-rs, in Rust) as the first and fast judge of a document: where it
finds the document valid, nothing more is asked; anything else goes to the pure-Python `jsonschema`, whose errors
say what is wrong and where, and whose verdict stands. So a verdict is always jsonschema's, and the compiled
validator only spares its time where there is nothing to say (nearly every document of a fleet).

The compiled validator is never asked where the two could differ:
- a schema that holds a keyword whose meaning differs between them (or that the caller's jsonschema validator does
  not judge): `UNVETTED_KEYWORDS`, found anywhere in it;
- a schema it refuses, or any exception it raises on a document (a string with a lone surrogate, a value of a type
  it does not know): the schema, or that document, is jsonschema's alone;
- a value that is not plain JSON: jsonschema-rs holds a non-finite float (`.inf`, `.nan`) as a value of no JSON type,
  which a bound such as `maximum` passes over where jsonschema counts it a number. A guard schema, run by the
  compiled validator too, sends every document holding one (or, for a caller that asks, a null, or a string or
  key longer than some length) to jsonschema.

Formats are not judged (`validate_formats=False`), as jsonschema judges none without a format checker. Documents
are what the YAML readers build (dicts with text keys, lists, text, numbers, booleans, null): a tuple, which
jsonschema-rs takes for an array and jsonschema for no type, never reaches here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import jsonschema_rs

UNVETTED_KEYWORDS = frozenset({
    "unevaluatedProperties", "unevaluatedItems",  # check's LinearValidator does not judge them
    "multipleOf",  # a float divisor: jsonschema-rs takes 0.07 as a multiple of 0.01, jsonschema does not
    "dependencies", "additionalItems",  # earlier drafts' keywords: jsonschema-rs judges some of them in 2020-12
    "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary",
    "contentEncoding", "contentMediaType", "contentSchema",
})
"""Keywords whose schema jsonschema alone judges."""

DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
"""Keywords whose value is data, not schema: nothing in them is a keyword."""
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
"""Keywords whose value maps names (not keywords) to schemas."""

JSON_TYPES = ("object", "array", "string", "number", "boolean", "null")


def keywords(schema: Any) -> Iterator[tuple[str, Any]]:
    """Every (keyword, value) of a schema and its subschemas, at any depth. A mapping under an unknown keyword
    (`x-kubernetes-...`) is read as a schema too: what is found there can only make a caller more careful."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if type(node) is list:
            stack += node
        elif isinstance(node, dict):
            for key, value in node.items():
                yield key, value
                if key in SCHEMA_MAPS and isinstance(value, dict):
                    stack += value.values()
                elif key not in DATA_KEYWORDS and isinstance(value, (dict, list)):
                    stack.append(value)


@cache
def _guard(nulls: bool, longest: int | None) -> jsonschema_rs.Validator:
    """Every value of a document a finite number, text, boolean, container (or null, where `nulls`), each text and
    key at most `longest` characters long."""
    bounds: dict[str, Any] = {} if longest is None else {"maxLength": longest, "propertyNames": {"maxLength": longest}}
    types = list(JSON_TYPES if nulls else JSON_TYPES[:-1])
    return jsonschema_rs.Draft202012Validator({"type": types, "items": {"$ref": "#"},
                                               "additionalProperties": {"$ref": "#"}, **bounds}, validate_formats=False)


def plain(instance: Any, nulls: bool = True, longest: int | None = None) -> bool:
    """Whether `instance` is plain JSON the compiled validator judges as jsonschema does: no non-finite float (nor a
    null, unless `nulls`), no text or key longer than `longest`. False where that cannot be told."""
    try:
        return _guard(nulls, longest).is_valid(instance)
    except Exception:  # a value jsonschema-rs cannot take (a lone surrogate, a type it does not know)
        return False


@dataclass(frozen=True)
class CompiledSchema:
    """A schema compiled by jsonschema-rs; `longest`: the longest text or key it may judge (None: any)."""

    validator: jsonschema_rs.Validator
    longest: int | None = None

    def verdict(self, instance: Any, nulls: bool = True) -> bool | None:
        """The compiled validator's verdict on `instance`, or None where it is not asked (see the module's doc);
        `nulls=False`: nor where `instance` holds a null."""
        if not plain(instance, nulls, self.longest):
            return None
        try:
            return self.validator.is_valid(instance)
        except Exception:
            return None

    def accepts(self, instance: Any) -> bool:
        """Whether `instance` is valid, said only where the compiled validator says so; False: ask jsonschema."""
        return self.verdict(instance) is True


def compile_schema(schema: dict[str, Any] | bool, longest: int | None = None, vetted: bool = False,
                   **options: Any) -> CompiledSchema | None:
    """`schema` compiled as Draft 2020-12 with jsonschema-rs (`options`: its registry, keywords, pattern options), or
    None where jsonschema alone must judge it: a keyword of UNVETTED_KEYWORDS (`vetted`: the caller looked), or a
    schema jsonschema-rs refuses. References are never fetched: a `$ref` the registry given does not hold makes the
    schema jsonschema's."""
    if not vetted and any(key in UNVETTED_KEYWORDS for key, _ in keywords(schema)):
        return None
    try:
        validator = jsonschema_rs.Draft202012Validator(schema, validate_formats=False, retriever=_refuse, **options)
    except Exception:
        return None
    return CompiledSchema(validator, longest)


def _refuse(uri: str) -> Any:
    """The retriever: nothing is fetched, from the network or the disk."""
    raise LookupError(f"{uri} is not fetched")
