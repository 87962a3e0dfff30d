"""An object as a CRD's CEL rules see it: what the API server gives them as `self` (and `oldSelf`).

Before it validates, the server prunes null fields the schema does not let be null and applies the structural
defaults (`default`) to absent fields; a rule then sees the declared properties under escaped names (`__dash__`,
`__dot__`, `__slash__`, `__underscores__`, `__{word}__` for CEL's reserved words, which since Kubernetes 1.32 also
select their field unescaped; a name that cannot be escaped is not visible), map keys (additionalProperties) as they
are, and at a resource's root (or an embedded resource) only `apiVersion`, `kind` and `metadata.name` /
`metadata.generateName`. int-or-string values are as given; a `number` field given as an integer is a double.

Not as the server: date-time and duration strings stay strings (the server gives timestamps and durations; the
bindings take no such values in), and lists of `x-kubernetes-list-type: set` or `map` compare in order (the server
compares them as sets): judged against a live object, a vendored `self == oldSelf` on such a list takes a reordered
list as changed where the server does not.

Upstream: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/cel/escaping.go @
37005d1a7ef979c16295d682b37a5e01e45664b2 (Escape); kubernetes/kubernetes#126188 (reserved words as field names,
1.32); apiextensions-apiserver pkg/apiserver/schema/cel/validation.go @ 00c30b354df7afc15258ecdbdd629555d200de5a
(null values are not validated; WithTypeAndObjectMeta at resource roots); apiextensions-apiserver
pkg/apiserver/schema/defaulting (defaults, then pruning, before validation).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mpigen.check.crdschema import unwrap_nullable

_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
                       "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"})
_EXPAND = re.compile(r"(__|[-./]|[^a-zA-Z0-9-./_])")
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_VISIBLE_METADATA = ("name", "generateName")


@lru_cache(maxsize=4096)
def escape(name: str) -> str | None:
    """The CEL identifier of a property name, as the server escapes it; None where it cannot be (not visible)."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    unsupported = False

    def replace(match: re.Match[str]) -> str:
        nonlocal unsupported
        unsupported = unsupported or match[0] not in _ESCAPES
        return _ESCAPES.get(match[0], "")

    escaped = _EXPAND.sub(replace, name)
    return None if unsupported else escaped


def is_nullable(schema: Mapping[str, Any] | None) -> bool:
    return unwrap_nullable(schema)[0]


def present(value: Mapping[str, Any], name: str, schema: Mapping[str, Any]) -> tuple[bool, Any]:
    """(whether the field is there after pruning and defaulting, its value): a null the schema does not let be null
    is pruned, and an absent field with a `default` takes it."""
    item = value.get(name)
    if item is None and (name not in value or not is_nullable(schema)):
        node = unwrap_nullable(schema)[1]
        if "default" in node:
            return True, copy.deepcopy(node["default"])
        return False, None
    return True, item


@dataclass(frozen=True)
class _Layout:
    """What building `self` needs of one schema node, worked out once per node: each declared property's CEL name
    and schema, those with a default, the map values' and items' schemas."""

    node: Mapping[str, Any]
    properties: dict[str, tuple[str | None, Mapping[str, Any]]]
    defaulted: tuple[tuple[str, Mapping[str, Any]], ...]
    extra: Mapping[str, Any] | None
    items: Mapping[str, Any] | None
    number: bool
    embedded: bool


_LAYOUTS: dict[int, _Layout] = {}


def _layout(schema: Mapping[str, Any] | None) -> _Layout:
    known = _LAYOUTS.get(id(schema))
    if known is not None and known.node is schema:
        return known
    node = unwrap_nullable(schema)[1]
    declared = {name: (escape(name), sub) for name, sub in (node.get("properties") or {}).items()
                if isinstance(sub, Mapping)}
    extra, items = node.get("additionalProperties"), node.get("items")
    layout = _Layout(schema if schema is not None else node, declared,
                     tuple((name, sub) for name, (_, sub) in declared.items() if "default" in unwrap_nullable(sub)[1]),
                     extra if isinstance(extra, Mapping) else None, items if isinstance(items, Mapping) else None,
                     _types(node) == ["number"], bool(node.get("x-kubernetes-embedded-resource")))
    if schema is not None:
        _LAYOUTS[id(schema)] = layout
    return layout


def as_cel(value: Any, schema: Mapping[str, Any] | None, resource_root: bool = False) -> Any:
    """`value` as a rule at a node of this (converted) schema sees it."""
    if value is None:
        return None
    if isinstance(value, dict):
        layout = _layout(schema)
        return _object(value, layout, resource_root or layout.embedded)
    if isinstance(value, list):
        items = _layout(schema).items
        return [as_cel(item, items) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and _layout(schema).number:
        return float(value)
    return value


def _object(value: dict[Any, Any], layout: _Layout, resource_root: bool) -> dict[Any, Any]:
    if layout.properties:
        out: dict[Any, Any] = {}
        for name, item in value.items():
            declared = layout.properties.get(name)
            if declared is None or declared[0] is None or (item is None and not is_nullable(declared[1])):
                continue  # undeclared (pruned), not escapable (not visible), or a pruned null (defaulted below)
            escaped, sub = declared
            if resource_root and name == "metadata" and isinstance(item, dict):
                out[escaped] = {key: item[key] for key in _VISIBLE_METADATA if isinstance(item.get(key), str)}
            else:
                out[escaped] = as_cel(item, sub)
        for name, sub in layout.defaulted:
            escaped = layout.properties[name][0]
            if escaped is not None and escaped not in out:
                out[escaped] = as_cel(present(value, name, sub)[1], sub)
        for name in _RESERVED.intersection(layout.properties):  # since Kubernetes 1.32 a reserved word selects its
            escaped = f"__{name}__"                                # field unescaped too
            if escaped in out:
                out[name] = out[escaped]
        return out
    if layout.extra is not None:
        extra = layout.extra
        return {key: as_cel(item, extra) for key, item in value.items() if item is not None or is_nullable(extra)}
    return value  # free-form (x-kubernetes-preserve-unknown-fields): as it is


def _types(node: Mapping[str, Any]) -> list[str]:
    types = node.get("type")
    return [types] if isinstance(types, str) else [t for t in types or () if t != "null"]


def type_name(schema: Mapping[str, Any] | None) -> str:
    """The schema's `type` as the server's error prints it (`Invalid value: "object"`); '' for int-or-string."""
    types = _types(unwrap_nullable(schema)[1])
    return types[0] if len(types) == 1 else ""
