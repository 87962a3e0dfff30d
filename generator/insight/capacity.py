"""What each node pool offers, what each job asks of it, and which jobs start together: `mpigen plan`'s numbers.

Pure functions over the resolved model. A node offers what `admission.node_offer` counts (the model's
`NodePool.offer`: logical CPUs, memory, GPUs and each rail's devices), the unit of every queue's quota. A worker
asks for what its container's limits say (its provider's very `pod_network`). MPI jobs are gang-scheduled wholes:
a job starts only once all its workers are placed, so jobs are admitted whole, in the order a scheduler admits
them (priority, then name): first against their queue's quota (Kueue: the queue's share of the pool plus what its
cohort can lend, and the cohort's total; Volcano: the queue's capability), then onto the nodes, first fit, never
more of one job's workers on a node than its layout holds. The result is one possible state of the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from generator import admission
from generator.manifests.node_placement import launcher_pool
from generator.manifests.providers import pod_network
from generator.model import Cluster, Job, NodePool, Queue, Scheduler


@dataclass(frozen=True)
class Amounts:
    """Resources by name, in the units of `admission.node_offer` (CPUs, GiB of memory, devices)."""

    items: tuple[tuple[str, Decimal], ...]

    def get(self, resource: str) -> Decimal:
        return dict(self.items).get(resource, Decimal(0))

    def texts(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, admission.amount_text(amount, "Gi" if name == admission.MEMORY else ""))
                     for name, amount in self.items)

    def plus(self, other: Amounts, times: int = 1) -> Amounts:
        total = dict(self.items)
        for name, amount in other.items:
            total[name] = total.get(name, Decimal(0)) + amount * times
        return Amounts(tuple(total.items()))


NOTHING = Amounts(())


def node_offer(pool: NodePool) -> Amounts:
    return Amounts(tuple((name, Decimal(amount)) for name, amount, _ in pool.offer))


def _cpu_memory(cpu: str | None, memory: str | None) -> tuple[tuple[str, Decimal], ...]:
    given = {key: value for key, value in ((admission.CPU, cpu), (admission.MEMORY, memory)) if value is not None}
    return tuple(admission.cpu_memory(given).items())


def worker_ask(job: Job) -> Amounts:
    """What one worker pod asks of its node: its container's CPU, memory, GPUs and rail devices."""
    items = list(_cpu_memory(job.resources.cpu, job.resources.memory))
    if job.uses_gpus:
        items.append((job.pool.hardware.gpu.resource, Decimal(job.gpus_per_worker)))
    items += [(resource, Decimal(count)) for resource, count in pod_network(job, job.name).limits]
    return Amounts(tuple(items))


def launcher_ask(job: Job) -> Amounts:
    return Amounts(_cpu_memory(job.launcher_resources.cpu, job.launcher_resources.memory))


def job_demand(job: Job, launcher: bool = False) -> Amounts:
    """What all of a job's workers ask together (and its launcher, which queues count too)."""
    return NOTHING.plus(worker_ask(job), job.worker_count).plus(launcher_ask(job) if launcher else NOTHING)


def priority_of(job: Job) -> int:
    """The value of the job's priority class (0 without one): schedulers admit higher values first."""
    named = job.scheduling.priority_class
    return next((p.value for p in job.cluster.scheduling.priority_classes if p.name == named), 0)


def admission_order(jobs: tuple[Job, ...]) -> list[Job]:
    return sorted(jobs, key=lambda job: (-priority_of(job), job.name))


class _Nodes:
    """The free resources of a pool's nodes while jobs are placed on them."""

    def __init__(self, pool: NodePool) -> None:
        self.free = [dict(node_offer(pool).items) for _ in range(pool.nodes)]

    def place(self, job: Job) -> tuple[int, ...] | None:
        """The node of each worker, first fit, at most `workers_per_node` of them a node, taking their resources;
        None (and nothing taken) if one does not fit: a gang starts whole or not at all."""
        ask = worker_ask(job).items
        taken: list[int] = []
        for _ in range(job.worker_count):
            node = next((i for i, free in enumerate(self.free) if taken.count(i) < job.workers_per_node
                         and all(free.get(name, Decimal(0)) >= amount for name, amount in ask)), None)
            if node is None:
                for i in taken:
                    self._take(i, ask, -1)
                return None
            self._take(node, ask, 1)
            taken.append(node)
        return tuple(taken)

    def _take(self, node: int, ask: tuple[tuple[str, Decimal], ...], sign: int) -> None:
        for name, amount in ask:
            self.free[node][name] = self.free[node].get(name, Decimal(0)) - sign * amount


def nodes_needed(job: Job) -> int:
    """Nodes the job's workers take when it has the pool to itself; 0 where they never fit."""
    placed = _Nodes(job.pool).place(job)
    return len(set(placed)) if placed else 0


def queue_of(job: Job) -> Queue | None:
    """The declared queue the job goes to (None: no queues, or Volcano's own `default`)."""
    return next((q for q in job.cluster.scheduling.queues if q.name == job.scheduling.queue), None)


class _Quotas:
    """What each queue has admitted so far, against what it can ever hold."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.used: dict[tuple[str, str, str], Decimal] = {}
        """(queue, pool or '' for a cluster-wide Volcano capability, resource) -> admitted."""

    def _limits(self, queue: Queue, job: Job) -> list[tuple[tuple[str, str, str], Decimal, list[str], Decimal]]:
        """(use key, limit, queues sharing the limit, what the job asks of it) for each resource the job asks of its
        queue. Under Kueue a launcher pinned to the cluster's `launcherPool` counts against that pool's share."""
        found = []
        if self.cluster.scheduling.scheduler is Scheduler.VOLCANO:
            asked = job_demand(job, launcher=True)
            capability = queue.capability()
            for name, amount in asked.items:
                if name in capability:
                    found.append(((queue.name, "", name), Decimal(capability[name][0]), [queue.name], amount))
            return found
        pinned = launcher_pool(job)
        if pinned is None or pinned.name == job.pool.name:
            asks = [(job.pool.name, job_demand(job, launcher=True))]
        else:
            asks = [(job.pool.name, job_demand(job)), (pinned.name, launcher_ask(job))]
        cohort = [q for q in self.cluster.scheduling.queues if queue.cohort is not None and q.cohort == queue.cohort]
        for pool, asked in asks:
            share = next((s for s in queue.shares if s.pool.name == pool), None)
            for quota in share.quotas if share is not None else ():
                amount = asked.get(quota.resource)
                if not amount:
                    continue
                found.append(((queue.name, pool, quota.resource), Decimal(quota.reach), [queue.name], amount))
                if cohort:
                    total = sum(q.count for other in cohort for s in other.shares if s.pool.name == pool
                                for q in s.quotas if q.resource == quota.resource)
                    found.append((("", pool, quota.resource), Decimal(total), [q.name for q in cohort], amount))
        return found

    def full(self, job: Job) -> tuple[str, ...]:
        """The queues whose quota has no room left for the job (none: it may be admitted)."""
        queue = queue_of(job)
        if queue is None:
            return ()
        for (owner, pool, resource), limit, queues, amount in self._limits(queue, job):
            sharing = [owner] if owner else queues  # '' : the cohort's total, used by all its queues
            used = sum((self.used.get((q, pool, resource), Decimal(0)) for q in sharing), Decimal(0))
            if used + amount > limit:
                return tuple(queues)
        return ()

    def take(self, job: Job) -> None:
        queue = queue_of(job)
        if queue is None:
            return
        for key, _, _, amount in self._limits(queue, job):
            if key[0]:
                self.used[key] = self.used.get(key, Decimal(0)) + amount


@dataclass(frozen=True)
class Waiting:
    job: Job
    queues: tuple[str, ...] = ()
    """The queues whose quota has no room for it; none: no room on its pool's nodes."""

    @property
    def for_nodes(self) -> bool:
        return not self.queues


@dataclass(frozen=True)
class Packing:
    """One possible state of a cluster: the jobs that start at once (with each worker's node), in admission order,
    and those that wait."""

    running: tuple[tuple[Job, tuple[int, ...]], ...]
    waiting: tuple[Waiting, ...]


def pack(cluster: Cluster, jobs: tuple[Job, ...]) -> Packing:
    """Admit the cluster's jobs whole in scheduler order; a job that does not fit beside those admitted waits."""
    nodes = {pool.name: _Nodes(pool) for pool in cluster.pools}
    quotas = _Quotas(cluster)
    running: list[tuple[Job, tuple[int, ...]]] = []
    waiting: list[Waiting] = []
    for job in admission_order(jobs):
        full = quotas.full(job)
        placed = None if full else nodes[job.pool.name].place(job)
        if placed is None:
            waiting.append(Waiting(job, full))
        else:
            quotas.take(job)
            running.append((job, placed))
    return Packing(tuple(running), tuple(waiting))
