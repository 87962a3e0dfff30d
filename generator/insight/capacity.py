"""What each node pool offers, what each job asks of it, and which jobs fit together: `mpigen plan`'s numbers.

Pure functions over the resolved model. A node offers its logical CPUs, its memory, its GPUs and, per rail it
carries, the rail's devices (the VFs the device plugin or operator makes, or a shared device's sharing limit),
the same units the infra chart's queues count in (generator/admission.py). A worker asks for what its pod's
container limits say (the very `pod_network` of its provider). MPI jobs are gang-scheduled wholes: a job runs
only once all its workers are placed, so jobs are packed whole, first fit, in the order a scheduler admits them
(priority, then name). The launcher has no node selector and asks for little; it is counted only in queues.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from generator import admission
from generator.manifests.providers import PROVIDERS, pod_network
from generator.model import Cluster, Job, NodePool, Scheduler
from generator.vocabulary.kubernetes import quantity

HOST_PORT = "host port"
"""A pseudo-resource of one per node under host networking: every worker there binds sshd's port on the node."""


@dataclass(frozen=True)
class Amounts:
    """Resources by name, in the units of `admission.node_offer` (CPUs, GiB of memory, devices)."""

    items: tuple[tuple[str, Decimal], ...]

    def get(self, resource: str) -> Decimal:
        return dict(self.items).get(resource, Decimal(0))

    def texts(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, admission.amount_text(amount, "Gi" if name == admission.MEMORY else ""))
                     for name, amount in self.items)


def node_offer(cluster: Cluster, pool: NodePool) -> Amounts:
    """What one node of `pool` offers, the resources of `admission.node_offer` (and the sshd port under host
    networking)."""
    hardware = pool.hardware
    provider = PROVIDERS[cluster.network.provider]
    gpus = hardware.gpu.count if hardware.gpu else 0
    items: list[tuple[str, Decimal]] = []
    if hardware.cpu.cores_per_socket is not None:
        items.append((admission.CPU, Decimal(hardware.cpu.sockets * hardware.cpu.cores_per_socket
                                             * hardware.cpu.threads_per_core)))
    items.append((admission.MEMORY, Decimal(hardware.memory_gib)))
    if hardware.gpu:
        items.append((hardware.gpu.resource, Decimal(gpus)))
    if provider.rdma:
        devices = admission.rail_devices_per_node(provider.exclusive_devices, {"numVfs": cluster.network.num_vfs},
                                                  gpus)
        items += [(rail.resource, Decimal(devices)) for rail in cluster.rails_of(pool)]
    if provider.host_network:
        items.append((HOST_PORT, Decimal(1)))
    return Amounts(tuple(items))


def worker_ask(job: Job) -> Amounts:
    """What one worker pod asks of its node: its container's CPU, memory, GPUs and rail devices."""
    items: list[tuple[str, Decimal]] = []
    if job.resources.cpu is not None:
        items.append((admission.CPU, quantity(job.resources.cpu)))
    if job.resources.memory is not None:
        items.append((admission.MEMORY, quantity(job.resources.memory) / 1024 ** 3))
    if job.uses_gpus:
        items.append((job.pool.hardware.gpu.resource, Decimal(job.gpus_per_worker)))
    network = pod_network(job, job.name)
    items += [(resource, Decimal(count)) for resource, count in network.limits]
    if network.host_network:
        items.append((HOST_PORT, Decimal(1)))
    return Amounts(tuple(items))


def launcher_ask(job: Job) -> Amounts:
    resources = job.launcher_resources
    items = []
    if resources.cpu is not None:
        items.append((admission.CPU, quantity(resources.cpu)))
    if resources.memory is not None:
        items.append((admission.MEMORY, quantity(resources.memory) / 1024 ** 3))
    return Amounts(tuple(items))


def job_demand(job: Job, launcher: bool = False) -> Amounts:
    """What all of a job's workers ask together (and its launcher, where a queue counts it)."""
    total: dict[str, Decimal] = {}
    for name, amount in worker_ask(job).items:
        total[name] = total.get(name, Decimal(0)) + amount * job.worker_count
    if launcher:
        for name, amount in launcher_ask(job).items:
            total[name] = total.get(name, Decimal(0)) + amount
    return Amounts(tuple((name, amount) for name, amount in total.items() if name != HOST_PORT))


def priority_of(job: Job) -> int:
    """The value of the job's priority class (0 without one): schedulers admit higher values first."""
    named = job.scheduling.priority_class
    return next((p.value for p in job.cluster.scheduling.priority_classes if p.name == named), 0)


def admission_order(jobs: tuple[Job, ...]) -> list[Job]:
    return sorted(jobs, key=lambda job: (-priority_of(job), job.name))


class Nodes:
    """The free resources of a pool's nodes while jobs are packed onto them."""

    def __init__(self, offer: Amounts, count: int) -> None:
        self.free = [dict(offer.items) for _ in range(count)]

    def place(self, job: Job) -> tuple[int, ...] | None:
        """The node of each worker, first fit, taking their resources; None (and nothing taken) if one does not
        fit: a gang runs whole or not at all."""
        ask = worker_ask(job).items
        taken: list[int] = []
        for _ in range(job.worker_count):
            node = next((i for i, free in enumerate(self.free)
                         if all(free.get(name, Decimal(0)) >= amount for name, amount in ask)), None)
            if node is None:
                for i in taken:
                    self._give(i, ask, 1)
                return None
            self._give(node, ask, -1)
            taken.append(node)
        return tuple(taken)

    def _give(self, node: int, ask: tuple[tuple[str, Decimal], ...], sign: int) -> None:
        for name, amount in ask:
            self.free[node][name] = self.free[node].get(name, Decimal(0)) + sign * amount


def nodes_needed(job: Job) -> int:
    """Nodes the job's workers take when it has the pool to itself."""
    placed = Nodes(node_offer(job.cluster, job.pool), job.pool.nodes).place(job)
    return len(set(placed)) if placed else 0


@dataclass(frozen=True)
class Packing:
    """One possible state of a pool: the jobs that start at once (with each worker's node) and those that wait."""

    running: tuple[tuple[Job, tuple[int, ...]], ...]
    waiting: tuple[Job, ...]


def pack(cluster: Cluster, pool: NodePool, jobs: tuple[Job, ...]) -> Packing:
    """Admit jobs whole in scheduler order; a job that does not fit beside those admitted waits."""
    nodes = Nodes(node_offer(cluster, pool), pool.nodes)
    running, waiting = [], []
    for job in admission_order(jobs):
        placed = nodes.place(job)
        if placed is None:
            waiting.append(job)
        else:
            running.append((job, placed))
    return Packing(tuple(running), tuple(waiting))


def fit_together(cluster: Cluster, pool: NodePool, jobs: tuple[Job, ...]) -> bool:
    nodes = Nodes(node_offer(cluster, pool), pool.nodes)
    return all(nodes.place(job) is not None for job in admission_order(jobs))


def gangs(cluster: Cluster) -> bool:
    """Whether the cluster admits jobs whole (a gang scheduler, or Kueue's all-or-nothing admission)."""
    return cluster.scheduling.scheduler is not Scheduler.NONE
