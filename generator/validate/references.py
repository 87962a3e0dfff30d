"""Checks no JSON Schema can express, across profiles: each runs on the schema-valid profiles, indexed by name,
in the order of CHECKS (diagnostics are sorted by place afterwards; ties keep this order)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mpigen.load import ProfileFile, Unreadable
from mpigen.support.diagnostics import Diagnostic
from mpigen.validate.acceptance import check_acceptance
from mpigen.validate.cluster import check_cluster
from mpigen.validate.gitops import check_argocd_application_names
from mpigen.validate.hardware import check_hardware
from mpigen.validate.index import Index, build_index
from mpigen.validate.job import check_job
from mpigen.validate.pods_ready import check_pods_ready_timeouts


def _each_hardware(index: Index) -> list[Diagnostic]:
    return [problem for document in index.hardware.values() for problem in check_hardware(document)]


def _each_cluster(index: Index) -> list[Diagnostic]:
    return [problem for document in index.clusters.values() for problem in check_cluster(document, index)]


def _each_job(index: Index) -> list[Diagnostic]:
    return [problem for document in index.jobs for problem in check_job(document, index)]


CHECKS: tuple[Callable[[Index], list[Diagnostic]], ...] = (
    _each_hardware,  # hardware.py
    _each_cluster,  # cluster.py, network.py, facts.py, gitops.py, scheduling.py
    _each_job,  # job.py, sizing.py, topology.py, volumes.py, gitops.py, scheduling.py
    check_pods_ready_timeouts,  # pods_ready.py: a Kueue cluster's timeout against its jobs
    check_argocd_application_names,  # gitops.py: names that clusters and jobs share
)


def check_references(valid: list[ProfileFile], invalid: list[ProfileFile],
                     unreadable: Sequence[Unreadable] = ()) -> list[Diagnostic]:
    index, found = build_index(valid, invalid, unreadable)
    for check in CHECKS:
        found += check(index)
    found += check_acceptance(index, found)  # acceptance.py: each sound cluster's fabric acceptance jobs, as jobs
    return found
