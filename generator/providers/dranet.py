"""`dranet`: rails reach pods as DRANET devices (driver `dra.net`), claimed through Dynamic Resource Allocation in
each worker's ResourceClaim beside the GPUs under the same PCIe root (generator/model/devices.py). DRANET moves the
NIC's network interface and RDMA character devices into the pod and names the interface there as the claim's opaque
config says; no Multus, no SR-IOV, no device plugin. Each rail's NIC is selected by its interface on the node
(`dra.net/ifName`), so its HCA is known and NCCL is told exactly which to use: in DRANET's shared RDMA mode the pod
still sees every HCA of the node under its own name."""

from __future__ import annotations

from typing import Any

from mpigen.model import Cluster, Job, NetworkProvider
from mpigen.objects.labels import ChartRef, metadata
from mpigen.objects.manifest import Manifest
from mpigen.providers.base import PodNetwork, Provider
from mpigen.vocabulary import dra

DEVICE_CLASS_TEMPLATE = "deviceclass.yaml"


def notes(cluster: Cluster) -> str:
    nic_class = cluster.dra.nic_class if cluster.dra else dra.NIC_DEVICE_CLASS
    return (f"NICs claimed through DRA from DeviceClass {nic_class} (DRANET's RDMA NICs), each beside the GPUs "
            "under its PCIe root; DRANET must run on the nodes, and NVIDIA's GPU DRA driver in place of its device "
            "plugin.")


def build_nic_device_class(cluster: Cluster, chart: ChartRef) -> dict[str, Any]:
    """The DeviceClass of RDMA NICs: DRANET's devices with `rdma == true`, as DRANET's MPI example defines it."""
    nic_class = cluster.dra.nic_class if cluster.dra else dra.NIC_DEVICE_CLASS
    return {
        "apiVersion": dra.API_VERSION,
        "kind": dra.DEVICE_CLASS,
        "metadata": metadata(nic_class, chart),
        "spec": {"selectors": [{"cel": {"expression": expression}} for expression in dra.NIC_SELECTORS]},
    }


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    if not cluster.rails:
        return []
    return [Manifest(DEVICE_CLASS_TEMPLATE, build_nic_device_class(cluster, chart))]


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    """Nothing beyond the claim: the NICs are in it, and DRANET names their interfaces."""
    return PodNetwork()


PROVIDER = Provider(
    NetworkProvider.DRANET, infra, pod_network, notes,
    resource_prefix=dra.NIC_DRIVER,  # no extended resources: the prefix names nothing pods ask for
    # NCCL_IB_HCA and UCX_NET_DEVICES from `hca`; the claim selects each rail's NIC by its interface on the node: the
    # rail's `hostInterface`, else the NIC's `pfName` (validate/network.py asks for one of them, `host_interface`).
    nic_facts=("hca",),
    multus=False,
    host_interface=True,
    dra_devices=True,
)
