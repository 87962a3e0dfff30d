"""Where each rank of a job runs: its worker, the node's GPU it drives and the NIC its traffic goes through, as the
rankfile binds them and NCCL and the frameworks choose; `mpigen explain` lists them and the picture draws them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mpigen.manifests.hostfile import job_host
from mpigen.model import Job, Nic, stated
from mpigen.model.hostfile import rankfile_line

BINDING_RULE = ("frameworks (Horovod, PyTorch) drive GPU i from local rank i, and NCCL sends each GPU's traffic "
                "through the NIC nearest it (the hardware profile's `gpus` of each NIC); a worker holds one device of "
                "each rail it attaches")


@dataclass(frozen=True)
class RankBinding:
    rank: int
    worker: int
    local_rank: int
    host: str
    gpu: int | None
    """The node's GPU index it drives; None where the device plugin chooses the worker's GPUs, or none."""
    nic: str | None
    """The hardware's NIC its GPU's traffic goes through; None where that is not known."""
    hca: str | None
    rail: str | None
    rankfile_line: str | None

    @property
    def gpu_text(self) -> str:
        return "-" if self.gpu is None else str(self.gpu)

    @property
    def nic_text(self) -> str:
        if self.nic is None:
            return "-"
        return f"{self.nic} ({self.hca})" if self.hca else self.nic


def _whole_node(job: Job) -> bool:
    """Local rank i drives the node's GPU i: the worker has every GPU of the node and one rank on each."""
    gpu = job.pool.hardware.gpu
    return job.uses_gpus and gpu is not None and job.gpus_per_worker == gpu.count \
        and job.slots_per_worker == job.gpus_per_worker


def binding_gaps(job: Job) -> str:
    """Why a rank's GPU or NIC is not known, where it is not."""
    hardware = job.pool.hardware
    if not job.uses_gpus:
        return "; a CPU job: no GPU, and MPI's traffic takes every attached rail (UCX)" if job.rails else \
            "; a CPU job with no rails: everything goes over the cluster network"
    gpus = stated(hardware.gpu).count
    if job.gpus_per_worker != gpus:
        chooser = "its DRA claim's allocation" if job.devices is not None else "the GPU device plugin"
        return (f"; here a worker has {job.gpus_per_worker} of a node's {gpus} GPUs and {chooser} "
                "chooses which, so no rank's GPU or NIC is known before it runs")
    if not _whole_node(job):
        return (f"; here {job.slots_per_worker} ranks share {job.gpus_per_worker} GPUs: which rank drives which GPU "
                "is the program's choice")
    if not any(nic.gpus for nic in hardware.nics):
        claimed = job.devices is not None and any(pair.nic for pair in job.devices.pairs)
        return (f"; hardware {hardware.name} does not say which NIC each GPU sits beside (`gpus` of its NICs), so "
                "no rank's NIC is known" + ("; the workers' claim still places each NIC beside its share of the "
                                            "GPUs (devices)" if claimed else ""))
    return ""


def rank_bindings(job: Job, mpijob: str, ranks: Iterable[int]) -> tuple[RankBinding, ...]:
    """Each of `ranks`' worker, GPU and NIC: what the rankfile binds, and what NCCL and the frameworks choose. Each
    rank costs the same whatever the job's size: a caller asks for the ranks it shows, never the whole job."""
    hardware = job.pool.hardware
    whole_node = _whole_node(job)
    nic_of_gpu: dict[int, Nic] = {}
    for listed in hardware.nics:  # the first NIC that names a GPU, as derive.gpu_sockets reads them
        for index in listed.gpus:
            nic_of_gpu.setdefault(index, listed)
    rail_of_nic = {attachment.nic.name: attachment.rail.name for attachment in job.rails}
    rankfile = job.placement.rankfile
    bindings = []
    for rank in ranks:
        worker, local = divmod(rank, job.slots_per_worker)
        host = job_host(job, mpijob, worker)
        gpu = local if whole_node else None
        nic = nic_of_gpu.get(gpu) if gpu is not None else None
        rail = rail_of_nic.get(nic.name) if nic else None
        line = rankfile_line(rank, host, job.placement.rank_sockets[local], job.placement.cores_per_socket) \
            if rankfile else None
        bindings.append(RankBinding(rank, worker, local, host, gpu, nic.name if nic and rail else None,
                                    nic.hca if nic and rail else None, rail, line))
    return tuple(bindings)


def rank_pattern(job: Job) -> str:
    """What holds for every rank, listed or not."""
    slots = job.slots_per_worker
    return (f"rank r is local rank r mod {slots} of worker r div {slots} (ranks fill the workers in hostfile order), "
            "and local rank i of every worker has the GPU, NIC, rail and socket of worker 0's local rank i")
