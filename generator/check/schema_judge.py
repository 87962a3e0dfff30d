"""What one kind's schema makes of a document, for `check` (schemas.SchemaSet): the compiled validator's verdict
first (check/compiled_schemas.py), and where it does not find the document valid, LinearValidator's errors in
kubectl's words."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from mpigen.check import linregex
from mpigen.check.crdschema import choose_branch, prune_nulls, types_of
from mpigen.readback.findings import Finding, RenderedObject, finding
from mpigen.support.compiled_schema import CompiledSchema
from mpigen.support.diagnostics import Severity
from mpigen.vocabulary.kubernetes import CONTROLLER_GEN_QUANTITY_PATTERN, QUANTITY_PATTERN, json_path

if TYPE_CHECKING:  # jsonschema is imported where a document is not found valid: a valid fleet never needs it
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

RULE = "schema"
RULE_PRUNED = "pruned"
"""A field no schema declares: the API server drops it (prunes it) where the client does not ask for strict field
validation, so the setting silently never takes effect; an error in mpigen's own output, a warning in a chart written
by hand (an error under `check --strict`)."""

UNKNOWN_FIELD = "unknown field"
PRUNED = "the API server drops it, and the setting never takes effect; remove it, or correct its name or place"

Problem = tuple[tuple[str | int, ...], str]


def short(value: Any, limit: int = 60) -> str:
    """A value as a message quotes it: cut short past `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def problems(error: ValidationError) -> list[Problem]:
    """(path, message) pairs for one jsonschema error; `unknown field` per undeclared key, like kubectl."""
    path = tuple(error.absolute_path)
    instance = error.instance
    if error.validator == "additionalProperties" and error.validator_value is False and isinstance(instance, dict) \
            and isinstance(error.schema, Mapping):
        known = set(error.schema.get("properties") or {})
        patterns = list(error.schema.get("patternProperties") or {})
        unknown = [key for key in instance
                   if key not in known and not any(linregex.search(p, str(key)) for p in patterns)]
        return [((*path, key), f"{UNKNOWN_FIELD}: {PRUNED}{_did_you_mean(key, known)}") for key in sorted(unknown, key=str)]
    if error.validator in ("anyOf", "oneOf") and error.context:
        fitting, types = choose_branch(error)
        if fitting is not None:
            return [problem for sub in fitting for problem in problems(sub)]
        if types is not None:
            return [(path, _type_message(instance, types))]
        from jsonschema.exceptions import best_match

        best = best_match(error.context)
        return [(path, f"{_message(error)}; {json_path(list(best.absolute_path)) or '.'}: {_message(best)}")]
    if error.validator == "pattern" and error.validator_value in (QUANTITY_PATTERN, CONTROLLER_GEN_QUANTITY_PATTERN):
        return [(path, f"{short(instance)} is not a quantity (such as 8, 500m or 16Gi)")]
    if error.validator == "type":
        return [(path, _type_message(instance, types_of(error.validator_value)))]
    return [(path, _message(error))]


_BLOCKING = ("is a required property", "is not of type", "is not one of", "is too long", "has too many properties",
             "does not have enough properties")


def stops_crd_rules(message: str) -> bool:
    """Whether a schema finding is of a kind after which the API server evaluates none of a CRD's CEL rules
    (strategy.go hasBlockingErr: Required, TypeInvalid, NotSupported, TooLong, TooMany), by jsonschema's wording."""
    return any(words in message for words in _BLOCKING)


def _did_you_mean(key: object, known: set[str]) -> str:
    """` (did you mean "containers"?)` for a field one typo away from a declared one (`contianers`); else ''."""
    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.8)
    return f" (did you mean {json.dumps(close[0])}?)" if close else ""


def _type_message(instance: Any, types: Iterable[str]) -> str:
    # Nearly every bundled type also admits null; naming it helps nobody who wrote a value.
    named = [t for t in dict.fromkeys(types) if t != "null" or instance is None]
    return f"{short(instance)} is not of type {', '.join(map(repr, named or ['null']))}"


def _message(error: ValidationError) -> str:
    """jsonschema's message, with a long instance (a whole pod spec, say) cut short."""
    text = repr(error.instance)
    return error.message.replace(text, short(error.instance), 1) if len(text) > 60 else error.message


@dataclass(frozen=True)
class Judge:
    """The validators of one kind's schema: the compiled validator (None where LinearValidator alone judges), asked
    first, and LinearValidator, whose verdict stands and whose errors are the findings."""

    schema: Any
    custom: bool
    """A custom resource: its null fields are pruned before it is judged."""
    compiled: CompiledSchema | None
    registry: Callable[[], Registry]
    """jsonschema's registry of the Kubernetes definitions the schema `$ref`s."""

    @cached_property
    def validator(self) -> Draft202012Validator:
        """LinearValidator, made (and jsonschema imported) where a document is first not found valid."""
        from mpigen.check.linear_validator import LinearValidator

        return LinearValidator(self.schema, registry=self.registry())

    def compiled_verdict(self, obj: dict[str, Any]) -> tuple[bool | None, Any]:
        """The compiled validator's verdict on a document (None: not asked), and what LinearValidator judges: the
        document, or a custom resource with its null fields pruned (one with no null is that already)."""
        if self.compiled is not None and self.custom:
            verdict = self.compiled.verdict(obj, nulls=False)
            if verdict is not None:
                return verdict, obj
        instance = prune_nulls(obj, self.schema) if self.custom and isinstance(self.schema, Mapping) else obj
        return (None if self.compiled is None else self.compiled.verdict(instance)), instance

    def findings(self, document: RenderedObject, instance: Any, pruned: Severity = Severity.ERROR) -> list[Finding]:
        """LinearValidator's findings on the document (`instance` is what it judges); a field the schema does not
        declare is a finding of rule `pruned`, of severity `pruned`."""
        try:
            found = [problem for error in self.validator.iter_errors(instance) for problem in problems(error)]
        except linregex.Unsupported as error:  # a CRD pattern outside the syntax RE2 and ECMA-262 share
            return [finding(document, "", f"the {document.obj['apiVersion']} {document.obj['kind']} schema cannot be "
                            f"used: a pattern: {error}", RULE, Severity.WARNING)]
        unique = sorted(set(found), key=lambda problem: (json_path(list(problem[0])), problem[1]))
        return [finding(document, json_path(list(path)), message, RULE_PRUNED, pruned)
                if message.startswith(UNKNOWN_FIELD) else finding(document, json_path(list(path)), message, RULE)
                for path, message in unique]
