"""Which nodes a job's pods may run on: node selectors and the tolerations of the pools' taints.

A pod is not scheduled on a node with a `NoSchedule` taint it does not tolerate (and is evicted from one with a
`NoExecute` taint), so every pod placed on a tainted pool carries the tolerations that match its taints exactly.
The workers run on their job's pool. The launcher runs on the cluster's `launcherPool` where it names one, with
that pool's node selector; otherwise anywhere, as mpi-operator leaves it, tolerating the taints of the pools it may
end up on: its job's pool and, under Kueue, every pool of its queue, whose flavor Kueue may admit it on and pin it
to (Kueue adds the flavor's node labels to the pod's selector on admission).
"""

from __future__ import annotations

from mpigen.model import Job, NodePool, Scheduler, Taint


def toleration(taint: Taint) -> dict[str, str]:
    """The toleration that matches exactly this taint: `Equal` to its value, or `Exists` where it has none."""
    if taint.value is None:
        return {"key": taint.key, "operator": "Exists", "effect": taint.effect}
    return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}


def tolerations(pools: tuple[NodePool, ...]) -> list[dict[str, str]]:
    """The tolerations matching every taint of `pools`, each once, in the pools' order."""
    found: list[dict[str, str]] = []
    for pool in pools:
        found += [toleration(taint) for taint in pool.taints if toleration(taint) not in found]
    return found


def launcher_pool(job: Job) -> NodePool | None:
    """The pool the launcher is pinned to (the cluster's `launcherPool`); None: no node selector."""
    return job.cluster.pool(job.cluster.launcher_pool) if job.cluster.launcher_pool is not None else None


def launcher_pools(job: Job) -> tuple[NodePool, ...]:
    """The described pools the launcher may run on: its own pool, or its job's and (Kueue) its queue's."""
    pinned = launcher_pool(job)
    if pinned is not None:
        return (pinned,)
    pools = [job.pool]
    if job.cluster.scheduling.scheduler is Scheduler.KUEUE:
        queue = next((q for q in job.cluster.scheduling.queues if q.name == job.scheduling.queue), None)
        pools += [share.pool for share in (queue.shares if queue else ()) if share.pool not in pools]
    return tuple(pools)


def launcher_placement(job: Job) -> dict[str, object]:
    """The launcher pod spec's `nodeSelector` and `tolerations`, where it has any."""
    spec: dict[str, object] = {}
    pinned = launcher_pool(job)
    if pinned is not None and pinned.node_selector:
        spec["nodeSelector"] = dict(pinned.node_selector)
    found = tolerations(launcher_pools(job))
    if found:
        spec["tolerations"] = found
    return spec


def worker_placement(job: Job) -> dict[str, object]:
    """The worker pod spec's `nodeSelector` (its pool's node labels) and `tolerations` (its pool's taints)."""
    spec: dict[str, object] = {}
    if job.pool.node_selector:
        spec["nodeSelector"] = dict(job.pool.node_selector)
    found = tolerations((job.pool,))
    if found:
        spec["tolerations"] = found
    return spec
