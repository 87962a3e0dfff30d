"""Topology domains: how many nodes one domain of each level holds, whether a job's workers fit one, and the podset
slices of a job larger than one domain (Kueue's `podset-slice-*` annotations).

Pure functions over the profiles' numbers, so that `validate` refuses, `resolve` writes and `plan` and `explain` show
the very same fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mpigen.model.cluster import TopologyLevel
from mpigen.vocabulary.gpu_feature_discovery import GPU_CLIQUE_LABEL
from mpigen.vocabulary.scheduling import HOSTNAME_LABEL

PROFILE = "profile"
HOST = "host"
NVLINK = "nvlink"
UNKNOWN = "unknown"


def topology_levels(levels: Sequence[dict[str, Any]]) -> tuple[TopologyLevel, ...]:
    """A cluster profile's `scheduling.topology` levels, highest first, with the domain sizes it gives."""
    return tuple(TopologyLevel(level["name"], level["nodeLabel"], level.get("domainNodes")) for level in levels)


def pool_domain_sizes(levels: Sequence[TopologyLevel], hardware: dict[str, Any]) -> tuple[DomainSize, ...]:
    """`domain_sizes` for a pool of this hardware profile (plain data)."""
    gpu = hardware.get("gpu", {})
    return domain_sizes(levels, int(gpu.get("count", 0)), gpu.get("nvlinkDomainGpus"))


@dataclass(frozen=True)
class DomainSize:
    """How many nodes one domain of a level holds, and where that number came from."""

    level: str
    node_label: str
    index: int
    """The level's place in the cluster's `scheduling.topology` (0: the highest)."""
    nodes: int | None
    """None: nobody says, so nothing is judged against it."""
    origin: str
    """PROFILE (the level's `domainNodes`), HOST (one node, by definition), NVLINK (the hardware's NVLink domain) or
    UNKNOWN."""
    basis: str = ""
    """NVLINK: `gpu.nvlinkDomainGpus 72 / 4 GPUs a node`."""

    def said(self) -> str:
        """Where the size came from, in words."""
        return {PROFILE: f"scheduling.topology[{self.index}].domainNodes",
                HOST: f"a {HOSTNAME_LABEL} domain is one node",
                NVLINK: f"one NVLink domain ({self.basis})",
                UNKNOWN: f"no domainNodes for level '{self.level}': not judged"}[self.origin]


def domain_sizes(levels: Sequence[TopologyLevel], gpus_per_node: int,
                 nvlink_domain_gpus: int | None) -> tuple[DomainSize, ...]:
    """Each level's domain size for a pool of this hardware: the profile's `domainNodes`; else one node for the
    hostname level; else, for the NVLink clique level, the nodes one NVLink domain joins; else unknown."""
    sizes = []
    for index, level in enumerate(levels):
        if level.domain_nodes is not None:
            sizes.append(DomainSize(level.name, level.node_label, index, level.domain_nodes, PROFILE))
        elif level.node_label == HOSTNAME_LABEL:
            sizes.append(DomainSize(level.name, level.node_label, index, 1, HOST))
        elif level.node_label == GPU_CLIQUE_LABEL and nvlink_domain_gpus and gpus_per_node:
            sizes.append(DomainSize(level.name, level.node_label, index, nvlink_domain_gpus // gpus_per_node, NVLINK,
                                    f"gpu.nvlinkDomainGpus {nvlink_domain_gpus} / {gpus_per_node} GPUs a node"))
        else:
            sizes.append(DomainSize(level.name, level.node_label, index, None, UNKNOWN))
    return tuple(sizes)


def nesting_problem(levels: Sequence[TopologyLevel]) -> tuple[int, str] | None:
    """(index of the level at fault, why) where a level's domain does not hold a whole number of the next lower
    sized level's domains (or a hostname domain is not one node); None where they nest."""
    lower: tuple[str, int] | None = None  # the next lower sized level: name, nodes
    for index in reversed(range(len(levels))):
        level, nodes = levels[index], levels[index].domain_nodes
        if nodes is None:
            continue
        if level.node_label == HOSTNAME_LABEL and nodes != 1:
            return index, f"a {HOSTNAME_LABEL} domain is one node, not {nodes}"
        if lower is not None and (nodes < lower[1] or nodes % lower[1]):
            return index, (f"a '{level.name}' domain of {nodes} nodes does not hold a whole number of "
                           f"'{lower[0]}' domains of {lower[1]}")
        lower = level.name, nodes
    return None


@dataclass(frozen=True)
class Slices:
    """The podset slices of a job larger than one domain of its slice level: `count` slices of `size` pods."""

    domain: DomainSize
    size: int
    count: int
    derived: bool
    """True: from the hardware's NVLink domain, not the job's `sliceLevel`."""


@dataclass(frozen=True)
class DomainFit:
    """How a job's workers sit against one domain of its topology level."""

    domain: DomainSize
    required: bool
    workers: int
    workers_per_node: int
    slices: Slices | None = None

    @property
    def nodes_needed(self) -> int:
        return -(-self.workers // max(self.workers_per_node, 1))

    @property
    def domains(self) -> int | None:
        """Domains of the level the workers need at the least; None where the size is not known."""
        return None if self.domain.nodes is None else -(-self.nodes_needed // self.domain.nodes)

    @property
    def never_fits(self) -> bool:
        return self.required and (self.domains or 0) > 1

    @property
    def most_workers(self) -> int | None:
        """The most workers one domain of a `required` level holds: Kueue keeps more Pending for ever, validate
        refuses them, and the chart's `workers` maximum is no higher. None: nothing caps them (preferred, or the
        size is not known)."""
        if not self.required or self.domain.nodes is None:
            return None
        return self.domain.nodes * max(self.workers_per_node, 1)

    def verdict(self) -> str:
        """`fits in one block`, `split across 3 blocks`, `never fits: stays Pending`, or not judged."""
        level, count = self.domain.level, self.domains
        if count is None:
            text = f"not judged: no domainNodes for level '{level}'"
        elif count <= 1:
            text = f"fits in one {level}"
        elif self.required:
            text = f"never fits: stays Pending (one {level} holds {self.domain.nodes} nodes)"
        else:
            text = f"likely split across {count} {level}s (one holds {self.domain.nodes} nodes)"
        if self.slices is not None:
            text += (f"; {self.slices.count} slices of {self.slices.size} workers, each within one "
                     f"{self.slices.domain.level}")
        return text


def slice_domain(sizes: Sequence[DomainSize], topology: dict[str, Any]) -> tuple[DomainSize | None, bool]:
    """The level the job's slices are cut at, and whether it was derived (not the job's `sliceLevel`): the job's
    own, else the NVLink clique level below the job's level."""
    by_name = {size.level: size for size in sizes}
    if "sliceLevel" in topology:
        return by_name.get(topology["sliceLevel"]), False
    level = by_name.get(topology["level"])
    clique = next((size for size in sizes if size.origin == NVLINK or size.node_label == GPU_CLIQUE_LABEL), None)
    if level is None or clique is None or clique.index <= level.index or clique.nodes is None:
        return None, False
    return clique, True


def job_fit(sizes: Sequence[DomainSize], topology: dict[str, Any], workers: int, workers_per_node: int,
            slices_served: bool = True) -> DomainFit:
    """The fit of a job's workers (`topology`: the job's `scheduling.topology`, its level one of `sizes`), with its
    slices where it is larger than one domain of its slice level and a whole number of them. `slices_served`: False
    where the cluster's Kueue predates the slice annotations (kueue_releases.PODSET_SLICES_MINOR): no slices."""
    domain = next(size for size in sizes if size.level == topology["level"])
    fit = DomainFit(domain, topology.get("mode", "required") == "required", workers, workers_per_node)
    cut, derived = slice_domain(sizes, topology)
    if not slices_served or cut is None or cut.nodes is None or cut.index <= domain.index:
        return fit
    size = cut.nodes * max(workers_per_node, 1)
    if workers <= size or workers % size:
        return fit
    return DomainFit(domain, fit.required, workers, workers_per_node, Slices(cut, size, workers // size, derived))


def nearest_multiples(count: int, size: int) -> tuple[int, ...]:
    """The whole numbers of slices nearest `count`, below and above it (only above where none is below)."""
    below, above = count // size * size, (count // size + 1) * size
    return (below, above) if below else (above,)
