"""Object-by-object changes within one chart or one bootstrap file: what was added, removed, changed or renamed,
each with its unified diff. The caller keys the objects it hands in by cluster and chart, so two clusters' objects
of the same name never meet here."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from mpigen.support import yamlio
from mpigen.vocabulary import helm

ADDED = "added"
REMOVED = "removed"
CHANGED = "changed"
REPLACED = "replaced"
"""A renamed object of one Helm release: a new run of a job (its name carries a digest of the run)."""
STATUSES = (ADDED, REMOVED, CHANGED, REPLACED)


@dataclass(frozen=True)
class ObjectChange:
    key: str
    status: str
    """One of `STATUSES`."""
    diff: str = ""
    before: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    """The object on the old side (None where it was added); a text file's changes carry neither."""
    after: dict[str, Any] | None = field(default=None, compare=False, repr=False)


def object_key(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    name = metadata.get("name") or "?"
    return f"{obj.get('apiVersion', '?')} {obj.get('kind', '?')} {namespace + '/' if namespace else ''}{name}"


def object_name(obj: dict[str, Any]) -> str:
    """`Kind namespace/name`, as a reviewer names an object."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    return f"{obj.get('kind', '?')} {namespace + '/' if namespace else ''}{metadata.get('name') or '?'}"


def _lineage(obj: dict[str, Any]) -> tuple[str, ...] | None:
    """What a renamed object keeps: its type, namespace and the Helm release it belongs to."""
    metadata = obj.get("metadata") or {}
    release = (metadata.get("labels") or {}).get(helm.INSTANCE_LABEL)
    if not release:
        return None
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(metadata.get("namespace") or ""), str(release))


def _replacements(removed: dict[str, dict[str, Any]], added: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Removed key -> added key, where a release lost exactly one object of a kind and gained exactly one:
    an MPIJob whose name carries the run's hash, and its hostfile ConfigMap, after a profile edit."""
    def by_lineage(objects: dict[str, dict[str, Any]]) -> dict[tuple[str, ...], list[str]]:
        grouped: dict[tuple[str, ...], list[str]] = {}
        for key, obj in objects.items():
            lineage = _lineage(obj)
            if lineage:
                grouped.setdefault(lineage, []).append(key)
        return grouped
    gone, new = by_lineage(removed), by_lineage(added)
    return {gone[lineage][0]: new[lineage][0] for lineage in gone.keys() & new.keys()
            if len(gone[lineage]) == 1 and len(new[lineage]) == 1}


def keyed(objects: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The objects by key, and the keys held twice (the later object is the one compared, as the later one is what
    `kubectl apply` leaves)."""
    by_key: dict[str, dict[str, Any]] = {}
    twice: list[str] = []
    for obj in objects:
        key = object_key(obj)
        if key in by_key and key not in twice:
            twice.append(key)
        by_key[key] = obj
    return by_key, twice


def diff_objects(old: list[dict[str, Any]] | tuple[dict[str, Any], ...],
                 new: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[ObjectChange]:
    """The changes from `old` to `new`, objects of one chart (or one file): renames pair only within it."""
    before, _ = keyed(old)
    after, _ = keyed(new)
    removed = {k: v for k, v in before.items() if k not in after}
    added = {k: v for k, v in after.items() if k not in before}
    replaced = _replacements(removed, added)
    replacing = set(replaced.values())
    changes: list[ObjectChange] = []
    for key in sorted(before.keys() | after.keys()):
        if key in replaced:
            new_obj = after[replaced[key]]
            name = (new_obj.get("metadata") or {}).get("name")
            changes.append(ObjectChange(f"{key} -> {name}", REPLACED,
                                        unified(yamlio.dump(before[key]), yamlio.dump(new_obj), key, replaced[key]),
                                        before[key], new_obj))
        elif key in replacing:
            continue
        elif key not in before:
            changes.append(ObjectChange(key, ADDED, unified("", yamlio.dump(after[key]), key), None, after[key]))
        elif key not in after:
            changes.append(ObjectChange(key, REMOVED, unified(yamlio.dump(before[key]), "", key), before[key], None))
        elif before[key] != after[key]:
            changes.append(ObjectChange(key, CHANGED, unified(yamlio.dump(before[key]), yamlio.dump(after[key]), key),
                                        before[key], after[key]))
    return changes


def diff_text(key: str, old: str | None, new: str | None) -> ObjectChange | None:
    """A file compared as text (a Lua health check, or a manifest that does not parse); None where it did not
    change. `None` for a side that does not hold the file."""
    if old == new:
        return None
    status = ADDED if old is None else REMOVED if new is None else CHANGED
    return ObjectChange(key, status, unified(old or "", new or "", key))


def unified(old: str, new: str, key: str, new_key: str | None = None) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a: {key}", tofile=f"b: {new_key or key}", n=3))
