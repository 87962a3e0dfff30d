"""Fuzzing `mpigen plan`, `mpigen explain` and the picture over the sizes of jobs and pools.

Each example is a valid fleet of one cluster: one to three pools of the built-in dgx-1 or cpu-node hardware or of g64
(64 GPUs and 16 NICs, the most boxes a node has), of 1 to 40 nodes (in one fleet in four, up to 100,000), or in one
fleet in four 4 to 300 pools of 1 to 40 nodes (so that the page's bound is reached); no scheduler, Coscheduling, or
Kueue with two queues of one cohort splitting every pool; one to 24 jobs of 1 to 40 workers (in one fleet in four, up
to 30,000), GPU jobs of 1 to 8 GPUs a worker, CPU jobs asking 0.5 to 100 CPUs or nothing, some with 2,147,483,647
slots a worker, of two priority classes and two namespaces; one cluster in three allocates GPUs through Dynamic
Resource Allocation (`dra`). For each it checks, in process:

- the placement: where every pool has at most 40 nodes and every job at most 40 workers, the whole plan (states,
  nodes, placements, what each job waits for) equals the plan made with the straightforward first fit and quota
  count (`FirstFitReference`, `QuotasReference`, tests/conftest.py) in place of capacity's runs of identical nodes
  and kept cohort totals;
- what a waiting job waits for: the first eight in admission order of the jobs before it that hold its pool's nodes
  or its queues' quota, and how many more, as a scan of all those jobs finds them;
- what is set aside: a job that can never run where it is (more workers than its pool holds, or a hostfile and
  rankfile more than etcd stores) is planned as such, and the rest as if it were not there;
- the bounds: explain lists at most 128 ranks and says how many it left out, and its text and JSON stay within a
  bound linear in the ranks it lists; the picture draws at most 64 nodes a pool and at most 8,192 boxes (nodes,
  GPUs, NICs) a page, every node where that bound allows, and says what it left out; its HTML and SVG stay within a
  bound linear in the boxes it draws, the jobs and the pools; plan's text stays within a bound
  linear in jobs and pools, whatever the sizes;
- the claims: under `dra` each GPU job's plan line says what each worker claims (its GPUs, alone: the fuzzer's
  cluster has no rails), explain has its claim and says why no GPU limit is written; a CPU job and a job without `dra`
  have neither.

CI runs a few examples (20) from a fixed seed; `make fuzz` runs MPIGEN_FUZZ_EXAMPLES / 4 from its seed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import FirstFitReference, QuotasReference
from hypothesis import HealthCheck, event, example, given, seed, settings
from hypothesis import strategies as st

from mpigen.commands.pipeline import check_profiles
from mpigen.insight import bounds, capacity
from mpigen.insight.explain import explain_job
from mpigen.insight.picture import fleet_html, fleet_svg
from mpigen.insight.plan import NEVER, WAITS, FleetPlan, plan_fleet
from mpigen.insight.report import explain_json, explain_text, plan_json, plan_text

LONG = "MPIGEN_FUZZ_EXAMPLES" in os.environ
EXAMPLES = max(int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) // 4, 20) if LONG else 20  # CI: about 10 s
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_126)
REFERENCE_LIMIT = 40
"""Pools of at most this many nodes and jobs of at most this many workers are also planned by the reference."""


HARDWARE = ("dgx-1", "cpu-node", "g64")
G64 = ("apiVersion: mpigen/v1alpha1\nkind: Hardware\nname: g64\ngpu: {count: 64, model: X, memoryGiB: 16}\n"
       "cpu: {sockets: 2, coresPerSocket: 64}\nmemoryGiB: 2048\nnics:\n"
       + "".join(f"  - {{name: n{i}, numaNode: {i // 8}, gpus: [{4 * i}, {4 * i + 1}, {4 * i + 2}, {4 * i + 3}]}}\n"
                 for i in range(16)))
"""The most GPUs a node may have, and a NIC for every four: 81 boxes a node in the picture."""


@dataclass(frozen=True)
class Pool:
    hardware: str
    nodes: int


@dataclass(frozen=True)
class JobSpec:
    pool: int
    workers: int
    gpus_per_worker: int
    cpu: str | None
    slots: int | None
    team: str
    priority: str | None


@dataclass(frozen=True)
class FleetSpec:
    scheduler: str
    pools: tuple[Pool, ...]
    jobs: tuple[JobSpec, ...]
    dra: bool = False


@st.composite
def fleets(draw: st.DrawFn) -> FleetSpec:
    """Three fleets in four small enough for the reference; in the fourth, pools and jobs small or big."""
    nodes, workers = st.integers(1, REFERENCE_LIMIT), st.integers(1, REFERENCE_LIMIT)
    if draw(st.integers(0, 3)) == 0:
        nodes = nodes | st.integers(REFERENCE_LIMIT + 1, 100_000)
        workers = workers | st.integers(REFERENCE_LIMIT + 1, 5_000) | st.integers(5_001, 30_000)  # past etcd's hostfile
    many = draw(st.integers(0, 3)) == 0  # many pools of at most 40 nodes: the page's bound, not the pool's
    count = draw(st.integers(4, 300) if many else st.integers(1, 3))
    pool_nodes = st.integers(1, REFERENCE_LIMIT) if many else nodes
    pools = tuple(Pool(draw(st.sampled_from(HARDWARE)), draw(pool_nodes)) for _ in range(count))
    jobs = []
    for _ in range(draw(st.integers(1, 24))):
        pool = draw(st.integers(0, len(pools) - 1))
        gpu = pools[pool].hardware != "cpu-node" and draw(st.booleans())
        jobs.append(JobSpec(
            pool=pool, workers=draw(workers),
            gpus_per_worker=draw(st.sampled_from((1, 2, 4, 8))) if gpu else 0,
            cpu=draw(st.sampled_from((None, "0.5", "1", "8", "41", "100"))) if not gpu else None,
            slots=draw(st.sampled_from((None, 1, 2_147_483_647))) if not gpu else None,
            team=draw(st.sampled_from(("team-a", "team-b"))), priority=draw(st.sampled_from((None, "high", "low")))))
    return FleetSpec(draw(st.sampled_from(("none", "coscheduling", "kueue"))), pools, tuple(jobs),
                     draw(st.integers(0, 2)) == 0)


def write(spec: FleetSpec, root: Path) -> Path:
    (root / "clusters").mkdir(parents=True)
    (root / "jobs").mkdir()
    (root / "hardware").mkdir()
    (root / "hardware" / "g64.yaml").write_text(G64, encoding="utf-8")
    text = [f'apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: fz\nkubernetesVersion: "{"1.34" if spec.dra else "1.32"}"\n'
            + ("dra: {}\n" if spec.dra else "") + "namespaces: [team-a, team-b]\nnodePools:\n"]
    text += [f"  - name: p{i}\n    hardware: {pool.hardware}\n    nodes: {pool.nodes}\n"
             f"    nodeLabels: {{example.com/pool: p{i}}}\n" for i, pool in enumerate(spec.pools)]
    text.append(f"scheduling:\n  scheduler: {spec.scheduler}\n"
                + ("  kueueVersion: v0.18\n" if spec.dra and spec.scheduler == "kueue" else ""))
    text.append("  priorityClasses:\n    - name: high\n      value: 1000\n    - name: low\n      value: 10\n")
    if spec.scheduler == "kueue":  # two queues of one cohort splitting each pool (one for both where one cannot)
        halves = [(f"p{i}", pool.nodes - pool.nodes // 2, pool.nodes // 2) for i, pool in enumerate(spec.pools)]
        queues = [("qa", "team-a", {pool: a for pool, a, _ in halves}), ("qb", "team-b", {pool: b for pool, _, b in halves})]
        if not all(b for _, _, b in halves):
            queues = [("qa", "team-a, team-b", {pool: a + b for pool, a, b in halves})]
        text.append("  queues:\n")
        for queue, teams, share in queues:
            nodes = ", ".join(f"{pool}: {count}" for pool, count in share.items())
            text.append(f"    - name: {queue}\n      namespaces: [{teams}]\n      nodes: {{{nodes}}}\n      cohort: c\n")
    (root / "clusters" / "fz.yaml").write_text("".join(text), encoding="utf-8")
    for i, job in enumerate(spec.jobs):
        lines = [f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: j{i:02d}\ncluster: fz\npool: p{job.pool}\n"
                 f"namespace: {job.team}\nimage: example/train:1\nprogram: [python, train.py]\nworkers: {job.workers}\n"]
        if job.gpus_per_worker:
            lines.append(f"gpusPerWorker: {job.gpus_per_worker}\n")
        if job.cpu is not None:
            lines.append(f'resources: {{cpu: "{job.cpu}"}}\n')
        if job.slots is not None:
            lines.append(f"slotsPerWorker: {job.slots}\n")
        if job.priority is not None:
            lines.append(f"scheduling: {{priorityClass: {job.priority}}}\n")
        (root / "jobs" / f"j{i:02d}.yaml").write_text("".join(lines), encoding="utf-8")
    return root


BOXES_A_NODE = {"dgx-1": 1 + 8 + 4, "cpu-node": 1, "g64": 1 + 64 + 16}
"""A node and its GPUs and NICs (the fuzzer's cluster has no rails)."""


def holders_by_scan(result, plan: FleetPlan) -> dict[str, tuple[str, ...]]:
    """What each waiting job waits for, as a scan of the jobs admitted before it finds them (the plan's first rule)."""
    found = {}
    for cluster in result.fleet.clusters:
        jobs = result.fleet.jobs_of(cluster)
        packing = capacity.pack(cluster, jobs)
        running = {job.name for job, _ in packing.running}
        order = capacity.admission_order(jobs)
        for waiting in packing.waiting:
            before = order[:order.index(waiting.job)]
            found[waiting.job.name] = tuple(
                job.name for job in before if job.name in running
                and (job.scheduling.queue in waiting.queues if waiting.queues else job.pool.name == waiting.job.pool.name))
    return found


def _settings():
    return settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@seed(SEED)
@_settings()
@given(spec=fleets())
@example(spec=FleetSpec("none", (Pool("dgx-1", 100_000), Pool("cpu-node", 100_000)), (
    JobSpec(0, 5_000, 8, None, None, "team-a", None), JobSpec(1, 10_000, 0, None, 2_147_483_647, "team-a", None),
    JobSpec(1, 30_000, 0, None, None, "team-b", None))))  # the last one's hostfile is more than etcd stores: set aside
def test_plan_explain_and_picture_stay_exact_and_bounded(tmp_path_factory, monkeypatch, spec: FleetSpec):
    root = write(spec, tmp_path_factory.mktemp("fleet") / "profiles")
    result = check_profiles([root], set_aside_unfit=True)
    assert result.ok, [d.format() for d in result.diagnostics]
    plan = plan_fleet(result.fleet, result.documents, result.unfit)
    for _, problems in result.unfit:
        event("a job set aside: " + ("its hostfile is more than etcd stores" if any(
            "etcd's default limit" in problem.message for problem in problems) else "it does not fit"))

    small = all(p.nodes <= REFERENCE_LIMIT for p in spec.pools) and all(j.workers <= REFERENCE_LIMIT for j in spec.jobs)
    event("compared with the reference" if small else "too big for the reference")
    if small:
        with monkeypatch.context() as patched:
            patched.setattr(capacity, "_Nodes", FirstFitReference)
            patched.setattr(capacity, "_Quotas", QuotasReference)
            assert plan_fleet(result.fleet, result.documents, result.unfit) == plan

    scanned = holders_by_scan(result, plan)
    for job in plan.jobs:
        if job.state == WAITS:
            held = scanned[job.name]
            assert (job.waits_for, job.waits_for_omitted) == (held[:bounds.NAMES_SHOWN],
                                                              max(len(held) - bounds.NAMES_SHOWN, 0))
    text = plan_text(plan)
    assert len(text) <= 4_000 + 1_500 * len(plan.jobs) + 400 * len(spec.pools)
    json.loads(plan_json(plan))
    planned = {job.name for job in plan.jobs if job.state != NEVER}
    claiming = [job for job in result.fleet.jobs if job.name in planned and job.devices is not None
                and job.devices.pairs]
    assert len(claiming) == text.count(" worker claims: ")
    event("DRA claims" if claiming else "no DRA claims")
    for job in claiming:
        assert spec.dra and job.uses_gpus
        assert f"    {job.name} worker claims: {job.gpus_per_worker} GPU" + ("s" if job.gpus_per_worker > 1 else "") \
            + " (no NIC)\n" in text

    for job in result.fleet.jobs:
        explanation = explain_job(job, result.documents)
        listed = len(explanation.ranks)
        assert listed == min(explanation.rank_count, bounds.RANKS_SHOWN)
        assert explanation.rank_count == job.worker_count * job.slots_per_worker
        assert explanation.ranks_omitted == explanation.rank_count - listed
        text = explain_text(explanation)
        assert ("more ranks" in text) == bool(explanation.ranks_omitted)
        assert len(text) <= 12_000 + 200 * listed
        data = json.loads(explain_json(explanation))
        assert len(data["ranks"]) == listed and len(json.dumps(data)) <= 16_000 + 400 * listed
        claim = [fact for fact in explanation.facts if fact.section == "devices" and fact.name == "claim"]
        assert len(claim) == (spec.dra and job.uses_gpus)
        if claim:
            limit = next(fact for fact in explanation.facts if fact.name == "nvidia.com/gpu")
            assert limit.value.startswith(f"none: {job.gpus_per_worker} GPUs claimed through DRA")
            alone = next(fact for fact in explanation.facts if fact.section == "devices" and fact.name == "GPUs")
            assert alone.origin.startswith("the job attaches no rails: the claim holds the GPUs alone")

    wanted = sum(min(pool.nodes, bounds.NODES_DRAWN) for pool in spec.pools)
    boxes_wanted = sum(min(pool.nodes, bounds.NODES_DRAWN) * BOXES_A_NODE[pool.hardware] for pool in spec.pools)
    event("the page's budget of boxes reached" if boxes_wanted > bounds.BOXES_DRAWN else "every pool drawn in full")
    for page in (fleet_html(result.fleet, plan), fleet_svg(result.fleet, plan)):
        drawn = page.count("data-node=")
        boxes = drawn + page.count("<g data-gpu=") + page.count("<g data-nic=")
        assert boxes <= bounds.BOXES_DRAWN and drawn <= wanted
        if boxes_wanted <= bounds.BOXES_DRAWN:
            assert drawn == wanted
        assert len(page) <= 10_000 + 6_000 * drawn + 500 * boxes + 1_500 * len(spec.jobs) + 2_000 * len(spec.pools)
        left = sum(int(n) for n in re.findall(r'<g transform="[^"]*" data-omitted-nodes="([0-9]+)"', page))
        assert drawn + left == sum(pool.nodes for pool in spec.pools)


@pytest.mark.parametrize("nodes", [1, 7, 64, 65, 100_000])
def test_the_fuzzers_fleets_are_valid_at_their_edges(tmp_path, nodes):
    spec = FleetSpec("kueue", (Pool("dgx-1", nodes), Pool("cpu-node", nodes)),
                     (JobSpec(0, 1, 8, None, None, "team-a", "high"), JobSpec(1, 2, 0, "0.5", 2_147_483_647, "team-b",
                                                                           None)))
    result = check_profiles([write(spec, tmp_path / "profiles")], set_aside_unfit=True)
    assert result.ok, [d.format() for d in result.diagnostics]
