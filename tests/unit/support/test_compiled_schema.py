"""The compiled validator (generator/support/compiled_schema.py) is asked only where its verdict is jsonschema's: a value
jsonschema-rs judges otherwise (a non-finite number), one it cannot take (a lone surrogate, a date), a keyword whose
meaning differs, a schema it refuses or a reference it would have to fetch all leave the document to jsonschema."""

from __future__ import annotations

import datetime
import math
from typing import Any

import jsonschema_rs
import pytest
from jsonschema import Draft202012Validator

from mpigen.support.compiled_schema import UNVETTED_KEYWORDS, compile_schema, keywords, plain


def verdicts(schema: dict[str, Any], instance: Any) -> tuple[bool | None, bool]:
    compiled = compile_schema(schema)
    assert compiled is not None
    return compiled.verdict(instance), Draft202012Validator(schema).is_valid(instance)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("schema", [{"maximum": 5}, {"minimum": 5}, {"not": {"type": "number"}},
                                    {"properties": {"a": {"maximum": 5}}}, {"items": {"exclusiveMaximum": 0}}])
def test_a_non_finite_number_is_left_to_jsonschema(schema: dict[str, Any], value: float) -> None:
    """jsonschema-rs holds `.inf` as a value of no type, which a bound passes over."""
    instance: Any = {"a": value} if "properties" in schema else [1, value] if "items" in schema else value
    assert verdicts(schema, instance)[0] is None
    assert not plain(instance)


def test_the_guard_alone_would_have_let_infinity_past_a_bound() -> None:
    """Why the guard: jsonschema-rs on its own finds `.inf` below any maximum."""
    assert jsonschema_rs.Draft202012Validator({"maximum": 5}).is_valid(math.inf)
    assert not Draft202012Validator({"maximum": 5}).is_valid(math.inf)


@pytest.mark.parametrize("instance", ["\ud800", datetime.date(2026, 1, 1), [b"bytes"], {1: "a key that is no text"},
                                      {"\ud800": 1}])
def test_a_value_jsonschema_rs_cannot_take_is_left_to_jsonschema(instance: Any) -> None:
    compiled = compile_schema({"type": ["object", "array", "string"]})
    assert compiled is not None
    assert compiled.verdict(instance) is None
    assert not compiled.accepts(instance)


@pytest.mark.parametrize("text", ["\ud800", "\ud800\udc00", "a\udfffb"])
@pytest.mark.parametrize("schema", [{"type": "string"}, {"maxLength": 1}, {"minLength": 2}, {"enum": ["\U00010000"]},
                                    {"const": "x"}, {"pattern": "^.$"}])
def test_a_lone_surrogate_is_judged_as_jsonschema_judges_it_or_left_to_it(schema: dict[str, Any], text: str) -> None:
    """Inside a document jsonschema-rs reads such a text where it can as Python counts it, and raises elsewhere."""
    for instance, wrapped in ((text, schema), ({"a": text}, {"properties": {"a": schema}}), ([text], {"items": schema})):
        compiled, reference = verdicts(wrapped, instance)
        assert compiled in (None, reference), (wrapped, instance)


@pytest.mark.parametrize(("schema", "instance"), [
    ({"multipleOf": 0.01}, 0.07),  # jsonschema-rs: a multiple; jsonschema: 0.07 / 0.01 is 7.000000000000001
    ({"unevaluatedProperties": False, "properties": {"a": {}}}, {"a": 1, "b": 2}),
    ({"dependencies": {"a": ["b"]}}, {"a": 1}),
    ({"properties": {"x": {"allOf": [{"contentEncoding": "base64"}]}}}, {"x": "!"}),
])
def test_a_keyword_whose_meaning_differs_leaves_the_schema_to_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    assert compile_schema(schema) is None
    assert any(key in UNVETTED_KEYWORDS for key, _ in keywords(schema))


def test_multiple_of_would_differ() -> None:
    assert jsonschema_rs.Draft202012Validator({"multipleOf": 0.01}).is_valid(0.07)
    assert not Draft202012Validator({"multipleOf": 0.01}).is_valid(0.07)


@pytest.mark.parametrize("schema", [
    {"type": 5},  # no meta-schema allows it
    {"minimum": 1, "exclusiveMinimum": True},  # draft 4's spelling
    {"$ref": "https://example.invalid/schema.json"},  # never fetched
    {"$ref": "other.json#/$defs/x"},
])
def test_a_schema_jsonschema_rs_refuses_or_would_fetch_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_schema(schema) is None


def test_a_pattern_the_regex_crate_does_not_read_leaves_the_schema_to_jsonschema() -> None:
    assert compile_schema({"pattern": "(?<=a)b"}, pattern_options=jsonschema_rs.RegexOptions()) is None


def test_a_registry_resolves_references_without_fetching() -> None:
    registry = jsonschema_rs.Registry([("https://example.invalid/defs.json", {"$defs": {"n": {"type": "integer"}}})])
    compiled = compile_schema({"$ref": "https://example.invalid/defs.json#/$defs/n"}, registry=registry)
    assert compiled is not None
    assert (compiled.verdict(3), compiled.verdict("3")) == (True, False)


def test_formats_are_not_judged_as_jsonschema_judges_none() -> None:
    for schema, instance in (({"format": "date-time"}, "not a time"), ({"format": "int32"}, 2**40),
                             ({"format": "regex"}, "(")):
        assert verdicts(schema, instance) == (True, True)


def test_longest_and_nulls_leave_a_document_to_jsonschema() -> None:
    compiled = compile_schema({"type": "object"}, longest=8)
    assert compiled is not None
    assert compiled.verdict({"a": "x" * 8}) is True
    assert compiled.verdict({"a": "x" * 9}) is None
    assert compiled.verdict({"k" * 9: 1}) is None
    assert compiled.verdict({"a": None}) is True
    assert compiled.verdict({"a": [None]}, nulls=False) is None
    assert compiled.verdict({"a": [1]}, nulls=False) is True


@pytest.mark.parametrize(("schema", "instance"), [
    ({"type": "integer"}, 1.0), ({"type": "integer"}, 10**400), ({"maximum": 10}, 10**30), ({"type": "integer"}, True),
    ({"enum": [1]}, True), ({"enum": [1]}, 1.0), ({"const": False}, 0), ({"uniqueItems": True}, [1, True]),
    ({"uniqueItems": True}, [1, 1.0]), ({"uniqueItems": True}, [{"a": 1}, {"a": 1.0}]), ({"const": 1e20}, 10**20),
    ({"maximum": 9007199254740992}, 9007199254740993), ({"minLength": 2}, "\U0001f600"), ({"type": "number"}, -0.0),
    ({"required": ["a"]}, ["a"]), ({"prefixItems": [{"type": "string"}], "items": False}, ["a", 2]),
])
def test_plain_values_get_jsonschema_s_verdict(schema: dict[str, Any], instance: Any) -> None:
    compiled, reference = verdicts(schema, instance)
    assert compiled == reference


def test_keywords_are_found_in_every_subschema_and_never_in_names_or_data() -> None:
    schema = {"properties": {"pattern": {"type": "string"}, "multipleOf": {"items": [{"pattern": "^a$"}]}},
              "enum": [{"multipleOf": 2}], "$defs": {"d": {"not": {"patternProperties": {"^x": {}}}}},
              "x-extension": {"contentEncoding": "base64"}}
    found = {key for key, _ in keywords(schema)}
    assert {"properties", "enum", "$defs", "type", "items", "pattern", "not", "patternProperties",
            "x-extension", "contentEncoding"} == found
    assert "multipleOf" not in found
