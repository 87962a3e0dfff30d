"""How a job's workers share nodes (`workerSpread`, generator/manifests/mpijob.py `worker_affinity`), on every
backend, and what the pool can hold then (derive.layout)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import PROFILES

from mpigen.commands.pipeline import check_profiles, compile_profiles
from mpigen.insight.explain import explain_job
from mpigen.manifests import build_job, job_chart_ref, job_object, pod_specs, pods_object
from mpigen.model import Job

# Workers of 2 GPUs: four such workers fit one DGX-1.


def _profile(path: str, extra: str, total: int = 16) -> str:
    """The profile with workers of 2 GPUs (and CPU and memory for four of them a node), `total` GPUs in all."""
    text = (PROFILES / path).read_text(encoding="utf-8").replace('cpu: "32"', 'cpu: "8"').replace("256Gi", "64Gi")
    text, replaced = re.subn(r"(?m)^totalGpus: [0-9]+\n", f"totalGpus: {total}\ngpusPerWorker: 2\n", text)
    assert replaced == 1, path
    return text + extra


def _job(profiles_copy, path: str, name: str, extra: str, total: int = 16) -> Job:
    result = compile_profiles([profiles_copy({path: _profile(path, extra, total)})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return next(job for job in result.fleet.jobs if job.name == name)


def _worker(job: Job) -> tuple[dict[str, Any], str]:
    manifests = build_job(job, job_chart_ref(job))
    specs = pod_specs(pods_object(job, manifests))
    (worker,) = [spec for spec in specs if any(c.get("readinessProbe") for c in spec["containers"])]
    return worker, job_object(manifests).obj["metadata"]["name"]


def _labels_of(job: Job) -> dict[str, dict[str, str]]:
    """The pod template labels of each replica of an MPIJob."""
    replicas = job_object(build_job(job, job_chart_ref(job))).obj["spec"]["mpiReplicaSpecs"]
    return {role: replica["template"].get("metadata", {}).get("labels", {}) for role, replica in replicas.items()}


@pytest.mark.parametrize(("path", "name"), [("jobs/resnet50-dgx.yaml", "resnet50-dgx"),
                                            ("jobs/resnet50-trainjob.yaml", "resnet50-trainjob")])
def test_one_per_node_is_a_required_anti_affinity_on_the_runs_own_workers(profiles_copy, path, name):
    # A pod anti-affinity `requiredDuringScheduling...` on kubernetes.io/hostname keeps any two pods its label
    # selector matches off one node; the selector names this run's workers only, so other jobs may share the node.
    job = _job(profiles_copy, path, name, "workerSpread: one-per-node\n", total=8)
    worker, run = _worker(job)
    (term,) = worker["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {"labelSelector": {"matchLabels": {"mpigen/worker-of": run}}, "topologyKey": "kubernetes.io/hostname"}
    assert job.workers_per_node == 1 and job.max_workers == job.pool.nodes, "the pool holds one worker a node"
    root = profiles_copy({path: _profile(path, "workerSpread: one-per-node\n", total=16)})
    shown = [d.format() for d in check_profiles([root]).diagnostics]
    assert any("8 workers need 8 nodes with `workerSpread: one-per-node` but pool 'dgx'" in line
               for line in shown), \
        "eight such workers need eight nodes; the pool has four"


def test_pack_prefers_the_nodes_of_the_runs_other_workers(profiles_copy):
    # A preferred pod affinity scores the nodes that already run pods its selector matches higher: workers of 2
    # GPUs gather on few DGX-1 nodes, where their ranks talk over NVLink, instead of being spread by the
    # scheduler's default scoring. Only a preference: a gang of workers is never kept from starting by it.
    job = _job(profiles_copy, "jobs/resnet50-dgx.yaml", "resnet50-dgx", "workerSpread: pack\n")
    worker, run = _worker(job)
    (preferred,) = worker["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred["weight"] == 100
    assert preferred["podAffinityTerm"]["labelSelector"] == {"matchLabels": {"mpigen/worker-of": run}}
    assert job.workers_per_node == 4, "8 GPUs / 2 a worker"
    assert _labels_of(job)["Worker"]["mpigen/worker-of"] == run, "the workers carry the label the term selects"
    root = profiles_copy({"jobs/resnet50-dgx.yaml": _profile("jobs/resnet50-dgx.yaml", "workerSpread: pack\n")})
    result = check_profiles([root])
    explained = explain_job(next(j for j in result.fleet.jobs if j.name == "resnet50-dgx"), result.documents)
    (fact,) = [f for f in explained.facts if f.name == "workers per node"]
    assert fact.value == "packed on as few nodes as they fit (preferred); at most 4"
    assert "workerSpread" in fact.origin


def test_no_spread_leaves_the_scheduler_free(example):
    job = next(j for j in example.fleet.jobs if j.name == "resnet50-dgx")
    worker, _ = _worker(job)
    assert "affinity" not in worker


def test_pack_under_host_networking_is_refused(profiles_copy):
    # Host networking binds sshd to the node's port: two workers of a job on one node cannot both start.
    text = (PROFILES / "jobs/netapp-resnet50.yaml").read_text(encoding="utf-8")
    root = profiles_copy({"jobs/netapp-resnet50.yaml": text + "workerSpread: pack\n"})
    shown = [d.format() for d in check_profiles([root]).diagnostics]
    assert any("uses host networking, where two workers on a node would both bind sshd's port" in line
               and line.endswith("remove workerSpread") for line in shown), shown
