"""Reading untrusted rendered objects without raising: the rules skip what they cannot read, the schema check reports it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mpigen.readback.findings import RenderedObject
from mpigen.vocabulary.kubernetes import json_path

Path = tuple[str | int, ...]

def path_of(parts: Iterable[str | int]) -> str:
    """`json_path`, with keys such as `nvidia.com/gpu` written `["nvidia.com/gpu"]` instead of split at dots."""
    return json_path(parts, quote_keys=True)


Trail = tuple[Any, ...] | None
"""A path as a chain of (last part, trail of the parent) pairs: a walk extends it in constant time per node and spells
it out (`unwind`) only for what it yields."""


def unwind(trail: Trail) -> Path:
    """The path a trail stands for, root first."""
    parts: list[str | int] = []
    while trail is not None:
        parts.append(trail[0])
        trail = trail[1]
    return tuple(reversed(parts))


def containers_below(node: Any, trail: Trail) -> list[tuple[Trail, Any]]:
    """The mappings and lists directly inside `node`, each with its trail, in reverse document order (for a stack):
    a scalar holds nothing to walk into."""
    if isinstance(node, dict):
        return [((key, trail), value) for key, value in reversed(node.items())
                if isinstance(value, (dict, list)) and isinstance(key, str)]
    if isinstance(node, list):
        return [((index, trail), node[index]) for index in range(len(node) - 1, -1, -1)
                if isinstance(node[index], (dict, list))]
    return []


def values_under(obj: Any, key: str) -> Iterable[tuple[Path, Any]]:
    """Every value of `key` in the mappings of an object, at any depth, with the path to it, in document order."""
    stack: list[tuple[Trail, Any]] = [(None, obj)]
    while stack:
        trail, node = stack.pop()
        if isinstance(node, dict) and key in node:
            yield (*unwind(trail), key), node[key]
            stack += [entry for entry in containers_below(node, trail) if entry[0] is None or entry[0][0] != key]
        else:
            stack += containers_below(node, trail)


def as_dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def metadata_name(document: RenderedObject) -> str:
    """metadata.name when it is a string ('' otherwise: RenderedObject.name would stringify other types)."""
    metadata = as_dict(document.obj.get("metadata"))
    return (as_str(metadata.get("name")) or "") if metadata else ""
