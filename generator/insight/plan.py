"""`mpigen plan`: per cluster and node pool, what the nodes offer against what the jobs ask, which jobs start
together and which wait (for nodes, or for their queue's quota), each queue's quota against its jobs' demand, and
GPU-hours. Result objects only; the reports (text, JSON, the picture) are written from them elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from mpigen.insight import bounds, capacity
from mpigen.insight.bounds import names_text
from mpigen.insight.job_measures import gpu_hours, topology_fit_text
from mpigen.insight.live import LivePool, live_pools
from mpigen.inventory import LiveNode
from mpigen.inventory.pools import may_be_of
from mpigen.load import ProfileFile
from mpigen.model import Cluster, Fleet, Job, NodePool, Queue, Scheduler, Selection, admission, kai_quota
from mpigen.model.devices import WorkerDevices
from mpigen.providers import PROVIDERS
from mpigen.support.diagnostics import Diagnostic, Location

STARTS = "starts"
WAITS = "waits"
NEVER = "never"


@dataclass(frozen=True)
class JobPlan:
    name: str
    location: Location
    """The profile line that sizes the job (`totalGpus`, `workers`, else its `name`), or where validation says it can
    never run."""
    cluster: str
    pool: str
    namespace: str = ""
    queue: str | None = None
    priority: int = 0
    worker_count: int = 0
    gpus_per_worker: int = 0
    slots_per_worker: int = 0
    ranks: int = 0
    gpus: int = 0
    per_worker: tuple[tuple[str, str], ...] = ()
    nodes_alone: int = 0
    """Nodes its workers take when it has the pool to itself."""
    state: str = STARTS
    waits_for: tuple[str, ...] = ()
    """WAITS: the jobs admitted before it that hold what it needs (nodes of its pool, or its queue's quota), the
    first `bounds.NAMES_SHOWN` of them in admission order."""
    waits_for_omitted: int = 0
    """WAITS: how many more such jobs there are, not named in `waits_for`."""
    reason: str = ""
    """WAITS: what it waits for; NEVER: why it can never run, and what to do."""
    gpu_hours: Decimal | None = None
    gpu_hours_bound: bool = False
    """True: `gpu_hours` is an upper bound (from the active deadline), not an estimate."""
    gpu_hours_basis: str = ""
    worker_nodes: tuple[int, ...] = ()
    """STARTS: the node (index in its pool) of each worker in this plan's placement."""
    topology: str = ""
    """kueue, with a topology level: the nodes it needs against one domain of it (model/domains.py)."""
    devices: WorkerDevices | None = None
    """Under DRA: what each worker claims (its GPU-NIC pairs, its ComputeDomain's channel); None: device plugins."""


@dataclass(frozen=True)
class PoolPlan:
    name: str
    hardware: str
    nodes: int
    per_node: tuple[tuple[str, str], ...]
    asked_at_once: tuple[tuple[str, str], ...]
    """What every job of the pool that can run asks together, whether or not they fit at once."""
    jobs: tuple[JobPlan, ...]
    """In the order the scheduler admits them, then those that can never run."""
    live_nodes: int | None = None
    """`plan --context`: the live nodes that hold the pool's workers (the plan is counted on them); None: not given."""
    live_reason: str = ""
    """Where `live_nodes` is not `nodes`: why."""

    @property
    def all_at_once(self) -> bool:
        return all(job.state == STARTS for job in self.jobs)


@dataclass(frozen=True)
class QuotaLine:
    pool: str
    """The pool of a Kueue flavor; '' for a Volcano capability, which counts every pool."""
    resource: str
    quota: str
    may_borrow: str
    """What the queue may use beyond its own (Kueue: what its cohort holds there, within its limit)."""
    asked: str
    """What all the queue's jobs ask there at once, launchers included."""
    over: bool


@dataclass(frozen=True)
class QueuePlan:
    name: str
    namespaces: tuple[str, ...]
    lines: tuple[QuotaLine, ...]
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
    """What can deadlock or clash, and what the plan leaves out."""


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
               unfit: list[tuple[ProfileFile, list[Diagnostic]]] | None = None,
               nodes: Sequence[LiveNode] | None = None) -> FleetPlan:
    """`documents`: the profiles the fleet came from (for each job's line and each cluster's path); `unfit`: jobs
    validation found can never run, with why; `nodes`: the live nodes (`--context`), counted instead of the pools'
    `nodes` (insight/live.py)."""
    by_source = {document.source: document for document in documents}
    unfit_by_pool: dict[tuple[str, str], list[JobPlan]] = {}
    for document, problems in unfit or []:
        job = _unfit_job(document, problems)
        unfit_by_pool.setdefault((job.cluster, job.pool), []).append(job)
    several = len(fleet.clusters) > 1
    return FleetPlan(tuple(_cluster_plan(cluster, fleet.jobs_of(cluster), by_source, unfit_by_pool,
                                         None if nodes is None or (several and not may_be_of(cluster, nodes))
                                         else live_pools(cluster, fleet.jobs_of(cluster), nodes))
                           for cluster in fleet.clusters))


def _unfit_job(document: ProfileFile, problems: list[Diagnostic]) -> JobPlan:
    reason = "; ".join(f"{p.message}; {p.hint}" if p.hint else p.message for p in problems)
    return JobPlan(name=str(document.data.get("name")), location=problems[0].location,
                   cluster=str(document.data.get("cluster")), pool=str(document.data.get("pool")),
                   namespace=str(document.data.get("namespace", "")), state=NEVER, reason=reason)


def _cluster_plan(cluster: Cluster, jobs: tuple[Job, ...], by_source: dict[str, ProfileFile],
                  unfit: dict[tuple[str, str], list[JobPlan]], live: dict[str, LivePool] | None = None) -> ClusterPlan:
    counted = cluster if live is None else replace(
        cluster, pools=tuple(replace(pool, nodes=live[pool.name].nodes) for pool in cluster.pools))
    packing = capacity.pack(counted, jobs)
    order = capacity.admission_order(jobs)
    running = {job.name: nodes for job, nodes in packing.running}
    waiting = {w.job.name: w for w in packing.waiting}
    holders = _holders(order, running, waiting)
    planned: dict[str, JobPlan] = {}
    for job in jobs:
        document = by_source[job.source]
        alone = capacity.nodes_needed(job)
        if job.name in running:
            planned[job.name] = _job_plan(job, document, alone, STARTS, worker_nodes=running[job.name])
            continue
        if not alone:
            planned[job.name] = _job_plan(job, document, alone, NEVER, reason=(
                f"its {job.worker_count} workers do not fit pool '{job.pool.name}' even with every node free "
                f"(each asks {amounts_text(capacity.worker_ask(job).texts())}; a node offers "
                f"{amounts_text(capacity.node_offer(job.pool).texts())})"))
            continue
        if live is not None and not capacity.nodes_needed(job, counted.pool(job.pool.name)):
            held = live[job.pool.name]
            planned[job.name] = _job_plan(job, document, alone, NEVER, reason=(
                f"its {job.worker_count} workers fit the {job.pool.nodes} nodes pool '{job.pool.name}' claims, but "
                f"not the {held.nodes} live node(s) that hold them ({held.reason}); nothing starts it until the nodes "
                "are there"))
            continue
        queues = waiting[job.name].queues
        if not queues:
            reason = f"nodes of pool '{job.pool.name}'"
        else:
            shown = [repr(queue) for queue in queues[:bounds.NAMES_SHOWN]]
            reason = (f"quota of queue '{queues[0]}'" if len(queues) == 1 else
                      f"quota its cohort shares (queues {names_text(shown, len(queues) - len(shown))})")
        names, more = holders[job.name]
        planned[job.name] = _job_plan(job, document, alone, WAITS, waits_for=names, waits_for_omitted=more,
                                      reason=reason)
    in_order: dict[str, list[JobPlan]] = {}
    for job in order:
        in_order.setdefault(job.pool.name, []).append(planned[job.name])
    can_run: dict[str, list[Job]] = {}  # by pool
    by_queue: dict[str | None, list[Job]] = {}
    for job in jobs:
        if planned[job.name].state != NEVER:
            can_run.setdefault(job.pool.name, []).append(job)
            by_queue.setdefault(job.scheduling.queue, []).append(job)
    pools = tuple(_pool_plan(pool, in_order.get(pool.name, []), can_run.get(pool.name, []),
                             unfit.get((cluster.name, pool.name), []), None if live is None else live[pool.name])
                  for pool in cluster.pools)
    return ClusterPlan(name=cluster.name, path=by_source[cluster.source].path,
                       scheduler=cluster.scheduling.scheduler.value, provider=cluster.network.provider.value,
                       pools=pools, queues=tuple(_queue_plan(cluster, queue, by_queue.get(queue.name, []))
                                                 for queue in cluster.scheduling.queues),
                       notes=tuple(_notes(cluster, pools, jobs)))


def _holders(order: list[Job], running: dict[str, tuple[int, ...]],
             waiting: dict[str, capacity.Waiting]) -> dict[str, tuple[tuple[str, ...], int]]:
    """For each waiting job, the jobs admitted before it that hold what it waits for (its pool's nodes, or the
    quota of its queues: its own, or all of its cohort's): the first `bounds.NAMES_SHOWN` of them in admission
    order, and how many more. One pass in admission order, the running jobs kept per pool and per set of queues a
    job waits for (a cohort's is found once), so that a thousand waiting jobs do not each look through the jobs,
    or the queues, before them."""
    shown = bounds.NAMES_SHOWN
    by_pool: dict[str, list[str]] = {}
    admitted: list[Job] = []
    by_queues: dict[tuple[str, ...], list[str]] = {}
    queue_sets: dict[str | None, list[tuple[str, ...]]] = {}  # queue -> the sets of queues in `by_queues` holding it
    found: dict[str, tuple[tuple[str, ...], int]] = {}
    for job in order:
        if job.name in running:
            admitted.append(job)
            by_pool.setdefault(job.pool.name, []).append(job.name)
            for queues in queue_sets.get(job.scheduling.queue, ()):
                by_queues[queues].append(job.name)
            continue
        if job.name not in waiting:
            continue
        queues = waiting[job.name].queues
        if not queues:
            held = by_pool.get(job.pool.name, [])
        else:
            if queues not in by_queues:
                among = set(queues)
                by_queues[queues] = [before.name for before in admitted if before.scheduling.queue in among]
                for queue in among:
                    queue_sets.setdefault(queue, []).append(queues)
            held = by_queues[queues]
        found[job.name] = (tuple(held[:shown]), max(len(held) - shown, 0))
    return found


def amounts_text(items: tuple[tuple[str, str], ...]) -> str:
    """`80 cpu, 512Gi memory, ...` (reports write amounts so too)."""
    return ", ".join(f"{amount} {name}" for name, amount in items) or "nothing"


def _pool_plan(pool: NodePool, planned: list[JobPlan], jobs: list[Job], unfit: list[JobPlan],
               live: LivePool | None) -> PoolPlan:
    asked = capacity.NOTHING
    for job in jobs:
        asked = asked.plus(capacity.job_demand(job))
    return PoolPlan(name=pool.name, hardware=pool.hardware.name, nodes=pool.nodes,
                    per_node=capacity.node_offer(pool).texts(), asked_at_once=asked.texts(),
                    jobs=tuple(planned) + tuple(sorted(unfit, key=lambda j: j.name)),
                    live_nodes=None if live is None else live.nodes, live_reason="" if live is None else live.reason)


def _job_plan(job: Job, document: ProfileFile, alone: int, state: str, waits_for: tuple[str, ...] = (),
              waits_for_omitted: int = 0, worker_nodes: tuple[int, ...] = (), reason: str = "") -> JobPlan:
    key = next((k for k in ("totalGpus", "workers") if k in document.data), "name")
    hours, bound, basis = gpu_hours(job)
    return JobPlan(name=job.name, location=document.location(key), cluster=job.cluster.name, pool=job.pool.name,
                   namespace=job.namespace, queue=job.scheduling.queue, priority=capacity.priority_of(job),
                   worker_count=job.worker_count, gpus_per_worker=job.gpus_per_worker,
                   slots_per_worker=job.slots_per_worker, ranks=job.worker_count * job.slots_per_worker,
                   gpus=job.worker_count * job.gpus_per_worker, per_worker=capacity.worker_ask(job).texts(),
                   nodes_alone=alone, state=state, waits_for=waits_for, waits_for_omitted=waits_for_omitted,
                   reason=reason, gpu_hours=hours, gpu_hours_bound=bound, gpu_hours_basis=basis,
                   worker_nodes=worker_nodes, topology=topology_fit_text(job), devices=job.devices)


KAI_UNITS = {"cpu": "m", "memory": "MB", "gpu": ""}
"""How `plan` writes a KAI Queue's amounts: millicores, megabytes, GPUs."""


def _kai_queue_lines(queue: Queue, mine: list[Job]) -> list[QuotaLine]:
    """kai: one cluster-wide line per resource, in KAI's units: the quota, what the queue may use over it (up to its
    limit, or unlimited), and what its jobs ask at once; `over` where they ask beyond the quota, which KAI runs only
    while other queues leave room, and reclaims when they need it back."""
    asked: dict[str, Decimal] = {}
    for job in mine:
        gpu = job.pool.hardware.gpu.resource if job.pool.hardware.gpu else None
        demand = capacity.job_demand(job, launcher=True)
        offered = {resource: demand.get(resource) for resource in ("cpu", "memory", *((gpu,) if gpu else ()))}
        asked = admission.added(asked, kai_quota.demand(offered, gpu))
    lines = []
    for entry in queue.kai:
        unit = KAI_UNITS[entry.resource]
        beyond = _text(entry.limit - entry.quota, unit) if entry.limited else "unlimited"
        amount = asked.get(entry.resource, Decimal(0))
        lines.append(QuotaLine("", entry.resource, _text(entry.quota, unit), beyond, _text(amount, unit),
                               amount > entry.quota))
    return lines


def _queue_plan(cluster: Cluster, queue: Queue, mine: list[Job]) -> QueuePlan:
    """`mine`: the queue's jobs that can run."""
    if cluster.scheduling.scheduler is Scheduler.KAI:
        return QueuePlan(name=queue.name, namespaces=queue.namespaces, lines=tuple(_kai_queue_lines(queue, mine)),
                         jobs=tuple(job.name for job in mine))
    volcano = cluster.scheduling.scheduler is Scheduler.VOLCANO
    lines = []
    for share in queue.shares if not volcano else ():
        asked = capacity.NOTHING
        for job in mine:
            if job.pool.name == share.pool.name:
                asked = asked.plus(capacity.job_demand(job, launcher=True))
        for quota in share.quotas:
            lines.append(QuotaLine(share.pool.name, quota.resource, _text(quota.count, quota.unit),
                                   _text(quota.reach - quota.count, quota.unit),
                                   _text(asked.get(quota.resource), quota.unit), asked.get(quota.resource) > quota.reach))
    if volcano:
        asked = capacity.NOTHING
        for job in mine:
            asked = asked.plus(capacity.job_demand(job, launcher=True))
        for resource, (count, unit) in queue.capability().items():
            lines.append(QuotaLine("", resource, _text(count, unit), _text(0, unit),
                                   _text(asked.get(resource), unit), asked.get(resource) > count))
    return QueuePlan(name=queue.name, namespaces=queue.namespaces, lines=tuple(lines),
                     jobs=tuple(job.name for job in mine))


def _text(amount: Decimal | int, unit: str) -> str:
    return admission.amount_text(Decimal(amount), unit)


def _notes(cluster: Cluster, pools: tuple[PoolPlan, ...], jobs: tuple[Job, ...]) -> list[str]:
    notes = []
    scheduler = cluster.scheduling.scheduler
    for pool in pools:
        waiting = [job.name for job in pool.jobs if job.state == WAITS]
        started = [job.name for job in pool.jobs if job.state == STARTS]
        if waiting and scheduler is Scheduler.NONE:
            notes.append(f"pool '{pool.name}': {names_text(waiting)} cannot run beside {names_text(started)}. Without "
                         "gang scheduling the default scheduler places pods one at a time, so each job can get part "
                         "of its workers and wait forever for the rest, holding the nodes the other needs "
                         "(deadlock). Give the cluster a gang scheduler (`scheduling.scheduler`), or do not sync "
                         "them at once")
        elif waiting and scheduler is Scheduler.KUEUE:
            notes.append(f"pool '{pool.name}': Kueue keeps {names_text(waiting)} suspended (no pod created) until "
                         "the jobs admitted before it finish and free the quota or the nodes")
        elif waiting and scheduler is Scheduler.KAI:
            notes.append(f"pool '{pool.name}': KAI starts {names_text(waiting)} whole (its PodGroup) once the jobs "
                         "before it free the nodes, or reclaims them from a queue running over its quota; until then "
                         "its pods stay Pending, none running")
        elif waiting:
            notes.append(f"pool '{pool.name}': the gang scheduler starts {names_text(waiting)} whole once the jobs "
                         "before it free the nodes; until then its pods stay Pending, none running")
        if PROVIDERS[cluster.network.provider].host_network and len(started) > 1:
            notes.append(f"pool '{pool.name}': {names_text(started)} all run on the nodes' network, and the charts keep "
                         "one worker of a job a node but nothing keeps workers of two jobs apart: on a node that "
                         f"gets two, the second sshd cannot bind port {cluster.network.ssh_port}")
    for job in jobs:
        gang = admission.min_available_limit(job.worker_count, job.launcher_creation_policy)
        if (scheduler.gangs_through_operator or scheduler is Scheduler.KAI) and job.scheduling.min_available is not None \
                and job.scheduling.min_available < gang:
            notes.append(f"{job.name}: minAvailable {job.scheduling.min_available} is less than its {gang} pods, so "
                         "the gang scheduler may start part of it, which then waits for the rest holding its nodes")
    notes.append("launchers are not placed on nodes (1 CPU and 1Gi each unless a job says otherwise); queues "
                 "count them")
    return notes


def narrowed(plan: FleetPlan, selection: Selection, pools: frozenset[str] = frozenset()) -> FleetPlan:
    """The plan of the chosen clusters (`plan --cluster`); with jobs chosen (`--job`), of the pools they run in,
    each pool whole: who starts and who waits there depends on every job of the pool; with `pools` (`--pool`),
    of those pools only."""
    clusters = []
    for cluster in plan.clusters:
        if not selection.has_cluster(cluster.name):
            continue
        kept = tuple(pool for pool in cluster.pools if (not pools or pool.name in pools) and (
            selection.whole_clusters or any(selection.has_job(job.name, cluster.name) for job in pool.jobs)))
        if kept:
            clusters.append(replace(cluster, pools=kept))
    return FleetPlan(tuple(clusters))
