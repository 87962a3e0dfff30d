"""What an acceptance job must measure on healthy hardware, derived from the hardware: a rail's ib_write_bw floor from
its NIC's line rate, and a job's nccl-tests bus bandwidth floor from the rails a worker drives, bounded by its GPUs'
NVLink. Each floor keeps its chain: every fact, its number and where it came from, so that `mpigen explain` can show
it and `mpigen verify` can say why it expected what it did. The fractions are vocabulary/fabric.py's."""

from __future__ import annotations

from dataclasses import dataclass

from mpigen.model.hardware import LinkType, Nic
from mpigen.model.job import Job, RailAttachment, WorkerSpread
from mpigen.vocabulary import fabric

GBIT = "Gb/s"
GBYTE = "GB/s"
RAIL_MEASURE = "ib_write_bw BW average"
BUS_MEASURE = "nccl-tests busbw at the largest sizes"


def figure(value: float) -> str:
    """A number as the floors say it: at most two decimals, none where it is whole (`40`, `6.25`, `33.33`)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"


@dataclass(frozen=True)
class Step:
    """One link of a floor's chain: a fact, its number, and where the number came from."""

    fact: str
    number: str
    source: str

    def __str__(self) -> str:
        return f"{self.fact}: {self.number} ({self.source})"


@dataclass(frozen=True)
class Floor:
    """The least a healthy fabric gives: `value` in `unit`, of `measure`, and how it was derived."""

    value: float
    unit: str
    measure: str
    chain: tuple[Step, ...]
    line: float
    """What the hardware gives at most, in `unit`: the line rate the fraction is taken of (or the NVLink that bounds
    it), so that a measure can be said as a share of it."""

    @property
    def text(self) -> str:
        return f"{figure(self.value)} {self.unit}"

    @property
    def reasons(self) -> str:
        """The chain in one line, each step after the other."""
        return "; ".join(str(step) for step in self.chain)


@dataclass(frozen=True)
class NoFloor:
    """Why no floor can be derived: the measure is then reported, not judged."""

    measure: str
    reason: str


def link_words(nic: Nic) -> str:
    """`InfiniBand EDR`, `RoCE (Ethernet)`, or the speed's only name where the profile says no link type."""
    if nic.link_type is LinkType.INFINIBAND:
        generation = fabric.INFINIBAND_GENERATIONS.get(nic.speed_gbps or 0)
        return "InfiniBand" + (f" {generation}" if generation else "")
    if nic.link_type is LinkType.ETHERNET:
        return "RoCE (Ethernet)"
    return "link type not stated"


def rate_basis(nic: Nic) -> str:
    """Where a NIC's line rate comes from beside its `speedGbps`: the InfiniBand generation it names, or RoCE's port."""
    if nic.link_type is LinkType.INFINIBAND and nic.speed_gbps in fabric.INFINIBAND_GENERATIONS:
        return fabric.INFINIBAND_RATES_SOURCE
    if nic.link_type is LinkType.ETHERNET:
        return fabric.ETHERNET_RATE_SOURCE
    return ""


def _rate_source(nics: list[Nic], hardware: str) -> str:
    """`hardware dgx-1, speedGbps of NIC ib0; <the rates' basis>`."""
    bases = "; ".join(basis for basis in dict.fromkeys(rate_basis(nic) for nic in nics) if basis)
    named = f"hardware {hardware}, speedGbps of NIC {', '.join(nic.name for nic in nics)}"
    return f"{named}; {bases}" if bases else named


def line_rate(attachment: RailAttachment, hardware: str) -> Step | NoFloor:
    """A rail's line rate (Gb/s) as a step of a chain, or why it is unknown."""
    nic = attachment.nic
    if nic.speed_gbps is None:
        return NoFloor(RAIL_MEASURE, f"NIC {nic.name} of hardware {hardware} (rail {attachment.rail.name}) states no "
                                     "speedGbps: its line rate is unknown; add it to the hardware profile")
    device = f" ({nic.hca} port {nic.port})" if nic.hca else ""
    return Step(f"rail {attachment.rail.name} over NIC {nic.name}{device}, {link_words(nic)}",
                f"{nic.speed_gbps} {GBIT}", _rate_source([nic], hardware))


def rail_floor(attachment: RailAttachment, hardware: str) -> Floor | NoFloor:
    """ib_write_bw's `BW average` (Gb/s, `--report_gbits`) between two nodes on this rail: the stated fraction of
    its line rate."""
    rate = line_rate(attachment, hardware)
    if isinstance(rate, NoFloor):
        return rate
    value = float(attachment.nic.speed_gbps or 0) * fabric.IB_WRITE_BW_FRACTION
    share = Step("ib_write_bw reaches at least", f"{figure(fabric.IB_WRITE_BW_FRACTION * 100)}% of it = "
                 f"{figure(value)} {GBIT}", fabric.IB_WRITE_BW_SOURCE)
    return Floor(value, GBIT, RAIL_MEASURE, (rate, share), float(attachment.nic.speed_gbps or 0))


def _env(job: Job, name: str) -> str | None:
    return next((var.value for var in job.env if var.name == name and var.secret is None and var.run_ref is None), None)


def _crossing_problem(job: Job) -> str:
    """Why the job's ranks may not cross nodes over its rails ('' where they do)."""
    if not job.uses_gpus:
        return "it runs no GPUs: nccl-tests measures GPUs"
    if job.worker_count < 2:
        return "one worker: nothing crosses nodes"
    if job.workers_per_node > 1 and job.worker_spread is not WorkerSpread.ONE_PER_NODE:
        return (f"up to {job.workers_per_node} of its workers may share a node, so which ranks cross the fabric is the "
                "scheduler's choice; give it whole nodes or workerSpread one-per-node")
    if not job.rails:
        return "no rails: NCCL crosses nodes over the cluster network, whose speed no profile states"
    if _env(job, "NCCL_IB_DISABLE") == "1":
        return "NCCL_IB_DISABLE=1: NCCL crosses nodes over sockets, not RDMA"
    return ""


def _rails_step(counted: list[RailAttachment], hardware: str) -> Step:
    """The rails a worker drives, alike ones together: `4 x 100 Gb/s InfiniBand EDR (rail0, ..., rail3)`."""
    groups: dict[tuple[str, int], list[str]] = {}
    for attachment in counted:
        key = (link_words(attachment.nic), attachment.nic.speed_gbps or 0)
        groups.setdefault(key, []).append(attachment.rail.name)
    kinds = "; ".join(f"{len(rails)} x {speed} {GBIT} {words} ({', '.join(rails)})"
                      for (words, speed), rails in groups.items())
    gbits = sum(attachment.nic.speed_gbps or 0 for attachment in counted)
    return Step(f"the rails a worker drives: {kinds}", f"{gbits} {GBIT} = {figure(gbits / fabric.BITS_PER_BYTE)} "
                f"{GBYTE}", f"{_rate_source([a.nic for a in counted], hardware)}; {fabric.BITS_PER_BYTE} bits a byte")


def bus_bandwidth_floor(job: Job, collective: str | None = None) -> Floor | NoFloor:
    """nccl-tests' bus bandwidth (GB/s) at the largest sizes of `collective` (the job's own where it is an acceptance
    job, else all_reduce): the line rate of the rails a worker drives, times the stated efficiency, bounded by its GPUs'
    NVLink where that is lower; alltoall, which sends each GPU's share across on its own, by one GPU's share."""
    test = job.acceptance.collective if job.acceptance is not None else None
    collective = collective or (test.collective if test is not None else "all_reduce")
    problem = _crossing_problem(job)
    if problem:
        return NoFloor(BUS_MEASURE, problem)
    hardware = job.pool.hardware.name
    for attachment in job.rails:
        rate = line_rate(attachment, hardware)
        if isinstance(rate, NoFloor):
            return NoFloor(BUS_MEASURE, rate.reason)
    gpus = job.gpus_per_worker
    counted = sorted(job.rails, key=lambda attachment: -(attachment.nic.speed_gbps or 0))[:gpus]
    chain = [_rails_step(counted, hardware)]
    if len(counted) < len(job.rails):
        chain.append(Step("of the job's rails, at most one a GPU", f"{len(counted)} of {len(job.rails)}",
                          f"a worker of {gpus} GPU(s): NCCL pairs each GPU with a NIC beside it"))
    gbytes = sum(attachment.nic.speed_gbps or 0 for attachment in counted) / fabric.BITS_PER_BYTE
    if collective not in fabric.RING_COLLECTIVES:
        gbytes /= gpus
        chain.append(Step(f"{collective}: one GPU's share of them", f"/ {gpus} GPUs = {figure(gbytes)} {GBYTE}",
                          f"{fabric.BUS_BANDWIDTH_SOURCE}; each GPU sends its share across on its own"))
    value = gbytes * fabric.NCCL_BUS_BANDWIDTH_EFFICIENCY
    percent = figure(fabric.NCCL_BUS_BANDWIDTH_EFFICIENCY * 100)
    chain.append(Step("nccl-tests busbw reaches at least", f"{percent}% of it = {figure(value)} {GBYTE}",
                      fabric.NCCL_BUS_BANDWIDTH_SOURCE))
    bounded = _nvlink_bound(job, value, chain)
    if bounded < value:
        value, gbytes = bounded, bounded / fabric.NCCL_BUS_BANDWIDTH_EFFICIENCY
    if job.devices is not None and job.devices.channel:
        chain.append(Step("NCCL crosses nodes over NVLink here (the ComputeDomain's channel)", "far above the rails",
                          "this floor, of the rails, is what a fall back to them must still give"))
    return Floor(value, GBYTE, BUS_MEASURE, tuple(chain), gbytes)


def _nvlink_bound(job: Job, value: float, chain: list[Step]) -> float:
    """The floor, lowered to the GPUs' NVLink (each way, at the same efficiency) where that is lower; the step says
    which, or why there is no bound."""
    gpu = job.pool.hardware.gpu
    if gpu is None or job.gpus_per_worker < 2:
        return value
    link = fabric.nvlink_of(gpu.model)
    if link is None:
        chain.append(Step(f"GPU model {gpu.model or '(not stated)'}", "no NVLink figure, no intra-node bound",
                          fabric.NVLINK_SOURCE))
        return value
    bound = link.each_way_gbytes * fabric.NCCL_BUS_BANDWIDTH_EFFICIENCY
    lower = bound < value
    chain.append(Step(f"NVLink {link.generation} of {gpu.model}, {figure(link.each_way_gbytes)} {GBYTE} each way, at "
                      f"the same share", f"{figure(bound)} {GBYTE}, " + ("lower: the floor" if lower else "higher: "
                                                                         "no bound"), fabric.NVLINK_SOURCE))
    return bound if lower else value
