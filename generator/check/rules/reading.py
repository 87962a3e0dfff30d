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


def values_under(obj: Any, key: str) -> Iterable[tuple[Path, Any]]:
    """Every value of `key` in the mappings of an object, at any depth, with the path to it, in document order."""
    stack: list[tuple[Path, Any]] = [((), obj)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            if key in node:
                yield (*path, key), node[key]
            stack += reversed([((*path, k), v) for k, v in node.items() if isinstance(k, str) and k != key])
        elif isinstance(node, list):
            stack += reversed([((*path, i), v) for i, v in enumerate(node)])


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
