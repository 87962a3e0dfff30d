"""Devices pods claim through Dynamic Resource Allocation, as queues count them. A worker that claims its GPUs, NICs
and ComputeDomain channel requests no extended resource for them, so a queue that counts requests does not see them:
Kueue counts them by its Configuration's `resources.deviceClassMappings`, each DeviceClass a claim names mapped to a
logical resource that ClusterQueues cover (and a Workload whose claim names a class the mappings lack is never
admitted); Volcano's queues and scheduler-plugins' PodGroups count only requests.

This is the one place that says what a node of a DRA pool offers under those logical names and what a worker claims
of them, so validate's never-admitted check, the ClusterQueues' quotas, the `workers` maximum, the infra NOTES'
mappings and plan all count alike. Pure functions over plain profile data, like `admission`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mpigen.model import defaults, derive
from mpigen.model.cluster import Dra
from mpigen.vocabulary import dra

CHANNELS_PER_NODE = 1
"""ComputeDomain channels one node can give pods: NVIDIA's kubelet plugin publishes a single channel device there
(`channel-0`; cmd/compute-domain-kubelet-plugin/driver.go @ 22407113 leaves out every other id), the default channel
DeviceClass selects exactly it (`id == 0`), and a device without `allowMultipleAllocations` is allocated to one claim
at a time, so one pod of a node holds a channel (kubernetes-sigs/dra-driver-nvidia-gpu #309: several pods of one node
in a ComputeDomain is not a supported use yet). Each worker claims one (model/devices.WorkerDevices.channel), so a
node holds one such worker."""


NOUNS = {dra.KUEUE_GPU_RESOURCE: "GPUs", dra.KUEUE_NIC_RESOURCE: "RDMA NICs",
         dra.KUEUE_CHANNEL_RESOURCE: "ComputeDomain channels"}
"""What the devices counted under each logical resource are, in words."""


@dataclass(frozen=True)
class DeviceMapping:
    """One entry of Kueue's `resources.deviceClassMappings`: the logical resource its quotas count devices of these
    DeviceClasses under."""

    name: str
    device_classes: tuple[str, ...]
    noun: str
    """What the devices are, in words."""


def dra_of(cluster: dict[str, Any]) -> Dra | None:
    """The cluster profile's `dra`, defaults filled in; None where it allocates through device plugins only."""
    given = cluster.get("dra")
    if given is None:
        return None
    return Dra(gpu_class=given.get("gpuDeviceClass", defaults.DRA_GPU_CLASS),
               nic_class=given.get("nicDeviceClass", defaults.DRA_NIC_CLASS),
               compute_domains=given.get("computeDomains", True))


def node_devices(config: Dra, hardware: dict[str, Any], nics: int) -> tuple[tuple[str, int], ...]:
    """What one node of `hardware` offers to claims, as (logical resource, count): its GPUs; `nics` RDMA NICs claimed
    through DRA (one per rail the pool carries under the dranet provider, 0 where rails reach pods otherwise); one
    ComputeDomain channel where NVLink joins GPUs across nodes and the cluster's jobs join ComputeDomains."""
    gpus = derive.gpu_count(hardware)
    found = [(dra.KUEUE_GPU_RESOURCE, gpus), (dra.KUEUE_NIC_RESOURCE, nics),
             (dra.KUEUE_CHANNEL_RESOURCE, CHANNELS_PER_NODE if gpus and config.compute_domains
              and derive.multi_node_nvlink(hardware) else 0)]
    return tuple((name, count) for name, count in found if count)


def worker_claims(gpus: int, nics: int, channel: bool) -> dict[str, int]:
    """What one worker claims (model/devices.WorkerDevices' counts), under the logical resources of `node_devices`."""
    found = {dra.KUEUE_GPU_RESOURCE: gpus, dra.KUEUE_NIC_RESOURCE: nics, dra.KUEUE_CHANNEL_RESOURCE: int(channel)}
    return {name: count for name, count in found.items() if count}


def device_class_mappings(config: Dra, counted: Iterable[str]) -> tuple[DeviceMapping, ...]:
    """The mappings Kueue needs for the logical resources `counted` (those the cluster's pools offer to claims): the
    DeviceClass each claim names, which Kueue must find mapped or it never admits the workload."""
    classes = {dra.KUEUE_GPU_RESOURCE: config.gpu_class, dra.KUEUE_NIC_RESOURCE: config.nic_class,
               dra.KUEUE_CHANNEL_RESOURCE: dra.CHANNEL_DEVICE_CLASS}
    wanted = set(counted)
    return tuple(DeviceMapping(name, (device_class,), NOUNS[name]) for name, device_class in classes.items()
                 if name in wanted)


def cluster_mappings(config: Dra | None, pools_claimed: Iterable[tuple[str, ...]]) -> tuple[DeviceMapping, ...]:
    """`device_class_mappings` of every device the cluster's pools offer to claims (`NodePool.claimed`): Kueue's
    Configuration is the cluster's, one for all its queues."""
    if config is None:
        return ()
    return device_class_mappings(config, {name for names in pools_claimed for name in names})
