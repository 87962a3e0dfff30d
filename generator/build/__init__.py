"""Stage 4: the Kubernetes objects of each chart, as plain dicts, from the model alone.

Each object comes with the template file it lives in, so the packager and mpigen's own renderer
agree on what a chart holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator import names
from generator.build.hostfile import build_hostfile_configmap
from generator.build.labels import ChartRef
from generator.build.mpijob import build_mpijob
from generator.build.naming import mpijob_name
from generator.build.network import build_device_plugin_configmap, build_namespace, build_network_attachment
from generator.model import Cluster, Job


@dataclass(frozen=True)
class Manifest:
    template: str
    obj: dict[str, Any]


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
    """Namespaces jobs may run in, the device plugin config, and every rail's network in each namespace."""
    manifests = [Manifest("namespaces.yaml", build_namespace(ns, chart)) for ns in cluster.namespaces]
    if cluster.rails:
        manifests.append(Manifest("sriovdp-configmap.yaml", build_device_plugin_configmap(cluster, chart)))
        manifests += [
            Manifest("network-attachments.yaml", build_network_attachment(cluster, rail, ns, chart))
            for ns in cluster.namespaces
            for rail in cluster.rails
        ]
    return manifests
