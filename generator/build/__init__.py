"""Stage 4: the Kubernetes objects of each chart, as plain dicts, from the model alone.

Each object comes with the template file it lives in, so the packager and mpigen's own renderer
agree on what a chart holds.
"""

from __future__ import annotations

from generator import names
from generator.build import providers
from generator.build.hostfile import build_hostfile_configmap
from generator.build.labels import ChartRef
from generator.build.manifest import Manifest
from generator.build.mpijob import build_mpijob
from generator.build.naming import mpijob_name
from generator.build.network import build_namespace
from generator.model import Cluster, Job


def job_chart_ref(job: Job, release: str | None = None) -> ChartRef:
    return ChartRef(name=job.name, release=release or job.name)


def infra_chart_ref(cluster: Cluster, release: str | None = None) -> ChartRef:
    name = names.infra_chart_name(cluster.name)
    return ChartRef(name=name, release=release or name)


def build_job(job: Job, chart: ChartRef, worker_count: int | None = None) -> list[Manifest]:
    mpijob = mpijob_name(job)
    return [
        Manifest("hostfile-configmap.yaml", build_hostfile_configmap(job, chart, mpijob, worker_count)),
        Manifest("mpijob.yaml", build_mpijob(job, chart, mpijob, worker_count)),
    ]


def build_infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    """Namespaces jobs may run in, and what the cluster's network provider needs (device plugin config,
    the rails' networks in each namespace)."""
    manifests = [Manifest("namespaces.yaml", build_namespace(ns, chart)) for ns in cluster.namespaces]
    return manifests + providers.infra(cluster, chart)
