"""A cluster's infra objects: its namespaces, what its network provider and scheduler need, and the
TrainingRuntimes of its TrainJobs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpigen import providers
from mpigen.manifests import run_name, scheduling
from mpigen.manifests.chart_refs import infra_chart_ref
from mpigen.manifests.pod_security import namespace_pod_security
from mpigen.manifests.trainjob import training_runtime_object
from mpigen.model import Backend, Cluster, Job
from mpigen.objects import chartfiles
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest
from mpigen.providers.network import build_namespace
from mpigen.vocabulary.podsecurity import PodSecurity


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
