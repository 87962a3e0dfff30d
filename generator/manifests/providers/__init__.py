"""Network providers: how a cluster's rails reach pods. One module per provider, each with two functions:

- `infra(cluster, chart) -> list[Manifest]`: the cluster-wide objects (device plugin config, networks);
- `pod_network(job, mpijob) -> PodNetwork`: what a worker pod of the job needs for its rails.

Adding a provider is adding a module here, its name to `NetworkProvider` (generator/model.py) and to the
cluster schema's `network.provider`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from generator.manifests.labels import ChartRef
from generator.manifests.manifest import Manifest
from generator.model import Cluster, Job, NetworkProvider
from generator.vocabulary.multus import NETWORKS_ANNOTATION

# Worker pods of one MPIJob carry it, so host-network jobs can keep them one per node.
WORKER_OF_LABEL = "mpigen/worker-of"


@dataclass(frozen=True)
class PodNetwork:
    """A worker pod's part of the job's rails."""

    annotations: tuple[tuple[str, str], ...] = ()
    limits: tuple[tuple[str, int], ...] = ()
    """Extended resources per worker, one per rail."""
    host_network: bool = False
    ssh_port: int | None = None
    """sshd's port where it is not 22 (host networking: the node's own sshd has 22)."""


def multus_annotation(job: Job, nad_of: Callable[[str, str], str]) -> tuple[tuple[str, str], ...]:
    """Multus attachments with explicit interface names, in rail order (JSON form)."""
    if not job.rails:
        return ()
    return ((NETWORKS_ANNOTATION, json.dumps([
        {"name": nad_of(r.rail.name, job.namespace), "namespace": job.namespace, "interface": r.interface}
        for r in job.rails
    ])),)


def one_per_rail(job: Job) -> tuple[tuple[str, int], ...]:
    return tuple((r.rail.resource, 1) for r in job.rails)


def _modules() -> dict[NetworkProvider, ModuleType]:
    from generator.manifests.providers import host_network, rdma_shared, sriov_device_plugin, sriov_network_operator, tcp
    return {
        NetworkProvider.SRIOV_DEVICE_PLUGIN: sriov_device_plugin,
        NetworkProvider.SRIOV_NETWORK_OPERATOR: sriov_network_operator,
        NetworkProvider.RDMA_SHARED: rdma_shared,
        NetworkProvider.HOST_NETWORK: host_network,
        NetworkProvider.TCP: tcp,
    }


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    return _modules()[cluster.network.provider].infra(cluster, chart)


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return _modules()[job.cluster.network.provider].pod_network(job, mpijob)


__all__ = ["NETWORKS_ANNOTATION", "WORKER_OF_LABEL", "PodNetwork", "infra", "multus_annotation",
           "one_per_rail", "pod_network"]
