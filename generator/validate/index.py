"""Profiles by name for the cross-profile checks: what a reference may name, and what is already reported."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mpigen.load import ProfileFile, Unreadable, to_plain
from mpigen.load.catalogue import builtin_names
from mpigen.load.derived import acceptance_documents
from mpigen.model import admission
from mpigen.model.acceptance import AcceptanceProfile
from mpigen.support.diagnostics import Diagnostic, did_you_mean
from mpigen.support.profile_rules import DUPLICATES, REFERENCES

KINDS = ("Hardware", "Cluster", "Job")


@dataclass
class Index:
    """Schema-valid profiles by name, plus names of profiles that failed (to stay quiet about them)."""

    hardware: dict[str, ProfileFile] = field(default_factory=dict)
    clusters: dict[str, ProfileFile] = field(default_factory=dict)
    jobs: list[ProfileFile] = field(default_factory=list)
    broken: dict[str, set[str]] = field(default_factory=lambda: {kind: set() for kind in KINDS})
    _plain: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)
    _queues: dict[str, admission.ClusterQueues] = field(default_factory=dict, repr=False)
    _acceptance: dict[str, list[tuple[ProfileFile, AcceptanceProfile]]] = field(default_factory=dict, repr=False)

    def hardware_data(self, name: str) -> dict[str, Any]:
        """A hardware profile's plain data, made once: every job reads its pools' (nothing may change it)."""
        return self._data("Hardware", name, self.hardware)

    def cluster_data(self, name: str) -> dict[str, Any]:
        """A cluster profile's plain data, made once: every job of the cluster reads it (nothing may change it)."""
        return self._data("Cluster", name, self.clusters)

    def cluster_queues(self, name: str) -> admission.ClusterQueues:
        """A cluster's queues with what each may borrow, worked out once for all its jobs."""
        if name not in self._queues:
            self._queues[name] = admission.cluster_queues(self.cluster_data(name))
        return self._queues[name]

    def acceptance_jobs(self, name: str) -> list[tuple[ProfileFile, AcceptanceProfile]]:
        """A cluster's fabric acceptance jobs as Job documents at its `acceptance` key (load/derived.py), made once:
        their own checks and the Argo CD Application names both read them. Pools of unknown hardware have none."""
        if name not in self._acceptance:
            cluster = self.cluster_data(name)
            hardware = {pool["hardware"]: self.hardware_data(pool["hardware"]) for pool in cluster["nodePools"]
                        if pool["hardware"] in self.hardware}
            self._acceptance[name] = acceptance_documents(self.clusters[name], hardware)
        return self._acceptance[name]

    def _data(self, kind: str, name: str, documents: dict[str, ProfileFile]) -> dict[str, Any]:
        if (kind, name) not in self._plain:
            self._plain[(kind, name)] = to_plain(documents[name].data)
        return self._plain[(kind, name)]

    def mark_broken(self, kind: object, name: object) -> None:
        """Remember a profile that is already reported, so references to it raise nothing more."""
        if not isinstance(name, str):
            return
        for known in KINDS if kind not in KINDS else (kind,):
            self.broken[known].add(name)


def build_index(valid: list[ProfileFile], invalid: list[ProfileFile],
                unreadable: Sequence[Unreadable] = ()) -> tuple[Index, list[Diagnostic]]:
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
                                    f"the other is at {firsts[key].location('name')}; rename one", rule=DUPLICATES))
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
        return index.hardware_data(name), []
    if name in index.broken["Hardware"]:
        return None, []
    return None, [Diagnostic(document.location(*path), f"no hardware profile is named '{name}'",
                             did_you_mean(name, [*index.hardware, *builtin_names()]), rule=REFERENCES)]
