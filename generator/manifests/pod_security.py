"""The Pod Security level each namespace must allow, from what its jobs' pods need, and where that
raises the level a cluster profile gives."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpigen.manifests.chart_refs import job_chart_ref
from mpigen.manifests.job import build_job, pod_specs, pods_object
from mpigen.manifests.mpijob import host_path_reasons
from mpigen.model import Cluster, Job
from mpigen.vocabulary.podsecurity import Level, PodSecurity, combine, evaluate


def job_pod_security(job: Job, mpijob: dict[str, Any] | None = None) -> PodSecurity:
    """The Pod Security level the pods of `job` need: of its launcher and its workers, the higher.
    `mpijob`: the object holding the job's pods (`pods_object`), plain, where it is built already."""
    if mpijob is None:
        mpijob = pods_object(job, build_job(job, job_chart_ref(job)))
    return combine(evaluate(spec) for spec in pod_specs(mpijob))


def _with_profile_reasons(job: Job, security: PodSecurity) -> PodSecurity:
    """Pod Security's reasons with the profile's own words beside the host folders it gave one for, so the
    namespace's `mpigen/pod-security-reason` tells a reviewer why."""
    given = host_path_reasons(job)
    return PodSecurity(security.level, tuple(f"{reason} (reason: {given[reason]})" if reason in given else reason
                                             for reason in security.reasons))


def namespace_pod_security(cluster: Cluster, jobs: tuple[Job, ...],
                           mpijobs: Mapping[str, dict[str, Any]] | None = None) -> dict[str, PodSecurity]:
    """The Pod Security level each namespace must allow: the most any of its jobs' pods needs, and at least
    what the cluster profile asks for.

    The reasons say what sets the level: the cluster's ask, or else the controls the jobs' pods need it for, each
    once and sorted, naming no job. They stand in the infra chart (`mpigen/pod-security-reason`), which must not
    change when a job comes or goes that needs nothing new there (`mpigen check` gives each job's level and why).
    `mpijobs`: the objects holding the jobs' pods (`pods_object`), plain, by job name, where they are built already."""
    built = mpijobs or {}
    floors = dict(cluster.pod_security)
    levels: dict[str, PodSecurity] = {}
    for namespace in cluster.namespaces:
        floor = Level[floors.get(namespace, "restricted").upper()]
        level = floor
        controls: set[str] = set()
        for job in jobs:
            if job.namespace != namespace:
                continue
            needed = _with_profile_reasons(job, job_pod_security(job, built.get(job.name)))
            if needed.level > level:
                level, controls = needed.level, set()
            if needed.level == level > floor:
                controls.update(needed.reasons)
        asked = (f"cluster {cluster.name} asks for {floor.label}",) if floor > Level.RESTRICTED else ()
        levels[namespace] = PodSecurity(level, tuple(sorted(controls)) if level > floor else asked)
    return levels


@dataclass(frozen=True)
class RaisedLevel:
    """A namespace whose Pod Security level the cluster profile gives (`podSecurity`) and its jobs raise: the
    level asked for, the level the infra chart labels it with, and each job that needs more than asked."""

    namespace: str
    asked: Level
    level: Level
    jobs: tuple[tuple[str, PodSecurity], ...]


def raised_pod_security(cluster: Cluster, jobs: tuple[Job, ...]) -> list[RaisedLevel]:
    """Where `namespace_pod_security` labels a namespace above the level the cluster profile gives it: documented,
    but a profile that says `restricted` reads as a promise, so the caller warns. Builds only the jobs of those
    namespaces."""
    raised = []
    for namespace, text in cluster.pod_security:
        asked = Level[text.upper()]
        needs = [(job.name, _with_profile_reasons(job, job_pod_security(job))) for job in jobs
                 if job.cluster.name == cluster.name and job.namespace == namespace]
        above = tuple((name, need) for name, need in needs if need.level > asked)
        if above:
            raised.append(RaisedLevel(namespace, asked, max(need.level for _, need in above), above))
    return raised
