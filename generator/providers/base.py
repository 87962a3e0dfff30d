"""What a network provider is: the `Provider` description each module of generator/providers/
defines beside its builders, and the pieces those builders share. Validate, resolve, the manifests, package
and check read a provider's facts from its description (the registry in `mpigen.providers`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mpigen.model import Cluster, Job, Network, NetworkProvider
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest
from mpigen.vocabulary.multus import NETWORKS_ANNOTATION

# Worker pods of one MPIJob carry it, so jobs on the nodes' network can keep them one per node.
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


@dataclass(frozen=True)
class DevicePlugin:
    """A device plugin whose config the infra chart carries. It reads the ConfigMap only when it starts, so a
    changed config needs its pods restarted by hand (`mpigen diff` says so)."""

    name: str
    configmap: str
    """The ConfigMap the infra chart writes, in the cluster's `network.devicePluginNamespace`."""
    daemonset: str
    """The plugin's DaemonSet, as its upstream manifests name it (beside the ConfigMap, in the same namespace)."""


@dataclass(frozen=True)
class Provider:
    """One network provider: how its rails reach pods, what it needs of the profiles, and its builders."""

    name: NetworkProvider
    infra: Callable[[Cluster, ChartRef], list[Manifest]]
    """The cluster-wide objects (device plugin config, networks)."""
    pod_network: Callable[[Job, str], PodNetwork]
    """What a worker pod of the job (MPIJob name) needs for its rails."""
    notes: Callable[[Cluster], str]
    """The infra chart's NOTES line about the rails (after `RDMA rails (<name>): `), with what the nodes must
    provide that no object of the chart can."""
    resource_prefix: str
    """Default prefix of the rails' extended resources (the cluster's `network.resourcePrefix`)."""
    nic_facts: tuple[str, ...] = ()
    """NIC facts of the hardware profile its rails read (`hca`, `pfName`, ...)."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The `network` settings of the cluster profile that it reads and not every provider does, with their
    defaults; under another provider they have no effect."""
    rdma: bool = True
    """Rails carry RDMA (workers need IPC_LOCK to pin memory); without it the provider takes no rails."""
    multus: bool = True
    """Rails are secondary interfaces attached by Multus, each with an address of the rail's `ipam`."""
    host_network: bool = False
    """Workers use the nodes' network stack: one per node, sshd on `sshPort`, NCCL on the nodes' interfaces,
    OpenMPI only (mpigen passes the port to its mpirun only)."""
    host_interface: bool = False
    """Rails name the node's interface of their NIC (`hostInterface`, else the NIC's pfName)."""
    one_interface_per_rail: bool = False
    """Every node names a rail's interface the same (one NetworkAttachmentDefinition names one `master`)."""
    exclusive_devices: bool = False
    """A pod sees only its own VFs, whose RDMA device names are not the PF's (SR-IOV, rdma CNI exclusive mode);
    otherwise pods see every HCA of the node under its own name."""
    vlan: bool = False
    """It sets an Ethernet rail's `vlan` and `vlanQoS` on each VF it hands out (SR-IOV tags the VF's frames)."""
    selects_pools: bool = False
    """It makes an object per node pool with rails that selects the pool's nodes by their labels alone, and that a
    node may match only one of (the SR-IOV operator's SriovNetworkPoolConfig): each such pool needs node labels,
    and none may be matched by another's."""
    network_kinds: Mapping[str, str] = field(default_factory=dict)
    """Kinds of its operator that render a NetworkAttachmentDefinition of the same name, with the namespace it
    goes to when `spec.networkNamespace` is not set ('' = the object's own)."""
    device_plugin: DevicePlugin | None = None
    """The device plugin whose config its infra objects hold, if any (an operator restarts its own plugin)."""
    dra_devices: bool = False
    """Rails are DRA devices in each worker's ResourceClaim (DRANET), paired there with the GPUs beside their NIC;
    the cluster must allocate through DRA (`dra`)."""

    def worker_ssh_port(self, network: Network) -> int | None:
        """sshd's port on the workers where it is not 22: host networking, where the node's own sshd has 22."""
        return network.ssh_port if self.host_network else None


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
