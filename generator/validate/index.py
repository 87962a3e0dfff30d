"""Profiles by name for the cross-profile checks: what a reference may name, and what is already reported."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from generator.catalogue import builtin_names
from generator.diagnostics import Diagnostic, did_you_mean
from generator.load import ProfileFile, Unreadable, to_plain

KINDS = ("Hardware", "Cluster", "Job")


@dataclass
class Index:
    """Schema-valid profiles by name, plus names of profiles that failed (to stay quiet about them)."""

    hardware: dict[str, ProfileFile] = field(default_factory=dict)
    clusters: dict[str, ProfileFile] = field(default_factory=dict)
    jobs: list[ProfileFile] = field(default_factory=list)
    broken: dict[str, set[str]] = field(default_factory=lambda: {kind: set() for kind in KINDS})

    def mark_broken(self, kind: object, name: object) -> None:
        """Remember a profile that is already reported, so references to it raise nothing more."""
        if not isinstance(name, str):
            return
        for known in KINDS if kind not in KINDS else (kind,):
            self.broken[known].add(name)


def build_index(valid: list[ProfileFile], invalid: list[ProfileFile],
                unreadable: list[Unreadable] = ()) -> tuple[Index, list[Diagnostic]]:
    """The schema-valid profiles by kind and name; a second profile of one name is reported and left out."""
    index = Index()
    found: list[Diagnostic] = []
    for document in invalid:
        kind = document.kind if isinstance(document.kind, str) else None
        index.mark_broken(kind, document.data.get("name"))
    for file in unreadable:
        index.mark_broken(*file.identity)
    firsts: dict[tuple[str, str], ProfileFile] = {}
    for document in valid:
        name = document.data["name"]
        scope = document.data.get("cluster", "") if document.kind == "Job" else ""
        key = (document.kind, f"{scope}/{name}")
        if key in firsts:
            where = "cluster '" + scope + "'" if scope else "the profiles"
            found.append(Diagnostic(document.location("name"),
                                    f"{document.kind.lower()} name '{name}' is used twice in {where}",
                                    f"the other is at {firsts[key].location('name')}; rename one"))
            continue
        firsts[key] = document
        if document.kind == "Hardware":
            index.hardware[name] = document
        elif document.kind == "Cluster":
            index.clusters[name] = document
        else:
            index.jobs.append(document)
    return index, found


def resolve_hardware(document: ProfileFile, path: tuple[str | int, ...], name: str,
                     index: Index) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    """The hardware profile a pool names; None (and nothing said) for one already reported as broken."""
    if name in index.hardware:
        return to_plain(index.hardware[name].data), []
    if name in index.broken["Hardware"]:
        return None, []
    return None, [Diagnostic(document.location(*path), f"no hardware profile is named '{name}'",
                             did_you_mean(name, [*index.hardware, *builtin_names()]))]
