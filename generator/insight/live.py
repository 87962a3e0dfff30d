"""`mpigen plan --context`: how many nodes each pool really has, counted on the exported Nodes rather than taken from
the profile's `nodes`: those the pool's selector picks that take pods now (`LiveNode.state`: not cordoned, ready),
whose taints its pods tolerate, and that offer what its workers ask (generator/inventory/pools.py, as `check
--context` counts them, but for the node's state, which is not the profiles')."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mpigen.inventory import LiveNode, untolerated
from mpigen.inventory.pools import extended_ask, picked, selector_text, short_of
from mpigen.manifests.node_placement import tolerations
from mpigen.model import Cluster, Job, NodePool
from mpigen.support.diagnostics import names_text


@dataclass(frozen=True)
class LivePool:
    """The live nodes that hold a pool's workers, and, where fewer or more than the profile claims, why."""

    nodes: int
    reason: str = ""


def live_pools(cluster: Cluster, jobs: Sequence[Job], nodes: Sequence[LiveNode]) -> dict[str, LivePool]:
    """Each pool of the cluster, by name: its nodes counted on the live ones."""
    return {pool.name: _live_pool(pool, [job for job in jobs if job.pool.name == pool.name], nodes)
            for pool in cluster.pools}


def _live_pool(pool: NodePool, jobs: list[Job], nodes: Sequence[LiveNode]) -> LivePool:
    chosen = picked(dict(pool.node_selector), nodes)
    given = tolerations((pool,))
    down = {node.name: node.state for node in chosen if node.state}
    tainted = [node.name for node in chosen if node.name not in down and untolerated(given, node.placement_taints)]
    ask: dict[str, int] = {}
    for job in jobs:
        for resource, amount in extended_ask(job).items():
            ask[resource] = max(ask.get(resource, 0), amount)
    open_nodes = [node for node in chosen if node.name not in down and node.name not in tainted]
    lacking = {node.name: short_of(node, ask) for node in open_nodes if short_of(node, ask)}
    count = len(open_nodes) - len(lacking)
    if count == pool.nodes:
        return LivePool(count)
    why = [f"its selector ({selector_text(dict(pool.node_selector))}) picks {len(chosen)}"
           + (f": {names_text([n.name for n in chosen])}" if chosen else "")]
    if down:
        why.append(names_text([f"{name} {state}" for name, state in down.items()]))
    if tainted:
        why.append(f"{names_text(tainted)} carry taints the pool does not declare")
    if lacking:
        why.append("; ".join(f"{name} lacks {', '.join(short)}" for name, short in list(lacking.items())[:3]))
    return LivePool(count, "; ".join(why))
