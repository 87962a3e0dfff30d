"""What a node has: its GPUs, NICs and CPUs, as a Hardware profile (or the built-in catalogue) says."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

Fact = TypeVar("Fact")


def stated(fact: Fact | None) -> Fact:
    """A hardware fact that validation has made sure of for this use (the NIC facts a network provider reads, the
    GPU of a job that uses GPUs): None here is a defect of mpigen, never a profile's mistake."""
    if fact is None:
        raise AssertionError("a hardware fact validation requires is missing")
    return fact


class LinkType(str, Enum):
    INFINIBAND = "InfiniBand"
    ETHERNET = "Ethernet"


class PciDistance(str, Enum):
    """How far apart two PCIe devices are, in `nvidia-smi topo -m`'s words and NCCL's, nearest first."""

    PIX = "PIX"  # at most one PCIe switch between them
    PXB = "PXB"  # several PCIe switches, no host bridge
    PHB = "PHB"  # through the CPU's PCIe host bridge
    NODE = "NODE"  # across host bridges within one NUMA node
    SYS = "SYS"  # across the CPU interconnect (another socket)


@dataclass(frozen=True)
class Gpu:
    count: int
    model: str
    memory_gib: int | None
    resource: str
    nic_distance: PciDistance | None = None
    """Distance from each GPU to the RDMA NIC nearest it, where the profile states it."""
    nvlink_domain_gpus: int | None = None
    """GPUs one NVLink domain joins across nodes (`nvlinkDomainGpus`; GB200 NVL72: 72); None: NVLink stays in a node."""

    @property
    def multi_node_nvlink(self) -> bool:
        """NVLink reaches other nodes: a job's pods need a ComputeDomain's IMEX channel to use it."""
        return self.nvlink_domain_gpus is not None and self.nvlink_domain_gpus > self.count


@dataclass(frozen=True)
class Nic:
    name: str
    hca: str | None
    port: int
    pf_name: str | None
    vendor_id: str | None
    device_id: str | None
    vf_device_id: str | None
    driver: str
    link_type: LinkType | None
    speed_gbps: int | None
    numa_node: int | None
    gpus: tuple[int, ...]


@dataclass(frozen=True)
class Cpu:
    model: str
    sockets: int
    cores_per_socket: int | None
    threads_per_core: int


@dataclass(frozen=True)
class Hardware:
    name: str
    description: str
    gpu: Gpu | None
    nics: tuple[Nic, ...]
    cpu: Cpu
    memory_gib: int
    node_labels: tuple[tuple[str, str], ...]

    def nic(self, name: str) -> Nic | None:
        return next((nic for nic in self.nics if nic.name == name), None)
