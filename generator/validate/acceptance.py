"""A cluster's fabric acceptance jobs (model/acceptance.py): their settings, their names beside the cluster's jobs,
and each job as a job profile is checked, located at the `acceptance` key that asks for it."""

from __future__ import annotations

import re
from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import acceptance
from mpigen.support.diagnostics import Diagnostic, Severity, raises
from mpigen.support.profile_rules import ACCEPTANCE, TOPOLOGY
from mpigen.validate.index import Index
from mpigen.validate.job import check_job

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
"""nccl-tests' size suffixes (its parsesize(): binary multiples)."""


def size_bytes(text: str | int) -> int:
    match = re.fullmatch(r"([0-9]+)([KMG]?)", str(text))
    return int(match.group(1)) * _UNITS[match.group(2)] if match else 0


@raises(ACCEPTANCE)
def check_acceptance(index: Index, reported: list[Diagnostic]) -> list[Diagnostic]:
    """`reported`: what the other checks found. A cluster or hardware profile with an error of its own gets no checks
    of its acceptance jobs: they would only repeat it (a broken queue refuses them as it refuses every job)."""
    found: list[Diagnostic] = []
    jobs = {(document.data["cluster"], document.data["name"]): document for document in index.jobs}
    broken = {problem.location.path for problem in reported if problem.severity is Severity.ERROR}
    for name, document in index.clusters.items():
        cluster = index.cluster_data(name)
        if document.path in broken or any(index.hardware[p["hardware"]].path in broken for p in cluster["nodePools"]
                                          if p["hardware"] in index.hardware):
            continue
        problems = _check_settings(document, cluster, index)
        found += problems
        if any(problem.severity is Severity.ERROR for problem in problems):
            continue
        named: dict[str, str] = {}
        for derived, profile in index.acceptance_jobs(name):
            job_name = derived.data["name"]
            what = f"{profile.acceptance.what} of pool '{profile.acceptance.pool}'"
            if job_name in named:  # `accept-<pool>-<test>` of two pools, where a pool or rail name holds a dash
                found.append(Diagnostic(derived.location(), f"two fabric acceptance jobs of cluster '{name}' are "
                                        f"named '{job_name}': {named[job_name]}, and {what}",
                                        "rename one of the pools or rails, or say `acceptance: false` for one of the "
                                        "pools", rule=ACCEPTANCE))
                continue
            named[job_name] = what
            taken = jobs.get((name, job_name))
            if taken is not None:
                found.append(Diagnostic(taken.location("name"), f"job name '{job_name}' is the name of a fabric "
                                        f"acceptance job of cluster '{name}' ({derived.location()})",
                                        "rename the job: `accept-<pool>-...` names are the acceptance jobs'",
                                        rule=ACCEPTANCE))
                continue
            problems = check_job(derived, index)
            if profile.acceptance.rail_test is not None:
                # A rail test takes whole nodes (nothing else shares their PCIe and NICs while it measures) but moves
                # host memory: which GPUs sit beside its one rail does not matter to it.
                problems = [p for p in problems if not (p.rule == TOPOLOGY and p.severity is Severity.WARNING)]
            found += problems
    return found


def _asking(cluster: dict[str, Any]) -> list[tuple[tuple[str | int, ...], dict[str, Any], dict[str, Any]]]:
    """(where, what it says, the pool) of every `acceptance` that asks for a pool's jobs."""
    asked: list[tuple[tuple[str | int, ...], dict[str, Any], dict[str, Any]]] = []
    for position, pool in enumerate(cluster["nodePools"]):
        own = pool.get("acceptance")
        if isinstance(own, dict):
            asked.append((("nodePools", position, "acceptance"), own, pool))
        elif own is None and cluster.get("acceptance"):
            asked.append((("acceptance",), cluster["acceptance"], pool))
    return asked


def _check_settings(document: ProfileFile, cluster: dict[str, Any], index: Index) -> list[Diagnostic]:
    found = []
    shared = cluster.get("acceptance") or {}
    for where, given, pool in _asking(cluster):
        settings = acceptance.pool_settings(cluster, pool)
        assert settings is not None
        at = document.location(*where, at_key=True)
        if not settings.image:
            found.append(Diagnostic(at, f"the acceptance jobs of pool '{pool['name']}' name no image",
                                    "give `image` here or in the cluster's `acceptance`", rule=ACCEPTANCE))
        if settings.namespace not in cluster["namespaces"]:
            key = "namespace" if "namespace" in given else None
            found.append(Diagnostic(document.location(*where, "namespace") if key else at,
                                    f"namespace '{settings.namespace}' is not one of cluster '{cluster['name']}'s",
                                    f"use one of {', '.join(cluster['namespaces'])}", rule=ACCEPTANCE))
        if size_bytes(settings.min_bytes) > size_bytes(settings.max_bytes):
            key = "minBytes" if "minBytes" in given else "maxBytes"
            found.append(Diagnostic(document.location(*where, key) if key in given else at,
                                    f"minBytes {settings.min_bytes} is more than maxBytes {settings.max_bytes}",
                                    "nccl-tests would run no size: make minBytes the smaller", rule=ACCEPTANCE))
        hardware = index.hardware_data(pool["hardware"]) if pool["hardware"] in index.hardware else None
        if hardware is None:
            continue
        nodes = pool["nodes"] if settings.max_nodes is None else min(pool["nodes"], settings.max_nodes)
        own = where != ("acceptance",)
        if not hardware.get("gpu", {}).get("count") and own:
            found.append(Diagnostic(at, f"pool '{pool['name']}' has no GPUs: no acceptance job proves it",
                                    "remove its `acceptance` (the tests are nccl-tests and perftest between GPU nodes)",
                                    Severity.WARNING, rule=ACCEPTANCE))
        elif hardware.get("gpu", {}).get("count") and nodes < 2 and (own or shared):
            found.append(Diagnostic(at, f"pool '{pool['name']}' has {pool['nodes']} node(s): its fabric needs two "
                                    "nodes to be proven, so it gets no acceptance job", "add a node, or say "
                                    "`acceptance: false` for the pool", Severity.WARNING, rule=ACCEPTANCE))
    return found
