"""generator/resolve/scheduling.py: a job chart's `workers` maximum is the largest job `validate` lets through.

A property over generated fleets: Kueue and Volcano clusters of a GPU pool (DGX-1, 8 GPUs) and a CPU pool
(cpu-node), on the cluster network, the nodes' own (one worker a node) or SR-IOV rails (a VF of each a worker),
queues that hold parts of them, cohorts with and without borrowing limits, a `launcherPool`, a required
topology level with sized domains, and jobs of whole nodes, partial nodes (several workers a node), CPU-only jobs
with their own CPU and memory, launchers of their own size. For each job the chart's maximum `m` is compiled; then a
copy of the job with `m` workers must validate without an error, and one with `m + 1` must be refused (by its
queue, its topology domain, or its pool). A maximum above what validate admits lets `--set workers` make a job
that waits for ever; one below refuses a job that would run.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
from conftest import PROFILES

from mpigen.commands.pipeline import compile_profiles
from mpigen.support.diagnostics import Severity

SCENARIOS = int(os.environ.get("MPIGEN_FUZZ_EXAMPLES", 200)) // 20
"""10 fleets in CI; `make fuzz` judges FUZZ_EXAMPLES/20 of them, from its seed."""
FIRST = int(os.environ.get("MPIGEN_FUZZ_SEED", 0))


def fleet(seed: int) -> tuple[str, list[tuple[str, str]]]:
    """A cluster profile and its jobs ((name, body without `workers`)), from `seed`."""
    rng = random.Random(seed)
    kueue = rng.random() < 0.6
    gpu_nodes, cpu_nodes = rng.randrange(2, 9), rng.randrange(1, 4)
    text = ['apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: gen\nkubernetesVersion: "1.32"\n'
            "namespaces: [team-a, team-b]\n"
            f"nodePools:\n  - name: gpu\n    hardware: dgx-1\n    nodes: {gpu_nodes}\n"
            f"  - name: cpu\n    hardware: cpu-node\n    nodes: {cpu_nodes}\n"]
    network = rng.choice(["", "host", "sriov"])
    if network == "host":  # the nodes' own network: one worker a node, each with every rail
        text.append("network:\n  provider: host-network\nrails:\n"
                    + "".join(f"  - name: rail{i}\n    nic: ib{i}\n" for i in range(4)))
    elif network == "sriov":  # a VF of each rail a worker: the VFs are quota too
        text.append("network:\n  provider: sriov-network-operator\nrails:\n" + "".join(
            f"  - name: rail{i}\n    nic: ib{i}\n    ipam:\n      range: 192.168.11{i}.0/24\n" for i in range(4)))
    launcher_pool = kueue and rng.random() < 0.3
    if launcher_pool:
        text.append("launcherPool: cpu\n")
    text.append(f"scheduling:\n  scheduler: {'kueue' if kueue else 'volcano'}\n")
    topology = kueue and rng.random() < 0.5
    if topology:
        rack = rng.choice([1, 2, 4])
        text.append(f"  topology:\n    - name: rack\n      nodeLabel: example.com/rack\n      domainNodes: {rack}\n"
                    "    - name: host\n      nodeLabel: kubernetes.io/hostname\n")
    text.append("  queues:\n")
    for name, namespace in (("qa", "team-a"), ("qb", "team-b")):
        gpu, cpu = rng.randrange(0 if name == "qb" else 1, gpu_nodes + 1), rng.randrange(1, cpu_nodes + 1)
        text.append(f"    - name: {name}\n      namespaces: [{namespace}]\n      nodes: {{gpu: {gpu}, cpu: {cpu}}}\n")
        if kueue and rng.random() < 0.7:
            text.append("      cohort: shared\n")
            if rng.random() < 0.5:
                text.append(f"      borrowNodes: {{gpu: {rng.randrange(0, 4)}, cpu: {rng.randrange(0, 2)}}}\n")
    jobs = []
    for i in range(4):
        namespace = rng.choice(["team-a", "team-b"])
        body = [f"cluster: gen\nnamespace: {namespace}\nimage: example/train:1\nprogram: [python, train.py]\n"]
        if rng.random() < 0.35:
            body.append(f"pool: cpu\nresources:\n  cpu: \"{rng.choice([1, 6, 32, 100])}\"\n"
                        f"  memory: {rng.choice([1, 30, 200])}Gi\n")
        else:
            body.append(f"pool: gpu\ngpusPerWorker: {rng.choice([1, 2, 4, 8, 8])}\n")
            if rng.random() < 0.3:
                body.append(f"resources:\n  cpu: \"{rng.choice([4, 10, 40])}\"\n  memory: {rng.choice([16, 100])}Gi\n")
        if rng.random() < 0.4:
            body.append(f"launcher:\n  resources:\n    cpu: \"{rng.choice([1, 8, 60])}\"\n    memory: 2Gi\n")
        scheduling = [f"  queue: {rng.choice(['qa', 'qb'])}\n"] if rng.random() < 0.3 else []
        if topology and rng.random() < 0.6:
            scheduling.append(f"  topology:\n    level: rack\n    mode: {rng.choice(['required', 'preferred'])}\n")
        if scheduling:
            body.append("scheduling:\n" + "".join(scheduling))
        jobs.append((f"job-{i}", "".join(body)))
    return "".join(text), jobs


def job_file(name: str, body: str, workers: int) -> str:
    return f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: {name}\n{body}workers: {workers}\n"


def profiles(root: Path, cluster: str, jobs: dict[str, str]) -> Path:
    if root.exists():
        shutil.rmtree(root)
    (root / "clusters").mkdir(parents=True)
    (root / "jobs").mkdir()
    shutil.copytree(PROFILES / "hardware", root / "hardware")
    (root / "clusters" / "gen.yaml").write_text(cluster, encoding="utf-8")
    for name, text in jobs.items():
        (root / "jobs" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return root


def errors_by_job(result) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for diagnostic in result.diagnostics:
        if diagnostic.severity is Severity.ERROR:
            found.setdefault(Path(str(diagnostic.location.path)).stem, []).append(diagnostic.format())
    return found


@pytest.mark.parametrize("seed", range(FIRST, FIRST + SCENARIOS))
def test_the_charts_workers_maximum_is_the_largest_job_validate_admits(tmp_path: Path, seed: int) -> None:
    cluster, jobs = fleet(seed)
    one = {name: job_file(name, body, 1) for name, body in jobs}
    first = compile_profiles([profiles(tmp_path / "one", cluster, one)])
    refused = errors_by_job(first)
    assert set(refused) <= set(one), (cluster, refused)
    if refused:  # a job not even one worker of fits is refused as it is: judge the others
        first = compile_profiles([profiles(tmp_path / "one", cluster, {n: t for n, t in one.items()
                                                                         if n not in refused})])
    assert first.ok, [d.format() for d in first.diagnostics]
    maxima = {job.name: job.max_workers for job in first.fleet.jobs}
    assert maxima, "the generator stays useful: each seed judges some jobs"
    bodies = dict(jobs)
    edits = {}
    for name, most in maxima.items():
        edits[f"{name}-at"] = job_file(f"{name}-at", bodies[name], most)
        edits[f"{name}-over"] = job_file(f"{name}-over", bodies[name], most + 1)
    second = errors_by_job(compile_profiles([profiles(tmp_path / "edge", cluster, edits)]))
    for name, most in maxima.items():
        assert f"{name}-at" not in second, (cluster, bodies[name], most, second[f"{name}-at"])
        assert f"{name}-over" in second, (cluster, bodies[name], most)
