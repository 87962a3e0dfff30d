"""What each node pool offers, what each job asks of it, and which jobs start together: `mpigen plan`'s numbers.

Pure functions over the resolved model. A node offers what `admission.node_offer` counts (the model's
`NodePool.offer`: logical CPUs, memory, GPUs and each rail's devices, or the devices pods claim through DRA), the unit
of every queue's quota. A worker asks for what its container's limits say (its provider's very `pod_network`) and
what it claims. MPI jobs are gang-scheduled wholes: a job starts only once all its workers are placed, so jobs are
admitted whole, in the order a scheduler admits them (priority, then name): first against their queue's quota
(Kueue: the queue's share of the pool plus what its cohort can lend, and the cohort's total; Volcano: the queue's
capability), then onto the nodes, first fit, never more of one job's workers on a node than its layout holds. The
result is one possible state of the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from mpigen.inventory.pools import extended_ask
from mpigen.manifests.node_placement import launcher_pool
from mpigen.model import Cluster, Job, NodePool, Queue, Scheduler, admission, claimed
from mpigen.vocabulary.kubernetes import exact


@dataclass(frozen=True)
class Amounts:
    """Resources by name, in the units of `admission.node_offer` (CPUs, GiB of memory, devices)."""

    items: tuple[tuple[str, Decimal], ...]

    def get(self, resource: str) -> Decimal:
        return dict(self.items).get(resource, Decimal(0))

    def texts(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, admission.amount_text(amount, "Gi" if name == admission.MEMORY else ""))
                     for name, amount in self.items)

    @exact
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
    """What one worker pod asks of its node: its container's CPU, memory, GPUs and rail devices, and under DRA the
    devices it claims, as its pool's offer counts them (`claimed.worker_claims`)."""
    items = list(_cpu_memory(job.resources.cpu, job.resources.memory))
    items += [(resource, Decimal(count)) for resource, count in extended_ask(job).items()]
    if job.devices is not None:
        items += [(resource, Decimal(count)) for resource, count in
                  claimed.worker_claims(job.devices.gpus, job.devices.nics, job.devices.channel).items()]
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


class _Run:
    """Consecutive nodes of a pool whose free resources are the same. A pool starts as one run; a job placed splits
    at most the run its last worker lands in, and neighbours left the same are joined again."""

    __slots__ = ("_fits", "count", "free")

    def __init__(self, count: int, free: dict[str, Decimal],
                 fits: dict[tuple[tuple[tuple[str, Decimal], ...], int], int] | None = None) -> None:
        self.count = count
        self.free = free
        self._fits = {} if fits is None else fits
        """(ask, most wanted) -> `workers_fitting`: jobs of one shape ask it of the same run again and again."""

    def fits(self, ask: tuple[tuple[str, Decimal], ...], most: int) -> int:
        key = (ask, most)
        if key not in self._fits:
            self._fits[key] = workers_fitting(self.free, ask, most)
        return self._fits[key]


def workers_fitting(free: dict[str, Decimal], ask: tuple[tuple[str, Decimal], ...], most: int) -> int:
    """How many workers asking `ask` (amounts of 0 or more) a node with `free` takes one after another, at most
    `most`: the j-th (from 0) fits where each item (name, amount) of the ask fits what is left after j workers,
    free[name] - j * (all the ask holds of name) >= amount, as first fit checks them one worker at a time."""
    per_worker: dict[str, Decimal] = {}
    for name, amount in ask:
        per_worker[name] = per_worker.get(name, Decimal(0)) + amount
    count = most
    for name, amount in ask:
        room = free.get(name, Decimal(0)) - amount
        if room < 0:
            return 0
        taken = per_worker[name]
        if taken > 0 and room < taken * (count - 1):
            count = int(room // taken) + 1
    return max(count, 0)


class _Nodes:
    """The free resources of a pool's nodes while jobs are placed on them, as runs of identical nodes.

    First fit, one worker at a time: each worker goes to the lowest-numbered node with room for it and fewer than
    `workers_per_node` of its job. Within one job a node without room stays so (its free amounts only shrink, its
    count of the job's workers only grows), so the workers fill the nodes in order, each node taking all that fit
    before the next is tried; in a run of identical nodes that is one count. A job costs the runs up to its last
    worker plus its workers, not nodes x workers."""

    def __init__(self, offer: Amounts, nodes: int) -> None:
        self.runs: list[_Run] = [_Run(nodes, dict(offer.items))] if nodes > 0 else []

    @classmethod
    def of(cls, pool: NodePool) -> _Nodes:
        return cls(node_offer(pool), pool.nodes)

    def place(self, job: Job) -> tuple[int, ...] | None:
        """The node of each worker, first fit, at most `workers_per_node` of them a node, taking their resources;
        None (and nothing taken) if one does not fit: a gang starts whole or not at all."""
        return self.place_workers(worker_ask(job).items, job.worker_count, job.workers_per_node)

    @exact
    def place_workers(self, ask: tuple[tuple[str, Decimal], ...], workers: int,
                      per_node: int) -> tuple[int, ...] | None:
        """`place` for `workers` workers asking `ask` each, at most `per_node` of them a node."""
        most = min(per_node, workers)
        nodes: list[int] = []
        used: list[tuple[int, int, int, int]] = []  # (run, nodes taken from its start, workers on each, on the last)
        left, start = workers, 0
        for index, run in enumerate(self.runs):
            if left <= 0:
                break
            each = run.fits(ask, most) if most > 0 else 0
            if each > 0:
                taken = min(run.count, -(-left // each))
                last = min(each, left - (taken - 1) * each)
                for node in range(start, start + taken - 1):
                    nodes += [node] * each
                nodes += [start + taken - 1] * last
                used.append((index, taken, each, last))
                left -= (taken - 1) * each + last
            start += run.count
        if left > 0:
            return None
        self._take(ask, used)
        return tuple(nodes)

    def _take(self, ask: tuple[tuple[str, Decimal], ...], used: list[tuple[int, int, int, int]]) -> None:
        """Split each run workers went to: its first `taken` nodes lose `each` workers' asks (the last of them
        `last` workers'), the rest stay as they were; then join neighbours that are the same."""
        parts: dict[int, list[_Run]] = {}
        for index, taken, each, last in used:
            run = self.runs[index]
            parts[index] = [part for part in (_Run(taken - 1, _less(run.free, ask, each)),
                                              _Run(1, _less(run.free, ask, last)),
                                              _Run(run.count - taken, run.free, run._fits)) if part.count > 0]
        runs: list[_Run] = []
        for index, run in enumerate(self.runs):
            for part in parts.get(index, (run,)):
                if runs and runs[-1].free == part.free:
                    runs[-1] = _Run(runs[-1].count + part.count, runs[-1].free, runs[-1]._fits)
                else:
                    runs.append(part)
        self.runs = runs


def _less(free: dict[str, Decimal], ask: tuple[tuple[str, Decimal], ...], workers: int) -> dict[str, Decimal]:
    """What a node has left once `workers` workers asking `ask` are on it."""
    left = dict(free)
    for name, amount in ask:
        left[name] = left.get(name, Decimal(0)) - amount * workers
    return left


def nodes_needed(job: Job, pool: NodePool | None = None) -> int:
    """Nodes the job's workers take when it has the pool (or `pool`: its live nodes) to itself; 0 where they never
    fit."""
    placed = _Nodes.of(pool or job.pool).place(job)
    return len(set(placed)) if placed else 0


def queue_of(job: Job) -> Queue | None:
    """The declared queue the job goes to (None: no queues, or Volcano's own `default`)."""
    return next((q for q in job.cluster.scheduling.queues if q.name == job.scheduling.queue), None)


class _Quotas:
    """What each queue, and each cohort, has admitted so far, against what it can ever hold. A cohort's members, its
    total quota and what its queues have admitted are kept, not summed anew for every job: a job costs its own
    quotas, not the cluster's queues."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.queues = {queue.name: queue for queue in cluster.scheduling.queues}
        members: dict[str, list[Queue]] = {}
        for queue in cluster.scheduling.queues:
            if queue.cohort is not None:
                members.setdefault(queue.cohort, []).append(queue)
        self.cohorts = {cohort: tuple(queues) for cohort, queues in members.items()}
        self.cohort_names = {cohort: tuple(queue.name for queue in queues) for cohort, queues in members.items()}
        self.totals: dict[tuple[str, str, str], Decimal] = {}
        """(cohort, pool, resource) -> the quota of all its queues there."""
        self.used: dict[tuple[str, str, str], Decimal] = {}
        """(queue, pool or '' for a cluster-wide Volcano capability, resource) -> admitted."""
        self.cohort_used: dict[tuple[str, str, str], Decimal] = {}
        """(cohort, pool, resource) -> admitted by all its queues."""

    def _cohort_total(self, cohort: str, pool: str, resource: str) -> Decimal:
        key = (cohort, pool, resource)
        if key not in self.totals:
            self.totals[key] = Decimal(sum(q.count for other in self.cohorts[cohort] for s in other.shares
                                           if s.pool.name == pool for q in s.quotas if q.resource == resource))
        return self.totals[key]

    def _limits(self, queue: Queue, job: Job) -> list[tuple[tuple[str, str, str], Decimal, tuple[str, ...], Decimal]]:
        """(use key, limit, queues sharing the limit, what the job asks of it) for each resource the job asks of its
        queue; the key of a cohort's total is ('', pool, resource). Under Kueue a launcher pinned to the cluster's
        `launcherPool` counts against that pool's share."""
        found: list[tuple[tuple[str, str, str], Decimal, tuple[str, ...], Decimal]] = []
        if self.cluster.scheduling.scheduler is Scheduler.VOLCANO:
            asked = job_demand(job, launcher=True)
            capability = queue.capability()
            for name, amount in asked.items:
                if name in capability:
                    found.append(((queue.name, "", name), Decimal(capability[name][0]), (queue.name,), amount))
            return found
        pinned = launcher_pool(job)
        if pinned is None or pinned.name == job.pool.name:
            asks = [(job.pool.name, job_demand(job, launcher=True))]
        else:
            asks = [(job.pool.name, job_demand(job)), (pinned.name, launcher_ask(job))]
        for pool, asked in asks:
            share = next((s for s in queue.shares if s.pool.name == pool), None)
            for quota in share.quotas if share is not None else ():
                amount = asked.get(quota.resource)
                if not amount:
                    continue
                found.append(((queue.name, pool, quota.resource), Decimal(quota.reach), (queue.name,), amount))
                if queue.cohort is not None:
                    found.append((("", pool, quota.resource), self._cohort_total(queue.cohort, pool, quota.resource),
                                  self.cohort_names[queue.cohort], amount))
        return found

    def _used(self, queue: Queue, key: tuple[str, str, str]) -> tuple[dict[tuple[str, str, str], Decimal],
                                                                      tuple[str, str, str]]:
        """Where what is admitted against `key` is kept: the queue's own, or its cohort's (key '')."""
        owner, pool, resource = key
        return (self.used, key) if owner else (self.cohort_used, (str(queue.cohort), pool, resource))

    def full(self, job: Job) -> tuple[str, ...]:
        """The queues whose quota has no room left for the job (none: it may be admitted)."""
        queue = self.queues.get(job.scheduling.queue or "")
        if queue is None:
            return ()
        for key, limit, queues, amount in self._limits(queue, job):
            used, at = self._used(queue, key)
            if used.get(at, Decimal(0)) + amount > limit:
                return queues
        return ()

    def take(self, job: Job) -> None:
        queue = self.queues.get(job.scheduling.queue or "")
        if queue is None:
            return
        for key, _, _, amount in self._limits(queue, job):
            used, at = self._used(queue, key)
            used[at] = used.get(at, Decimal(0)) + amount


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


@exact
def pack(cluster: Cluster, jobs: tuple[Job, ...]) -> Packing:
    """Admit the cluster's jobs whole in scheduler order; a job that does not fit beside those admitted waits."""
    nodes = {pool.name: _Nodes.of(pool) for pool in cluster.pools}
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
