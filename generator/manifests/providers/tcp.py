"""`tcp`: no RDMA. MPI and NCCL use the pod's cluster interface; nothing cluster-wide to configure."""

from __future__ import annotations

from generator.manifests.labels import ChartRef
from generator.manifests.manifest import Manifest
from generator.manifests.providers import PodNetwork
from generator.model import Cluster, Job


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    return []


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PodNetwork()
