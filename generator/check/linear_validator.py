"""A jsonschema validator that runs every pattern in linear time.

A CRD's `pattern` comes from the chart under review; Python's `re` backtracks (`^(a+)+$` runs for hours on
forty characters), Kubernetes checks with Go's RE2, which does not. Every keyword that runs a pattern uses
linregex instead; `unevaluatedProperties`, which Kubernetes' CRD schemas do not have, is not judged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from mpigen.check import linregex


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if validator.is_type(instance, "string") and not linregex.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
                        ) -> Iterable[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if linregex.search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _extra_keys(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [key for key in instance
            if key not in properties and not any(linregex.search(pattern, key) for pattern in patterns)]


def _additional_properties(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = set(_extra_keys(instance, schema))
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            listed = sorted(extras, key=str)
            yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, listed))} "
                                  f"{'was' if len(listed) == 1 else 'were'} unexpected)")


def _not_judged(validator: Any, value: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    return iter(())


LinearValidator = validators.extend(Draft202012Validator, {
    "pattern": _pattern, "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties, "unevaluatedProperties": _not_judged})
