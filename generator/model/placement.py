"""Where OpenMPI puts a job's ranks on a worker, and what it binds them to.

A GPU job runs one rank per GPU, and frameworks (Horovod, PyTorch) drive GPU i from local rank i. Its
host-side work (data loading, the NIC's buffers) is fastest on the CPU socket that the GPU's NIC hangs
off; so where the hardware says which GPUs sit beside which NIC, and that NIC's NUMA node, each rank is
bound to that socket by a rankfile (`derive.nic_socket_problem` says when it cannot be). Otherwise GPU
jobs keep the NetApp seed's `--map-by slot --bind-to none`, and CPU jobs OpenMPI's own default.
"""

from __future__ import annotations

from typing import Any

from mpigen.model import BindTo, MpiImplementation, Placement, derive

DEFAULT_GPU_MAP_BY = "slot"


def resolve_placement(job: dict[str, Any], hardware: dict[str, Any], implementation: MpiImplementation,
                      gpus_per_worker: int, slots_per_worker: int, cpu_manager_policy: str | None = None) -> Placement:
    """The job's placement (plain profile data in); validation has refused a `placement` this cannot honour."""
    if implementation is not MpiImplementation.OPENMPI:
        return Placement(map_by=None, bind_to=None)  # Intel MPI and MPICH place ranks themselves
    given = job.get("placement", {})
    map_by = given.get("mapBy")
    problem = ""
    if "bindTo" in given:
        bind_to = BindTo(given["bindTo"])
    elif gpus_per_worker and map_by is None and not (problem := derive.nic_socket_problem(
            hardware, gpus_per_worker, slots_per_worker, job.get("resources", {}).get("cpu"), cpu_manager_policy)):
        bind_to = BindTo.GPU_NIC_SOCKET
    elif gpus_per_worker:
        bind_to = BindTo.NONE  # ranks fill a worker in order (local rank i on GPU i) and are not bound
    else:
        return Placement(map_by=map_by, bind_to=None, no_rankfile="a CPU job")  # OpenMPI's own binding
    if bind_to is BindTo.GPU_NIC_SOCKET:
        return Placement(map_by=None, bind_to=bind_to, rank_sockets=tuple(derive.gpu_sockets(hardware) or ()),
                         cores_per_socket=int(hardware["cpu"]["coresPerSocket"]))
    return Placement(map_by=(map_by or DEFAULT_GPU_MAP_BY) if gpus_per_worker else map_by, bind_to=bind_to,
                     no_rankfile=problem or "the job's own placement")
