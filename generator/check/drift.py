"""`check --context` with live Nodes: the profile facts a compiled chart was made from, judged against the nodes of its
cluster. Each pool's selector picks at least the nodes the pool claims; those nodes have the GPU product and count
the hardware says, carry no taint the pool does not declare, and advertise each rail's resource; and the workers
of each job fit them in the amounts they ask.

One root cause, one finding: a finding points at the profile fact that is not true (the pool's `nodes`, a
`nodeLabels` entry, the hardware's `gpu.model` or `gpu.count`, the pool's `taints`, a rail's `resourceName`), and
what else it explains is not reported again: the findings of one profile line are one, naming every node and job
it affects, and a pool that is found wrong is not judged again through its jobs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from mpigen.check.chart_profiles import ChartProfiles
from mpigen.check.rules.reading import path_of
from mpigen.inventory import LiveNode, untolerated
from mpigen.inventory.pools import extended_ask, keeping_out, picked, selector_text, workers_held
from mpigen.load import ProfileFile
from mpigen.manifests.node_placement import tolerations
from mpigen.model import Cluster, Job, NodePool, Taint, stated
from mpigen.objects import chartfiles
from mpigen.readback.findings import Finding
from mpigen.support.diagnostics import Location, names_text
from mpigen.vocabulary.gpu_feature_discovery import GPU_COUNT_LABEL, GPU_PRODUCT_LABEL, MIG_CONFIG_LABEL, MIG_DISABLED

RULE_DRIFT = "drift"


@dataclass
class _Found:
    location: Location
    path: str
    message: str
    nodes: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)


class DriftFindings:
    """Findings kept by the profile line they point at: a second finding of one line only adds its nodes and jobs."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, int, int], _Found] = {}
        self.added = 0
        """Findings added, merged or not: whether a judge found anything."""
        self.resources: set[tuple[str, str]] = set()
        """(cluster, resource) of the rails found not advertised: a NAD needing one is the same root cause."""

    def add(self, location: Location, keys: Sequence[str | int], message: str, nodes: Iterable[LiveNode] = (),
            jobs: Iterable[str] = ()) -> None:
        self.added += 1
        found = self._found.setdefault((location.path, location.line, location.column),
                                       _Found(location, path_of(keys), message))
        found.nodes = list(dict.fromkeys([*found.nodes, *(node.name for node in nodes)]))  # linear in a big pool
        found.jobs = list(dict.fromkeys([*found.jobs, *jobs]))

    def findings(self) -> list[Finding]:
        return [Finding(found.location.path, names_text([f"Node/{name}" for name in found.nodes]), found.path,
                        found.message + (f"; jobs affected: {names_text(found.jobs)}" if found.jobs else ""),
                        RULE_DRIFT, line=found.location.line, column=found.location.column)
                for found in self._found.values()]


def judge_fleet(profiles: ChartProfiles, nodes_of: dict[str, list[LiveNode]], found: DriftFindings) -> None:
    """The pools of the judged charts (an infra chart: every pool of its cluster; a job chart: its job's) against the
    nodes of their cluster (`nodes_of`, by cluster name; a cluster none of whose nodes were given is not judged)."""
    judged_pools: dict[str, set[str] | None] = {}
    judged_jobs: set[str] = set()
    for chart in profiles.charts:
        named = chart.annotations.get(chartfiles.CLUSTER, "")
        if chart.is_job_chart:
            judged_jobs.add(chart.annotations[chartfiles.SOURCE])
            pools = judged_pools.setdefault(named, set())
            if pools is not None:
                pools.add(chart.annotations.get(chartfiles.POOL, ""))
        else:
            judged_pools[named] = None
    for cluster in profiles.fleet.clusters:
        if cluster.name not in judged_pools or cluster.name not in nodes_of:
            continue
        jobs = [job for job in profiles.fleet.jobs_of(cluster) if job.source in judged_jobs]
        _PoolJudge(profiles, cluster, nodes_of[cluster.name], found).judge(judged_pools[cluster.name], jobs)


class _PoolJudge:
    """One cluster's pools against its live nodes; `picks`: the nodes each pool's selector picks."""

    def __init__(self, profiles: ChartProfiles, cluster: Cluster, nodes: list[LiveNode], found: DriftFindings) -> None:
        self.profiles = profiles
        self.cluster = cluster
        self.document = profiles.document("Cluster", cluster.name)
        self.nodes = nodes
        self.found = found
        self.picks = {pool.name: picked(dict(pool.node_selector), nodes) for pool in cluster.pools}

    def judge(self, pools: set[str] | None, jobs: list[Job]) -> None:
        """`pools`: the names of the pools judged (None: every pool)."""
        for index, pool in enumerate(self.cluster.pools):
            if pools is not None and pool.name not in pools:
                continue
            users = [job.name for job in self.cluster_jobs() if job.pool.name == pool.name]
            before = self.found.added
            self._nodes(index, pool, users)
            chosen = self.picks[pool.name]
            if chosen:
                self._gpus(pool, chosen, users)
                self._taints(index, pool, chosen, users)
                self._rails(pool, chosen, users)
            if self.found.added == before:
                for job in jobs:
                    if job.pool.name == pool.name:
                        self._fit(index, job, chosen)

    def cluster_jobs(self) -> tuple[Job, ...]:
        return self.profiles.fleet.jobs_of(self.cluster)

    def _pool_keys(self, index: int, *keys: str | int) -> tuple[str | int, ...]:
        return ("nodePools", index, *keys)

    def _hardware(self, pool: NodePool) -> ProfileFile:
        """The pool's hardware profile (a built-in one with its `extends` applied: it points where a fact was written)."""
        return self.profiles.document("Hardware", pool.hardware.name)

    def _nodes(self, index: int, pool: NodePool, users: list[str]) -> None:
        """The selector picks fewer nodes than the pool claims: one label keeps them out (a missing label, or
        another GPU product), or the nodes are not there."""
        chosen = self.picks[pool.name]
        if len(chosen) >= pool.nodes:
            return
        selector = dict(pool.node_selector)
        others = {node.name for name, taken in self.picks.items() if name != pool.name for node in taken}
        candidates = [node for node in self.nodes if node.name not in others]
        label = keeping_out(selector, candidates)
        picks = f"its selector ({selector_text(selector)}) picks {len(chosen)} of the {pool.nodes} nodes it claims"
        if label is None:
            keys = self._pool_keys(index, "nodes")
            self.found.add(self.document.location(*keys), keys, (
                f"pool '{pool.name}' claims {pool.nodes} nodes, but {picks}"
                + (f" ({names_text([node.name for node in chosen])})" if chosen else "")
                + "; set `nodes` to the nodes there are, or give the missing nodes the pool's labels"), chosen, users)
            return
        key, value = label
        near = [node for node in candidates if node.labels.get(key) != value
                and all(node.labels.get(k) == v for k, v in selector.items() if k != key)]
        unlabelled = [node for node in near if key not in node.labels]
        lacking = unlabelled or near
        gpu = pool.hardware.gpu
        if key == GPU_PRODUCT_LABEL and gpu is not None and gpu.model == value and lacking and not unlabelled:
            lacking = self._sliced(pool, lacking, users)
            if not lacking:
                return
            products = sorted({node.labels[key] for node in lacking})
            self._gpu_model(pool, f"hardware '{pool.hardware.name}' says its GPU is {value}, but the nodes report "
                            f"{', '.join(products)} ({key}), so the selector of pool '{pool.name}' "
                            f"({selector_text(selector)}) picks {len(chosen)} of its {pool.nodes} nodes", lacking, users)
            return
        document, keys = ((self.document, self._pool_keys(index, "nodeLabels", key))
                          if key in dict(pool.node_labels) else
                          (self._hardware(pool), ("nodeLabels", key)))
        carried = (f"nodes {names_text([node.name for node in lacking])} carry every other label of it but "
                   + (f"not {key}" if unlabelled else f"{key}={', '.join(sorted({n.labels[key] for n in lacking}))}")
                   if lacking else "no node carries it")
        self.found.add(document.location(*keys), keys, (
            f"pool '{pool.name}' selects nodes by {key}={value}: {carried}, so {picks}; label the nodes, or select "
            "them by the labels they carry"), lacking, users)

    def _gpu_model(self, pool: NodePool, message: str, nodes: Sequence[LiveNode], users: list[str]) -> None:
        keys = ("gpu", "model")
        self.found.add(self._hardware(pool).location(*keys), keys,
                       f"{message}; set `gpu.model` (and the nodeLabels that select it) to what the nodes report",
                       nodes, users)

    def _sliced(self, pool: NodePool, nodes: Sequence[LiveNode], users: list[str]) -> list[LiveNode]:
        """Nodes whose GPUs are cut up (MIG, sharing) are one finding at the hardware's `gpu.model`, whatever their
        product label and count say: they offer slices, and the fix is on the nodes (or a pool of their own), not
        another model name or count. The other nodes are returned."""
        sliced = [node for node in nodes if node.gpus_partitioned]
        if sliced:
            gpu, keys = stated(pool.hardware.gpu), ("gpu", "model")
            how = ", ".join(sorted({node.gpus_partitioned for node in sliced}))
            self.found.add(self._hardware(pool).location(*keys), keys, (
                f"hardware '{pool.hardware.name}' says its nodes have {gpu.count} whole {gpu.model} GPUs, but the GPUs "
                f"of nodes of pool '{pool.name}' are partitioned ({how}): a worker asking {gpu.resource} gets slices or "
                f"stays Pending; turn MIG ({MIG_CONFIG_LABEL}={MIG_DISABLED}) and GPU sharing off on the pool's nodes, "
                "or give the partitioned nodes a pool and hardware of their own"), sliced, users)
        return [node for node in nodes if not node.gpus_partitioned]

    def _unadvertised(self, pool: NodePool, nodes: list[LiveNode], users: list[str]) -> list[LiveNode]:
        """Nodes that advertise no GPU under the hardware's resource name, and that GFD does not count, run no GPU
        device plugin of that name: one finding at `gpu.resource`, not a count of 0 to write. The others are
        returned."""
        gpu = stated(pool.hardware.gpu)
        bare = [node for node in nodes if node.offers(gpu.resource) is None and GPU_COUNT_LABEL not in node.labels]
        if bare:
            keys = ("gpu", "resource")
            offered = sorted({name for node in bare for name in node.allocatable if "gpu" in name.lower()})
            self.found.add(self._hardware(pool).location(*keys), keys, (
                f"hardware '{pool.hardware.name}' says its GPUs are advertised as {gpu.resource}, which nodes of pool "
                f"'{pool.name}' do not advertise" + (f" (they advertise {', '.join(offered)})" if offered else "")
                + "; set `gpu.resource` to the GPU device plugin's resource, or run it on those nodes"), bare, users)
        return [node for node in nodes if node.offers(gpu.resource) is not None or GPU_COUNT_LABEL in node.labels]

    def _gpus(self, pool: NodePool, chosen: tuple[LiveNode, ...], users: list[str]) -> None:
        """GPU product (GFD's label) and count (GFD's label, and the GPUs the node advertises) as the hardware says."""
        gpu = pool.hardware.gpu
        if gpu is None:
            return
        other = [node for node in chosen if node.labels.get(GPU_PRODUCT_LABEL, gpu.model) != gpu.model]
        counted = [node for node in chosen if node.labels.get(GPU_COUNT_LABEL, str(gpu.count)) != str(gpu.count)
                   or node.offers(gpu.resource) != gpu.count]
        differ = {node.name for node in (*other, *counted)}
        whole = {node.name for node in self._unadvertised(
            pool, self._sliced(pool, [node for node in chosen if node.name in differ], users), users)}
        other, counted = [node for node in other if node.name in whole], [node for node in counted if node.name in whole]
        if other:
            products = sorted({node.labels[GPU_PRODUCT_LABEL] for node in other})
            self._gpu_model(pool, f"hardware '{pool.hardware.name}' says its GPU is {gpu.model}, but nodes of pool "
                            f"'{pool.name}' report {', '.join(products)} ({GPU_PRODUCT_LABEL})", other, users)
        if counted:
            keys = ("gpu", "count")
            seen = sorted({f"{node.labels.get(GPU_COUNT_LABEL, '?')} ({GPU_COUNT_LABEL}), {node.offers(gpu.resource) or 0} "
                           f"{gpu.resource} allocatable" for node in counted})
            self.found.add(self._hardware(pool).location(*keys), keys, (
                f"hardware '{pool.hardware.name}' says {gpu.count} GPUs a node, but nodes of pool '{pool.name}' have "
                f"{'; '.join(seen)}; set `gpu.count` to what the nodes have"), counted, users)

    def _taints(self, index: int, pool: NodePool, chosen: tuple[LiveNode, ...], users: list[str]) -> None:
        """Every NoSchedule/NoExecute taint of the pool's nodes is one the pool declares (its pods tolerate those); the
        taints of a node's state (cordoned, not ready) are not the profiles' to declare."""
        given = tolerations((pool,))
        kept = {node.name: untolerated(given, node.placement_taints) for node in chosen}
        tainted = [node for node in chosen if kept[node.name]]
        if not tainted:
            return
        taints = sorted({_taint(taint) for node in tainted for taint in kept[node.name]})
        keys = self._pool_keys(index, "taints")
        self.found.add(self.document.location(*keys), keys, (
            f"nodes of pool '{pool.name}' carry {', '.join(taints)}, which the pool does not declare, so its pods do "
            "not tolerate it and never schedule there; add it to the pool's `taints`"), tainted, users)

    def _rails(self, pool: NodePool, chosen: tuple[LiveNode, ...], users: list[str]) -> None:
        """Each rail of the pool's hardware is advertised by its nodes under the resource name the profile gives."""
        for rail in self.cluster.rails_of(pool):
            without = [node for node in chosen if not node.offers(rail.resource)]
            if not without:
                continue
            known = {r.resource for r in self.cluster.rails} | ({pool.hardware.gpu.resource} if pool.hardware.gpu else set())
            unclaimed = sorted({name for node in without for name in node.allocatable if "/" in name
                                and name not in known and not name.split("/", 1)[0].endswith("kubernetes.io")})
            keys = ("rails", self.cluster.rails.index(rail), "resourceName")
            self.found.resources.add((self.cluster.name, rail.resource))
            self.found.add(self.document.location(*keys), keys, (
                f"rail '{rail.name}' is {rail.resource}, which nodes of pool '{pool.name}' do not advertise, so pods "
                "asking for it stay Pending"
                + (f"; they advertise {', '.join(unclaimed)}, which no rail names" if unclaimed else "")
                + "; set the rail's `resourceName` to what the device plugin advertises"), without, users)

    def _fit(self, index: int, job: Job, chosen: tuple[LiveNode, ...]) -> None:
        """The workers fit the pool's nodes in the amounts they ask (one worker's ask within one node). Where a rail's
        devices are what runs short, the profile's count of them (`network.numVfs`) is what is not true; else the
        pool's `nodes`."""
        ask = extended_ask(job)
        given = tolerations((job.pool,))
        holds = {node.name: workers_held(node, ask, given, job.workers_per_node) for node in chosen}
        if sum(holds.values()) >= job.worker_count:
            return
        limits = {node.name: min((resource for resource, amount in ask.items() if amount > 0),
                                 key=lambda resource: (node.offers(resource) or 0) // ask[resource], default="")
                  for node in chosen if holds[node.name] < job.workers_per_node}
        offered = [f"{node.name} holds {holds[node.name]} ({node.offers(limits[node.name]) or 0} {limits[node.name]})"
                   for node in chosen if node.name in limits]
        rails = {rail.resource for rail in self.cluster.rails}
        keys = (("network", "numVfs") if limits and set(limits.values()) <= rails
                else self._pool_keys(index, "nodes"))
        self.found.add(self.document.location(*keys), keys, (
            f"job '{job.name}' runs {job.worker_count} workers on pool '{job.pool.name}', "
            f"{job.workers_per_node} a node, each asking {selector_text({k: str(v) for k, v in ask.items()})}, but "
            f"its nodes hold {sum(holds.values())}" + (f": {names_text(offered)}" if offered else "")
            + "; the workers never all schedule"), chosen, [job.name])

def _taint(taint: Taint) -> str:
    return f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
