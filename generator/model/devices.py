"""What one worker claims through Dynamic Resource Allocation: for each rail it attaches, that rail's NIC and the GPUs
the hardware puts beside it, in one request set the scheduler must place under one PCIe root (or NUMA node), and its
ComputeDomain's IMEX channel on multi-node NVLink. Device plugins hand out "8 GPUs" and "one VF of each rail" apart;
the claim says which go together, which is what GPUDirect RDMA needs.

One derivation serves validate (a split the hardware cannot give is refused at the job), resolve (the job's
`devices`), the manifests (the ResourceClaimTemplate), plan and explain. It reads plain facts, so validate calls it
on profile data and resolve on the model alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from mpigen.model.cluster import Dra
from mpigen.model.hardware import Hardware
from mpigen.vocabulary import dra


class Alignment(str, Enum):
    """Which attribute the GPUs and NIC of one request set must share."""

    PCIE_ROOT = "pcieRoot"
    """The hardware puts these GPUs beside the NIC (`nics[].gpus`, or a GPU-NIC distance within one PCIe root)."""
    NUMA_NODE = "numaNode"
    """The hardware says only the NIC's NUMA node."""
    NONE = "none"
    """The hardware says nothing of where the NIC sits: the claim only counts."""

    @property
    def attribute(self) -> str | None:
        """The standard device attribute of `matchAttribute`; None: no constraint."""
        return {Alignment.PCIE_ROOT: dra.PCIE_ROOT, Alignment.NUMA_NODE: dra.NUMA_NODE}.get(self)


PCIE_ROOT_DISTANCES = ("PIX", "PXB", "PHB")
"""GPU-NIC distances (nvidia-smi topo -m) within one PCIe root complex: through PCIe switches, or the CPU's host
bridge; NODE and SYS cross host bridges, hence roots."""


@dataclass(frozen=True)
class NicSide:
    """What a hardware profile says of one NIC's place: the GPUs beside it and its NUMA node, where it says them."""

    name: str
    gpus: tuple[int, ...] = ()
    numa_node: int | None = None


@dataclass(frozen=True)
class NicGroup:
    """The GPUs that go with one NIC: how many (None: unknown), aligned how, and the hardware fact that says so."""

    gpus: int | None
    alignment: Alignment
    fact: str
    basis: tuple[str, ...] = ()
    """Where the fact is written in the hardware profile: `("gpus",)` or `("numaNode",)` under the NIC,
    `("gpu", "nicDistance")`, or () for the NIC itself."""
    said: bool = True
    """The hardware says where the NIC sits (unaligned only where the drivers cannot honour it); False: it says
    nothing, and validate warns."""


NIC_GPUS = ("gpus",)
NIC_NUMA_NODE = ("numaNode",)
NIC_DISTANCE = ("gpu", "nicDistance")
"""`NicGroup.basis`: the NIC's own `gpus` or `numaNode`, or the GPUs' `nicDistance`."""

CROSS_ROOT_DISTANCES = ("NODE", "SYS")
"""GPU-NIC distances across PCIe host bridges: the GPU and its NIC share no PCIe root."""


def numa_alignment_published() -> bool:
    """Both drivers publish the standard NUMA node attribute (KEP-6072), so a claim can align by it: NVIDIA's GPU DRA
    driver and DRANET at their pinned commits do not (vocabulary/dra.py), and a claim constrained by it finds no
    device and never allocates."""
    return all(dra.NUMA_NODE in dra.DRIVERS[driver].attributes for driver in (dra.GPU_DRIVER, dra.NIC_DRIVER))


def nic_groups(gpu_count: int, nic_distance: str | None, nics: Sequence[NicSide]) -> dict[str, NicGroup]:
    """Each NIC's group of GPUs, by what the hardware profile states, most precise first: the NIC's own `gpus`; an
    even split where the profile gives a GPU-NIC distance within a PCIe root; its NUMA node, where the drivers publish
    it; else counts only."""
    even = gpu_count // len(nics) if nics and gpu_count % len(nics) == 0 else None
    groups: dict[str, NicGroup] = {}
    for nic in nics:
        if nic.gpus:
            groups[nic.name] = NicGroup(len(nic.gpus), Alignment.PCIE_ROOT,
                                        f"nics[{nic.name}].gpus {list(nic.gpus)}: those GPUs share the NIC's PCIe switch",
                                        NIC_GPUS)
        elif nic_distance in PCIE_ROOT_DISTANCES and even:
            groups[nic.name] = NicGroup(even, Alignment.PCIE_ROOT,
                                        f"gpu.nicDistance {nic_distance}: each of the {len(nics)} NICs sits under one "
                                        f"PCIe root with {even} of the {gpu_count} GPUs", NIC_DISTANCE)
        elif nic.numa_node is not None and numa_alignment_published():
            groups[nic.name] = NicGroup(even, Alignment.NUMA_NODE,
                                        f"nics[{nic.name}].numaNode {nic.numa_node}: only the NIC's NUMA node is known",
                                        NIC_NUMA_NODE)
        elif nic_distance in CROSS_ROOT_DISTANCES:
            groups[nic.name] = NicGroup(even, Alignment.NONE,
                                        f"gpu.nicDistance {nic_distance}: each GPU reaches its NIC across PCIe host "
                                        "bridges, so they share no PCIe root: counted, not aligned", NIC_DISTANCE)
        elif nic.numa_node is not None:
            groups[nic.name] = NicGroup(even, Alignment.NONE,
                                        f"nics[{nic.name}].numaNode {nic.numa_node}: only the NIC's NUMA node is known, "
                                        f"and the drivers publish no {dra.NUMA_NODE}: counted, not aligned", NIC_NUMA_NODE,
                                        said=False)
        else:
            groups[nic.name] = NicGroup(even, Alignment.NONE, f"nics[{nic.name}]: the hardware says neither which GPUs "
                                        "sit beside it (`gpus`, `gpu.nicDistance`) nor its NUMA node (`numaNode`)",
                                        said=False)
    return groups


@dataclass(frozen=True)
class DevicePair:
    """One request set of the claim: `gpus` GPUs and, where a rail is claimed through DRA, that rail's NIC, which the
    scheduler places under one `alignment` domain."""

    gpus: int
    rail: str | None
    nic: str | None
    """The hardware profile's name of the rail's NIC."""
    interface: str | None
    """The NIC's interface on the node, which the NIC request selects it by (DRANET's `ifName`)."""
    alignment: Alignment
    fact: str

    @property
    def gpu_request(self) -> str:
        return f"gpus-{self.rail}" if self.rail else "gpus"

    @property
    def nic_request(self) -> str:
        return f"nic-{self.rail}"


@dataclass(frozen=True)
class WorkerDevices:
    """Everything one worker claims through DRA."""

    gpu_class: str
    nic_class: str | None
    """None where rails reach pods some other way (a device plugin): the claim holds GPUs only."""
    pairs: tuple[DevicePair, ...]
    channel: bool
    """The worker also claims its ComputeDomain's IMEX channel (multi-node NVLink)."""

    @property
    def gpus(self) -> int:
        return sum(pair.gpus for pair in self.pairs)

    @property
    def nics(self) -> int:
        return sum(1 for pair in self.pairs if pair.nic is not None)


@dataclass(frozen=True)
class SplitProblem:
    """Why no claim can pair the workers' GPUs with the NICs of the rails they attach, and how to make one."""

    message: str
    fix: str


@dataclass(frozen=True)
class ClaimedRail:
    """A rail a worker attaches, as the claim reads it: its name, its NIC's name, and the NIC's node interface."""

    rail: str
    nic: str
    interface: str | None


def pair_devices(gpus_per_worker: int, rails: Sequence[ClaimedRail], groups: dict[str, NicGroup],
                 nics_claimed: bool) -> tuple[DevicePair, ...] | SplitProblem:
    """The request sets of one worker: its GPUs spread evenly over the NICs of the rails it attaches, each NIC with
    no more GPUs than the hardware puts beside it. `nics_claimed`: the rails' NICs are DRA devices (dranet); else the
    claim holds the GPUs alone, unaligned."""
    if not nics_claimed or not rails:
        if not gpus_per_worker:
            return ()
        return (DevicePair(gpus_per_worker, None, None, None, Alignment.NONE,
                           "no rail's NIC is claimed through DRA: the GPUs are claimed alone"),)
    if gpus_per_worker % len(rails):
        return SplitProblem(f"the workers ask for {gpus_per_worker} GPUs each over {len(rails)} rails "
                            f"({', '.join(r.rail for r in rails)}): a claim gives each rail's NIC the same number of "
                            "GPUs beside it, and they do not divide evenly",
                            f"ask for a multiple of {len(rails)} GPUs a worker, or attach as many rails as divide them "
                            "(`rails`)")
    share = gpus_per_worker // len(rails)
    pairs = []
    for rail in rails:
        group = groups[rail.nic]
        if group.gpus is not None and share > group.gpus:
            return SplitProblem(f"the workers ask for {gpus_per_worker} GPUs each over {len(rails)} rails, "
                                f"{share} beside each rail's NIC, but rail '{rail.rail}' runs over NIC '{rail.nic}', "
                                f"which has {group.gpus} beside it ({group.fact})",
                                f"attach more rails (`rails`), or ask for at most {group.gpus * len(rails)} GPUs a "
                                "worker")
        pairs.append(DevicePair(share, rail.rail, rail.nic, rail.interface, group.alignment, group.fact))
    return tuple(pairs)


def hardware_groups(hardware: Hardware) -> dict[str, NicGroup]:
    """`nic_groups` of a resolved hardware profile."""
    gpu = hardware.gpu
    return nic_groups(gpu.count if gpu else 0, gpu.nic_distance.value if gpu and gpu.nic_distance else None,
                      [NicSide(nic.name, nic.gpus, nic.numa_node) for nic in hardware.nics])


def worker_devices(config: Dra, hardware: Hardware, rails: Sequence[ClaimedRail], gpus_per_worker: int,
                   nics_claimed: bool) -> WorkerDevices | SplitProblem:
    """What one worker of a job claims on a cluster that allocates through DRA (`config`)."""
    pairs = pair_devices(gpus_per_worker, rails, hardware_groups(hardware), nics_claimed)
    if isinstance(pairs, SplitProblem):
        return pairs
    channel = bool(gpus_per_worker) and hardware.gpu is not None and hardware.gpu.multi_node_nvlink \
        and config.compute_domains
    return WorkerDevices(config.gpu_class, config.nic_class if nics_claimed and rails else None, pairs, channel)
