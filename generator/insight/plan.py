"""`mpigen plan`: per cluster and node pool, what the nodes offer against what the jobs ask, which jobs start
together and which wait, each queue's quota against its jobs' demand, and GPU-hours. Result objects only; the
reports (text, JSON, the picture) are written from them elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from generator.diagnostics import Diagnostic, Location
from generator.insight import capacity
from generator.insight.capacity import Amounts
from generator.load import ProfileFile
from generator.model import Cluster, Fleet, Job, NodePool, Queue, Scheduler

STARTS = "starts"
WAITS = "waits"
NEVER = "never"


@dataclass(frozen=True)
class JobPlan:
    name: str
    location: Location
    """The profile line that sizes the job (`totalGpus`, `workers`), or the reason it can never run."""
    cluster: str
    pool: str
    namespace: str = ""
    queue: str | None = None
    priority: int = 0
    worker_count: int = 0
    gpus_per_worker: int = 0
    slots_per_worker: int = 0
    per_worker: tuple[tuple[str, str], ...] = ()
    nodes_alone: int = 0
    """Nodes its workers take when it has the pool to itself."""
    state: str = STARTS
    waits_for: tuple[str, ...] = ()
    """WAITS: the jobs that started before it on its pool; room for it comes back as they finish."""
    reason: str = ""
    gpu_hours: Decimal | None = None
    gpu_hours_basis: str = ""
    worker_nodes: tuple[int, ...] = ()
    """STARTS: the node (index in its pool) of each worker in this plan's packing."""

    @property
    def ranks(self) -> int:
        return self.worker_count * self.slots_per_worker

    @property
    def gpus(self) -> int:
        return self.worker_count * self.gpus_per_worker


@dataclass(frozen=True)
class PoolPlan:
    name: str
    hardware: str
    nodes: int
    per_node: tuple[tuple[str, str], ...]
    total: tuple[tuple[str, str], ...]
    asked_at_once: tuple[tuple[str, str], ...]
    """What every job of the pool asks together, whether or not they fit at once."""
    jobs: tuple[JobPlan, ...]

    @property
    def all_at_once(self) -> bool:
        return all(job.state == STARTS for job in self.jobs)


@dataclass(frozen=True)
class QueuePlan:
    name: str
    namespaces: tuple[str, ...]
    quota: tuple[tuple[str, str, str | None], ...]
    """(resource, nominal quota, what it may borrow or None), summed over the pools it covers."""
    demand: tuple[tuple[str, str], ...]
    """What all its jobs ask at once, launchers included (Kueue admits them with the workers)."""
    over: tuple[str, ...]
    """Resources its jobs together ask more of than the queue holds with what it may borrow."""
    jobs: tuple[str, ...]


@dataclass(frozen=True)
class ClusterPlan:
    name: str
    path: str
    """The cluster profile's path as given."""
    scheduler: str
    provider: str
    pools: tuple[PoolPlan, ...]
    queues: tuple[QueuePlan, ...]
    notes: tuple[str, ...]
    """What can deadlock, and what the plan leaves out."""


@dataclass(frozen=True)
class FleetPlan:
    clusters: tuple[ClusterPlan, ...]

    @property
    def jobs(self) -> tuple[JobPlan, ...]:
        return tuple(job for cluster in self.clusters for pool in cluster.pools for job in pool.jobs)

    @property
    def never(self) -> tuple[JobPlan, ...]:
        return tuple(job for job in self.jobs if job.state == NEVER)


def plan_fleet(fleet: Fleet, documents: list[ProfileFile],
               unfit: list[tuple[ProfileFile, list[Diagnostic]]] = ()) -> FleetPlan:
    """`documents`: the profiles the fleet came from (for the line of each job); `unfit`: jobs validation found
    can never run, with why."""
    by_source = {document.source: document for document in documents}
    unfit_by_cluster: dict[tuple[str, str], list[JobPlan]] = {}
    for document, problems in unfit:
        job = _unfit_job(document, problems)
        unfit_by_cluster.setdefault((job.cluster, job.pool), []).append(job)
    return FleetPlan(tuple(_cluster_plan(cluster, fleet.jobs_of(cluster), by_source, unfit_by_cluster)
                           for cluster in fleet.clusters))


def _unfit_job(document: ProfileFile, problems: list[Diagnostic]) -> JobPlan:
    first = problems[0]
    reason = "; ".join(f"{p.message}; {p.hint}" if p.hint else p.message for p in problems)
    return JobPlan(name=str(document.data.get("name")), location=first.location,
                   cluster=str(document.data.get("cluster")), pool=str(document.data.get("pool")),
                   namespace=str(document.data.get("namespace", "")), state=NEVER, reason=reason)


def _cluster_plan(cluster: Cluster, jobs: tuple[Job, ...], by_source: dict[str, ProfileFile],
                  unfit: dict[tuple[str, str], list[JobPlan]]) -> ClusterPlan:
    pools = tuple(_pool_plan(cluster, pool, tuple(job for job in jobs if job.pool.name == pool.name), by_source,
                             unfit.get((cluster.name, pool.name), [])) for pool in cluster.pools)
    return ClusterPlan(name=cluster.name, path=by_source[cluster.source].path, scheduler=cluster.scheduling.scheduler.value,
                       provider=cluster.network.provider.value, pools=pools,
                       queues=tuple(_queue_plan(cluster, queue, jobs) for queue in cluster.scheduling.queues),
                       notes=tuple(_notes(cluster, pools)))


def _sum(amounts: list[Amounts]) -> Amounts:
    total: dict[str, Decimal] = {}
    for each in amounts:
        for name, amount in each.items:
            total[name] = total.get(name, Decimal(0)) + amount
    return Amounts(tuple(total.items()))


def _pool_plan(cluster: Cluster, pool: NodePool, jobs: tuple[Job, ...], by_source: dict[str, ProfileFile],
               unfit: list[JobPlan]) -> PoolPlan:
    offer = capacity.node_offer(cluster, pool)
    packing = capacity.pack(cluster, pool, jobs)
    started = tuple(job.name for job, _ in packing.running)
    planned = [_job_plan(job, by_source[job.source], STARTS, worker_nodes=nodes) for job, nodes in packing.running]
    planned += [_job_plan(job, by_source[job.source], WAITS, waits_for=started) for job in packing.waiting]
    order = {job.name: i for i, job in enumerate(capacity.admission_order(jobs))}
    planned.sort(key=lambda plan: order[plan.name])
    total = Amounts(tuple((name, amount * pool.nodes) for name, amount in offer.items if name != capacity.HOST_PORT))
    return PoolPlan(name=pool.name, hardware=pool.hardware.name, nodes=pool.nodes,
                    per_node=tuple(t for t in offer.texts() if t[0] != capacity.HOST_PORT), total=total.texts(),
                    asked_at_once=_sum([capacity.job_demand(job) for job in jobs]).texts(),
                    jobs=tuple(planned) + tuple(sorted(unfit, key=lambda j: j.name)))


def _job_plan(job: Job, document: ProfileFile, state: str, waits_for: tuple[str, ...] = (),
              worker_nodes: tuple[int, ...] = ()) -> JobPlan:
    key = next((k for k in ("totalGpus", "workers") if k in document.data), "name")
    hours, basis = gpu_hours(job)
    return JobPlan(name=job.name, location=document.location(key), cluster=job.cluster.name, pool=job.pool.name,
                   namespace=job.namespace, queue=job.scheduling.queue, priority=capacity.priority_of(job),
                   worker_count=job.worker_count, gpus_per_worker=job.gpus_per_worker,
                   slots_per_worker=job.slots_per_worker, per_worker=capacity.worker_ask(job).texts(),
                   nodes_alone=capacity.nodes_needed(job), state=state, waits_for=waits_for,
                   gpu_hours=hours, gpu_hours_basis=basis, worker_nodes=worker_nodes)


def gpu_hours(job: Job) -> tuple[Decimal | None, str]:
    """GPU-hours of one run: from the job's estimate, else at most its active deadline; None without either."""
    gpus = job.worker_count * job.gpus_per_worker
    if not gpus:
        return None, ""
    if job.estimated_hours is not None:
        return (Decimal(str(job.estimated_hours)) * gpus).quantize(Decimal("0.1")), \
            f"{gpus} GPUs x estimatedHours {job.estimated_hours}"
    deadline = job.run_policy.active_deadline_seconds
    if deadline is not None:
        return (Decimal(deadline) * gpus / 3600).quantize(Decimal("0.1")), \
            f"at most: {gpus} GPUs x activeDeadlineSeconds {deadline}"
    return None, ""


def _queue_plan(cluster: Cluster, queue: Queue, jobs: tuple[Job, ...]) -> QueuePlan:
    mine = tuple(job for job in jobs if job.scheduling.queue == queue.name)
    nominal, borrowable, units = _quota(queue), _borrowable(cluster, queue), {}
    for share in queue.shares:
        units.update((quota.resource, quota.unit) for quota in share.quotas)
    demand = _sum([capacity.job_demand(job, launcher=True) for job in mine])
    over = tuple(name for name, amount in demand.items if name in nominal
                 and amount > nominal[name] + borrowable.get(name, 0))
    return QueuePlan(name=queue.name, namespaces=queue.namespaces,
                     quota=tuple((name, f"{count}{units[name]}", f"{borrowable.get(name, 0)}{units[name]}")
                                 for name, count in nominal.items()),
                     demand=demand.texts(), over=over, jobs=tuple(job.name for job in mine))


def _quota(queue: Queue, pool: str | None = None) -> dict[str, int]:
    """The queue's nominal quota of each resource, over its pools (or of one pool)."""
    total: dict[str, int] = {}
    for share in queue.shares:
        if pool is None or share.pool.name == pool:
            for quota in share.quotas:
                total[quota.resource] = total.get(quota.resource, 0) + quota.count
    return total


def _borrowable(cluster: Cluster, queue: Queue) -> dict[str, int]:
    """What a Kueue queue may borrow beyond its own: per pool, what the other queues of its cohort hold there,
    capped by its own borrowing limit (admission.borrowable_nodes, in resources)."""
    if queue.cohort is None:
        return {}
    total: dict[str, int] = {}
    for share in queue.shares:
        others: dict[str, int] = {}
        for other in cluster.scheduling.queues:
            if other.cohort == queue.cohort and other.name != queue.name:
                for name, count in _quota(other, share.pool.name).items():
                    others[name] = others.get(name, 0) + count
        for quota in share.quotas:
            lendable = others.get(quota.resource, 0)
            limit = quota.borrowing_limit
            total[quota.resource] = total.get(quota.resource, 0) + (lendable if limit is None else min(lendable, limit))
    return total


def _notes(cluster: Cluster, pools: tuple[PoolPlan, ...]) -> list[str]:
    notes = []
    scheduler = cluster.scheduling.scheduler
    for pool in pools:
        waiting = [job.name for job in pool.jobs if job.state == WAITS]
        if not waiting:
            continue
        started = ", ".join(job.name for job in pool.jobs if job.state == STARTS)
        if scheduler is Scheduler.NONE:
            notes.append(f"pool '{pool.name}': {', '.join(waiting)} cannot run beside {started}. Without gang "
                         "scheduling the default scheduler places pods one at a time, so each job can get part of "
                         "its workers and wait forever for the rest, holding the nodes the other needs (deadlock). "
                         "Give the cluster a gang scheduler (`scheduling.scheduler`), or do not sync them at once")
        elif scheduler is Scheduler.KUEUE:
            notes.append(f"pool '{pool.name}': Kueue admits {', '.join(waiting)} once the jobs before it "
                         f"({started}) finish and free the quota; until then it stays suspended, no pod created")
        else:
            notes.append(f"pool '{pool.name}': the gang scheduler starts {', '.join(waiting)} whole once the jobs "
                         f"before it ({started}) free the nodes; until then its pods stay Pending, none running")
    notes.append("launchers are not placed: they have no node selector and ask for little; queues count them")
    return notes
