"""Values that follow from the profiles, computed the same way for validation and for the model.

Pure functions over plain profile data (already schema-valid), so `validate` can explain a
problem with the very numbers `resolve` would use.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mpigen.model import GitOpsTool, WorkerSpread, defaults
from mpigen.vocabulary.gitops import ARGOCD_NAMESPACE, FLUX_NAMESPACE
from mpigen.vocabulary.kubernetes import exact, quantity

DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"


# mpi-operator's own ssh options for OpenMPI (its `OMPI_MCA_plm_rsh_args`), repeated wherever mpigen sets them.
OPERATOR_SSH_ARGS = "-o ConnectionAttempts=10"


def gitops_namespace(gitops: dict[str, Any]) -> str:
    """Where a cluster's GitOps objects live: the profile's `namespace`, else the tool's own."""
    return str(gitops.get("namespace", {GitOpsTool.ARGOCD.value: ARGOCD_NAMESPACE,
                                        GitOpsTool.FLUX.value: FLUX_NAMESPACE}[gitops["tool"]]))


def backend_of(job: dict[str, Any], cluster: dict[str, Any]) -> str:
    """The job's backend: its own `backend`, else its cluster's `jobBackend`, else mpijob."""
    return str(job.get("backend", cluster.get("jobBackend", defaults.JOB_BACKEND)))


def gpu_count(hardware: dict[str, Any]) -> int:
    return int(hardware.get("gpu", {}).get("count", 0))


def multi_node_nvlink(hardware: dict[str, Any]) -> bool:
    """NVLink joins the GPUs of several nodes (`gpu.nvlinkDomainGpus` beyond the node's own): a job's pods need a
    ComputeDomain's IMEX channel to use it (the model's `Gpu.multi_node_nvlink`)."""
    gpu = hardware.get("gpu", {})
    domain = gpu.get("nvlinkDomainGpus")
    return domain is not None and int(domain) > int(gpu.get("count", 0))


def physical_cores(hardware: dict[str, Any]) -> int:
    cpu = hardware["cpu"]
    return int(cpu["sockets"]) * int(cpu["coresPerSocket"])


def logical_cpus(hardware: dict[str, Any]) -> int:
    return physical_cores(hardware) * int(hardware["cpu"].get("threadsPerCore", 1))


def nic_names(hardware: dict[str, Any]) -> list[str]:
    return [nic["name"] for nic in hardware.get("nics", [])]


def pool_rails(cluster: dict[str, Any], hardware: dict[str, Any]) -> list[dict[str, Any]]:
    """Rails a pool of this hardware can attach: those whose NIC the hardware has."""
    names = set(nic_names(hardware))
    return [rail for rail in cluster.get("rails", []) if rail["nic"] in names]


def pool_node_labels(pool: dict[str, Any], hardware: dict[str, Any]) -> dict[str, str]:
    """The labels that pick a pool's nodes: its hardware's, then its own (`NodePool.node_selector` on the model)."""
    return {**hardware.get("nodeLabels", {}), **pool.get("nodeLabels", {})}


@dataclass(frozen=True)
class Layout:
    """How a job's workers sit on its pool's nodes."""

    gpus_per_worker: int
    worker_count: int
    slots_per_worker: int
    workers_per_node: int
    nodes: int
    worker_count_origin: str
    per_node_bound: str = "GPUs"
    """What bounds `workers_per_node`: `GPUs`, `CPUs`, `memory`, `a whole node` (a CPU job that asks for no
    CPUs takes a node a worker), `host networking` or `workerSpread: one-per-node` (one a node)."""

    @property
    def capacity(self) -> int:
        return self.nodes * self.workers_per_node


def requested_gpus_per_worker(job: dict[str, Any], gpus_per_node: int) -> int:
    """A worker takes a whole node's GPUs unless the job says otherwise."""
    return int(job.get("gpusPerWorker", gpus_per_node))


ONE_PER_NODE_HOST_NETWORK = "host networking"
ONE_PER_NODE_CLAIMED_NICS = "claimed NICs"
"""Under DRA a worker's claim selects its rails' NICs by their interface on the node: a second worker there finds them
taken, and stays Pending."""


@exact
def layout(job: dict[str, Any], hardware: dict[str, Any], nodes: int, one_per_node: str | None = None) -> Layout:
    """Workers, GPUs and slots per worker, and how many such workers the pool can hold.

    `one_per_node`: why no two workers of the job share a node, where the network says so (`ONE_PER_NODE_HOST_NETWORK`:
    both would bind sshd's port; `ONE_PER_NODE_CLAIMED_NICS`: both claim the same NICs); a job that asks for
    `workerSpread: one-per-node` gets it anyway.

    Callers check `gpus_per_worker <= gpu_count` and divisibility of `totalGpus` themselves; here
    a job that asks for impossible numbers still gets a layout, so every problem can be reported.
    """
    gpus = gpu_count(hardware)
    resources = job.get("resources", {})
    cpu = resources.get("cpu")
    if gpus:
        gpus_per_worker = requested_gpus_per_worker(job, gpus)
        if "workers" in job:
            worker_count, origin = int(job["workers"]), "workers"
        else:
            worker_count = int(job.get("totalGpus", gpus_per_worker)) // max(gpus_per_worker, 1)
            origin = f"totalGpus {job.get('totalGpus')} / {gpus_per_worker} GPUs per worker"
        slots = int(job.get("slotsPerWorker", gpus_per_worker))
        per_node, bound = (gpus // gpus_per_worker if gpus_per_worker else 0), "GPUs"
    else:
        gpus_per_worker = 0
        worker_count, origin = int(job.get("workers", 1)), "workers"
        if cpu is None:
            default_slots, per_node, bound = physical_cores(hardware), 1, "a whole node"
        else:
            default_slots, per_node, bound = max(int(quantity(cpu)), 1), 1 << 30, "CPUs"
        slots = int(job.get("slotsPerWorker", default_slots))
    # The scheduler places a worker where its CPU and memory requests fit too.
    for asked, offered, what in ((cpu, Decimal(logical_cpus(hardware)) if "coresPerSocket" in hardware["cpu"]
                                  else None, "CPUs"),
                                 (resources.get("memory"), quantity(f"{hardware['memoryGiB']}Gi"), "memory")):
        if asked is not None and offered is not None:
            wanted = quantity(asked)
            fits = int(offered // wanted) if wanted else 1 << 30
            if fits < per_node:
                per_node, bound = fits, what
    spread = job.get("workerSpread") == WorkerSpread.ONE_PER_NODE.value
    if (one_per_node or spread) and per_node > 1:
        per_node, bound = 1, (one_per_node or f"workerSpread: {WorkerSpread.ONE_PER_NODE.value}")
    return Layout(gpus_per_worker, worker_count, slots, per_node, nodes, origin, bound)


def socket_of_numa_node(hardware: dict[str, Any], numa_node: int) -> int:
    """NUMA nodes are numbered socket by socket: node n is on socket n // numaNodesPerSocket."""
    return numa_node // int(hardware.get("cpu", {}).get("numaNodesPerSocket", 1))


def gpu_sockets(hardware: dict[str, Any]) -> list[int] | None:
    """The CPU socket of each GPU (index = GPU): that of the NUMA node of a NIC that names it in `gpus`. None
    unless every GPU is named by a NIC whose NUMA node is known."""
    sockets: dict[int, int] = {}
    for nic in hardware.get("nics", []):
        if "numaNode" in nic:
            for gpu in nic.get("gpus", []):
                sockets.setdefault(gpu, socket_of_numa_node(hardware, nic["numaNode"]))
    count = gpu_count(hardware)
    if not count or sorted(sockets) != list(range(count)):
        return None
    return [sockets[gpu] for gpu in range(count)]


def nic_socket_problem(hardware: dict[str, Any], gpus_per_worker: int, slots_per_worker: int,
                       worker_cpu: str | None = None, cpu_manager_policy: str | None = None) -> str:
    """Why a job's ranks cannot each be bound to the socket of its GPU's NIC, or '' when they can.

    Frameworks drive GPU i from local rank i; that holds only when a worker has the whole node (with part
    of it, the GPU device plugin chooses which GPUs it gets) and runs one rank per GPU. The rankfile names
    every core of a socket, so the worker must be free to run on all of them: under the kubelet's static CPU
    manager a worker that asks for CPUs is confined to the cores it was given, which no profile knows, so a
    worker that asks for CPUs gets a rankfile only where the cluster says its policy is `none`.
    """
    name, gpus, sockets = hardware["name"], gpu_count(hardware), gpu_sockets(hardware)
    if not gpus_per_worker:
        return f"hardware '{name}' has no GPUs"
    if sockets is None:
        return (f"hardware '{name}' does not say, for every GPU, which NIC it sits beside (`gpus` on its NICs) "
                "and that NIC's NUMA node (`numaNode`)")
    if "coresPerSocket" not in hardware["cpu"]:
        return f"hardware '{name}' does not say how many cores a socket has (cpu.coresPerSocket)"
    if gpus_per_worker != gpus:
        return (f"a worker has {gpus_per_worker} of a node's {gpus} GPUs, and the GPU device plugin chooses "
                "which, so local rank i need not drive GPU i")
    if slots_per_worker != gpus_per_worker:
        return f"a worker runs {slots_per_worker} ranks on {gpus_per_worker} GPUs, not one rank per GPU"
    if worker_cpu is not None and cpu_manager_policy != "none":
        said = ("the cluster's kubelets use the static CPU manager" if cpu_manager_policy == "static"
                else "the cluster profile does not say its kubelets' CPU manager policy is `none`")
        return (f"a worker asks for {worker_cpu} CPUs and {said}: under `static` it runs on the cores it is given, "
                "which a rankfile naming a socket's cores cannot know")
    return ""
