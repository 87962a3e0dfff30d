"""The whole fleet, resolved kind by kind: hardware, then the clusters on it, then the jobs on those."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mpigen.load import ProfileFile, to_plain
from mpigen.load.derived import acceptance_documents
from mpigen.model import Cluster, CommittedRun, Fleet, Job
from mpigen.resolve.cluster import resolved_cluster
from mpigen.resolve.continuation import Written, identity_and_continuation
from mpigen.resolve.hardware import resolved_hardware
from mpigen.resolve.job import resolved_job


def resolve(documents: list[ProfileFile], committed: Mapping[str, CommittedRun] | None = None) -> Fleet:
    """`committed`: the runs the output folder's job charts hold, by chart folder (`mpigen.continuity.committed`): a
    run whose profiles ask the same of it keeps its committed name."""
    by_kind: dict[str, list[ProfileFile]] = {"Hardware": [], "Cluster": [], "Job": []}
    for document in documents:
        by_kind[document.kind].append(document)
    hardware_data = {d.data["name"]: to_plain(d.data) for d in by_kind["Hardware"]}
    hardware = {name: resolved_hardware(data) for name, data in hardware_data.items()}
    clusters = {c.name: c for c in (resolved_cluster(d, hardware, hardware_data) for d in by_kind["Cluster"])}
    written = Written({d.data["name"]: d for d in by_kind["Hardware"]},
                       {d.data["name"]: to_plain(d.data) for d in by_kind["Cluster"]}, committed or {})
    jobs = [_job(d, clusters, hardware_data, written) for d in by_kind["Job"]]
    acceptance = [replace(_job(document, clusters, hardware_data, written), acceptance=profile.acceptance)
                  for cluster in by_kind["Cluster"] for document, profile in acceptance_documents(cluster, hardware_data)]
    return Fleet(
        hardware=tuple(hardware[name] for name in sorted(hardware)),
        clusters=tuple(clusters[name] for name in sorted(clusters)),
        jobs=tuple(sorted(jobs, key=lambda j: (j.cluster.name, j.name))),
        acceptance=tuple(sorted(acceptance, key=lambda j: (j.cluster.name, j.name))),
    )


def _job(document: ProfileFile, clusters: dict[str, Cluster], hardware_data: dict[str, dict[str, Any]],
         written: Written) -> Job:
    data = to_plain(document.data)
    return identity_and_continuation(resolved_job(document, data, clusters, hardware_data), data, written)
