"""CRD structural schemas as JSON Schema, for `check` (schemas.SchemaSet) to judge custom resources as the API server would.

kubernetes-validate only knows built-in kinds; an MPIJob or NetworkAttachmentDefinition that the API
server would reject (or silently prune) must be caught here instead. A CRD's structural schema is
OpenAPI v3.0 with Kubernetes extensions, so it is translated into JSON Schema 2020-12, strictly:
an object that lists its `properties` rejects any other field, as `kubectl apply` with
server-side field validation (`Strict`) does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema is imported where a document is not found valid (check/schema_judge.py)
    from jsonschema.exceptions import ValidationError

SchemaKey = tuple[str, str]
"""(apiVersion, kind), e.g. ("kubeflow.org/v2beta1", "MPIJob")."""

# Keywords that mean the same in OpenAPI v3.0 and JSON Schema 2020-12, copied as they are.
_COPIED = ("enum", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems",
           "uniqueItems", "minProperties", "maxProperties", "multipleOf", "required")
_JUNCTORS = ("allOf", "anyOf", "oneOf")
# Kept as they are for the CRD's CEL rules (generator/check/cel/): the rules, the defaults the API server applies
# before it validates, the list and map types that say which old value a transition rule compares with, and whether
# a node is an embedded resource (its `self` sees only metadata.name and generateName). Neither schema judge reads
# these keywords (`default` is an annotation in JSON Schema 2020-12). `format` is not kept: both judges would then
# have to agree on asserting it. A string the server gives CEL as another type than a string (k8s.io/apiserver
# pkg/cel/common/schemas.go SchemaDeclType: format byte as bytes, duration as a duration, date and date-time as a
# timestamp) is marked CEL_TYPE with that type instead: the rules that read it are not evaluated (cel/tree.py).
_KEPT_FOR_RULES = ("x-kubernetes-validations", "default", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
                   "x-kubernetes-map-type", "x-kubernetes-embedded-resource")
CEL_TYPE = "x-mpigen-cel-type"
_CEL_TYPED_FORMATS = {"byte": "bytes", "duration": "duration", "date": "timestamp", "date-time": "timestamp"}
# Fields the API server handles itself on every object (ObjectMeta is validated separately).
_RESOURCE_FIELDS: dict[str, Any] = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                    "metadata": {"type": "object"}}


def convert_schema(node: Mapping[str, Any], strict: bool = True) -> dict[str, Any]:
    """JSON Schema 2020-12 for one structural-schema node.

    `strict` adds `additionalProperties: false` to objects that list `properties` and neither
    `additionalProperties` nor `x-kubernetes-preserve-unknown-fields: true`. Branches of
    `allOf`/`anyOf`/`oneOf`/`not` are converted non-strictly: in a structural schema they only
    add value checks to fields the main schema already declares, they never declare fields.
    """
    out: dict[str, Any] = {}
    int_or_string = bool(node.get("x-kubernetes-int-or-string"))
    preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(node.get("x-kubernetes-embedded-resource"))

    if int_or_string:
        out["type"] = ["integer", "string"]
    elif "type" in node:
        out["type"] = node["type"]
    elif embedded:
        out["type"] = "object"

    if node.get("type") == "string" and node.get("format") in _CEL_TYPED_FORMATS:
        out[CEL_TYPE] = _CEL_TYPED_FORMATS[node["format"]]
    for key in (*_COPIED, *_KEPT_FOR_RULES):
        if key in node:
            out[key] = node[key]
    # OpenAPI v3.0 `exclusiveMinimum: true` qualifies `minimum`; JSON Schema 2020-12 takes a number.
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if node.get(exclusive) is True and bound in node:
            out[exclusive] = out.pop(bound)

    properties = {name: convert_schema(sub, strict) for name, sub in (node.get("properties") or {}).items()}
    if embedded:
        properties = {**_RESOURCE_FIELDS, **properties}
    if properties:
        out["properties"] = properties
    if "additionalProperties" in node:
        extra = node["additionalProperties"]
        out["additionalProperties"] = convert_schema(extra, strict) if isinstance(extra, Mapping) else bool(extra)
    elif strict and properties and not preserve:
        out["additionalProperties"] = False
    if isinstance(node.get("items"), Mapping):
        out["items"] = convert_schema(node["items"], strict)

    for junctor in _JUNCTORS:
        if junctor in node:
            out[junctor] = [convert_schema(branch, strict=False) for branch in node[junctor]]
    if isinstance(node.get("not"), Mapping):
        out["not"] = convert_schema(node["not"], strict=False)

    if node.get("nullable"):
        out = _nullable(out)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`nullable: true`: null is accepted as well; junctor branches cannot see that, so wrap them."""
    if any(key in schema for key in (*_JUNCTORS, "not")):
        return {"anyOf": [{"type": "null"}, schema]}
    schema = dict(schema)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        schema["type"] = [*types, "null"]
    if "enum" in schema:
        schema["enum"] = [*schema["enum"], None]
    return schema


def resource_schema(open_api_v3_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The converted top-level schema, with `apiVersion`, `kind` and `metadata` always allowed.

    The API server validates ObjectMeta itself, so a CRD's own `metadata` schema is only checked
    leniently (it may only narrow `name`/`generateName`).
    """
    schema = convert_schema(open_api_v3_schema)
    schema["type"] = "object"
    properties = dict(schema.get("properties", {}))
    for name, default in _RESOURCE_FIELDS.items():
        given = open_api_v3_schema.get("properties", {}).get(name)
        properties[name] = {**convert_schema(given, strict=False), "type": default["type"]} if given else default
    schema["properties"] = properties
    if not open_api_v3_schema.get("x-kubernetes-preserve-unknown-fields"):
        schema["additionalProperties"] = False
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def crd_schemas(doc: Mapping[str, Any]) -> dict[SchemaKey, dict[str, Any]]:
    """Converted schemas of every served version of one CRD document."""
    spec = doc.get("spec") or {}
    group, kind = spec.get("group", ""), (spec.get("names") or {}).get("kind", "")
    # apiextensions.k8s.io/v1beta1 CRDs may share one schema between their versions.
    shared = (spec.get("validation") or {}).get("openAPIV3Schema")
    versions = spec.get("versions") or ([{"name": spec["version"], "served": True}] if spec.get("version") else [])
    schemas: dict[SchemaKey, dict[str, Any]] = {}
    for version in versions:
        if not version.get("served", True):
            continue
        openapi = (version.get("schema") or {}).get("openAPIV3Schema") or shared
        if openapi is None:
            openapi = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        api_version = f"{group}/{version['name']}" if group else version["name"]
        schemas[(api_version, kind)] = resource_schema(openapi)
    return schemas


_NULL = {"type": "null"}


def unwrap_nullable(schema: Mapping[str, Any] | None) -> tuple[bool, Mapping[str, Any]]:
    """(nullable, the schema without its null alternative) of a converted node."""
    schema = schema or {}
    branches = schema.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and branches[0] == _NULL:
        return True, branches[1]
    types = schema.get("type")
    return (types == "null" or (isinstance(types, list) and "null" in types)), schema


def prune_nulls(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """A copy of `value` without null fields that the (converted) schema does not accept as null.

    The API server drops such fields before validating (the upstream `pi-intel` example has a bare
    `command:`), so they are not errors.
    """
    _, schema = unwrap_nullable(schema)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, Mapping) else None)
            if item is None and not unwrap_nullable(sub)[0]:
                continue
            out[key] = prune_nulls(item, sub)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        return [prune_nulls(item, items if isinstance(items, Mapping) else None) for item in value]
    return value


def choose_branch(error: ValidationError) -> tuple[list[ValidationError] | None, list[str] | None]:
    """For an anyOf/oneOf error, the errors of the one branch meant for this kind of value (a nullable
    field's non-null branch, say), else (None, the types some branch would take) when no branch takes
    this type of value, else (None, None) when several branches could be meant."""
    branches: dict[Any, list[ValidationError]] = {}
    for sub in error.context or ():
        branches.setdefault(sub.schema_path[0], []).append(sub)
    fitting = [errs for errs in branches.values() if not any(e.validator == "type" and not e.relative_path for e in errs)]
    if len(fitting) == 1:
        return fitting[0], None
    if not fitting:
        types = [t for sub in error.context or () if sub.validator == "type" and not sub.relative_path
                 for t in types_of(sub.validator_value)]
        return None, types
    return None, None


def types_of(validator_value: Any) -> list[Any]:
    """A `type` keyword's value as a list: one type name, or several."""
    return [validator_value] if isinstance(validator_value, str) else list(validator_value)
