"""Stage 4: the Kubernetes objects of each chart, as plain dicts, from the model alone.

Each object comes with the template file it lives in, so the packager and mpigen's own renderer
agree on what a chart holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator import providers
from generator.manifests import run_name, scheduling
from generator.manifests.hostfile import build_hostfile_configmap
from generator.manifests.mpijob import host_path_reasons, mpijob_object, workers_variable
from generator.manifests.run_name import named_spec
from generator.manifests.trainjob import training_runtime_object, trainjob_object
from generator.manifests.volcano_job import volcano_job_object
from generator.model import Backend, Cluster, Job, names
from generator.objects import chartfiles
from generator.objects.labels import ChartRef
from generator.objects.manifest import Manifest, Variable, plain
from generator.providers.network import build_namespace
from generator.vocabulary import trainer, volcano_job
from generator.vocabulary.podsecurity import Level, PodSecurity, combine, evaluate


def job_chart_ref(job: Job, release: str | None = None) -> ChartRef:
    return ChartRef(name=job.name, release=release or job.name)


def infra_chart_ref(cluster: Cluster, release: str | None = None) -> ChartRef:
    name = names.infra_chart_name(cluster.name)
    return ChartRef(name=name, release=release or name)


def build_job(job: Job, chart: ChartRef, worker_count: int | None = None) -> list[Manifest]:
    """The job's objects (see `build_marked_job`), plain."""
    return [Manifest(m.template, plain(m.obj)) for m in build_marked_job(job, chart, workers_variable(job, worker_count))]


def build_marked_job(job: Job, chart: ChartRef, workers: Variable | None = None) -> list[Manifest]:
    """The hostfile ConfigMap and the job object (an MPIJob, or a Volcano Job) of `job`, the values a chart value
    sets marked as Variables."""
    workers = workers or workers_variable(job)
    name, spec = named_spec(job, workers)
    build = {Backend.MPIJOB: mpijob_object, Backend.VOLCANO_JOB: volcano_job_object,
             Backend.TRAINJOB: trainjob_object}[job.backend]
    return [
        Manifest(chartfiles.HOSTFILE_TEMPLATE, build_hostfile_configmap(job, chart, name, workers.plain)),
        Manifest(chartfiles.JOB_TEMPLATES[job.backend.value], build(job, chart, name, spec)),
    ]


def job_object(manifests: list[Manifest]) -> Manifest:
    """The job object among a job chart's manifests."""
    return next(m for m in manifests if m.template in chartfiles.JOB_TEMPLATES.values())


def pods_object(job: Job, manifests: list[Manifest]) -> dict[str, Any]:
    """The object that holds the job's pod templates, plain: its job object, or under a TrainJob the
    TrainingRuntime the infra chart carries for it."""
    obj = plain(job_object(manifests).obj)
    if job.backend is Backend.TRAINJOB:
        return training_runtime_object(job, infra_chart_ref(job.cluster), obj["metadata"]["name"])
    return obj


def pod_specs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod specs of an object mpigen built (plain): each replica's of an MPIJob, each task's of a Volcano
    Job, each replicated job's of a TrainingRuntime."""
    if obj["kind"] == volcano_job.KIND and obj["apiVersion"] == volcano_job.API_VERSION:
        return [task["template"]["spec"] for task in obj["spec"]["tasks"]]
    if obj["kind"] == trainer.RUNTIME_KIND and obj["apiVersion"] == trainer.API_VERSION:
        return [rjob["template"]["spec"]["template"]["spec"] for rjob in obj["spec"]["template"]["spec"]["replicatedJobs"]]
    return [replica["template"]["spec"] for replica in obj["spec"]["mpiReplicaSpecs"].values()]


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


def build_infra(cluster: Cluster, chart: ChartRef, jobs: tuple[Job, ...] = (),
                mpijobs: Mapping[str, dict[str, Any]] | None = None,
                levels: Mapping[str, PodSecurity] | None = None) -> list[Manifest]:
    """Namespaces jobs may run in, labelled with the Pod Security level their jobs need, what the cluster's
    network provider needs (device plugin config, the rails' networks in each namespace), and its scheduler's
    queues and priority classes.
    `mpijobs`: as for `namespace_pod_security` (a TrainJob's is the TrainingRuntime, which this chart carries);
    `levels`: what that gives, where the caller has it already."""
    levels = levels if levels is not None else namespace_pod_security(cluster, jobs, mpijobs)
    manifests = [Manifest(chartfiles.NAMESPACES_TEMPLATE, build_namespace(ns, chart, levels[ns], cluster.kubernetes_version))
                 for ns in cluster.namespaces if ns not in cluster.existing_namespaces]
    runtimes = [Manifest(chartfiles.TRAINING_RUNTIMES_TEMPLATE, _training_runtime(job, chart, mpijobs or {}))
                for job in jobs if job.backend is Backend.TRAINJOB]
    return manifests + providers.infra(cluster, chart) + scheduling.infra(cluster, chart) + runtimes


def _training_runtime(job: Job, chart: ChartRef, built: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The TrainingRuntime of a TrainJob's run: the one `pods_object` built already for this chart, else anew."""
    if job.name in built and chart == infra_chart_ref(job.cluster):
        return built[job.name]
    return training_runtime_object(job, chart, run_name.mpijob_name(job))
