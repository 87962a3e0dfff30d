"""`tcp`: no RDMA. MPI and NCCL use the pod's cluster interface; nothing cluster-wide to configure."""

from __future__ import annotations

from mpigen.model import Cluster, Job, NetworkProvider
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest
from mpigen.providers.base import PodNetwork, Provider


def notes(cluster: Cluster) -> str:
    return "no RDMA: MPI and NCCL use the cluster network."


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    return []


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PodNetwork()


PROVIDER = Provider(
    NetworkProvider.TCP, infra, pod_network, notes,
    resource_prefix="nvidia.com",
    rdma=False,
    multus=False,
)
