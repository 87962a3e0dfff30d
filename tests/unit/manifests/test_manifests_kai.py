"""generator/manifests/scheduling.py under KAI: kai-lab's infra chart and its two jobs (profiles/clusters/kai-lab.yaml).

kai-lab has 8 DGX-1 nodes (80 CPUs = 80000 millicores, 512 GiB = 549755 MB, 8 GPUs each): queue training holds 6 and
may borrow 2 (weight 2), research holds 2; both in cohort gpu-lab. kai-allreduce: 4 workers, WaitForWorkersReady, a
required rack, priority class release-critical. kai-research: 2 workers in research (its namespace's queue),
AtStartup, a preferred rack, no priority class.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from conftest import run_helm
from ruamel.yaml import YAML
from test_manifests_scheduling import mpijob, objects, of_kind, write

from mpigen.commands.pipeline import CompileResult
from mpigen.manifests.mpijob import workers_variable
from mpigen.manifests.scheduling import kai_min_available

NODE = {"cpu": 80000, "memory": 549755, "gpu": 8}


def resources(nodes: int, limit: int | None, weight: int = 1) -> dict[str, Any]:
    return {name: {"quota": per_node * nodes, "limit": -1 if limit is None else per_node * limit,
                   "overQuotaWeight": weight} for name, per_node in NODE.items()}


def test_kai_queues_hold_their_pools_capacity_under_the_parent_of_their_cohort(example: CompileResult) -> None:
    queues = of_kind(objects(example, "kai-lab/infra"), "Queue")
    assert list(queues) == ["/gpu-lab", "/training", "/research"]  # the parent first: its members name it
    assert {name: queue["apiVersion"] for name, queue in queues.items()} == dict.fromkeys(queues, "scheduling.run.ai/v2")
    assert queues["/gpu-lab"]["spec"] == {"resources": resources(8, None)}
    assert queues["/training"]["spec"] == {"parentQueue": "gpu-lab", "resources": resources(6, 8, weight=2)}
    assert queues["/research"]["spec"] == {"parentQueue": "gpu-lab", "resources": resources(2, None)}
    for queue in queues.values():
        assert queue["metadata"]["annotations"] == {"argocd.argoproj.io/sync-options":
                                                    "SkipDryRunOnMissingResource=true"}


def test_kais_topology_and_the_declared_priority_class(example: CompileResult) -> None:
    infra = objects(example, "kai-lab/infra")
    (topology,) = of_kind(infra, "Topology").values()
    assert topology["apiVersion"] == "kai.scheduler/v1alpha1" and topology["metadata"]["name"] == "kai-lab"
    assert topology["spec"] == {"levels": [{"nodeLabel": "example.com/rack"}, {"nodeLabel": "kubernetes.io/hostname"}]}
    (priority,) = of_kind(infra, "PriorityClass").values()
    assert (priority["metadata"]["name"], priority["value"], priority["globalDefault"]) == ("release-critical", 150,
                                                                                             False)
    assert not of_kind(infra, "ClusterQueue") and not of_kind(infra, "WorkloadPriorityClass")


def pod_specs(job: dict[str, Any]) -> list[dict[str, Any]]:
    return [replica["template"]["spec"] for replica in job["spec"]["mpiReplicaSpecs"].values()]


def test_each_job_carries_its_queue_priority_topology_and_kais_scheduler(example: CompileResult) -> None:
    allreduce, research = mpijob(example, "kai-lab/jobs/kai-allreduce"), mpijob(example, "kai-lab/jobs/kai-research")
    assert allreduce["metadata"]["labels"]["kai.scheduler/queue"] == "training"
    assert allreduce["metadata"]["labels"]["priorityClassName"] == "release-critical"
    assert allreduce["metadata"]["annotations"]["kai.scheduler/topology"] == "kai-lab"
    assert allreduce["metadata"]["annotations"]["kai.scheduler/topology-required-placement"] == "example.com/rack"
    assert "kai.scheduler/topology-preferred-placement" not in allreduce["metadata"]["annotations"]
    assert research["metadata"]["labels"]["kai.scheduler/queue"] == "research"
    assert "priorityClassName" not in research["metadata"]["labels"]  # KAI's default for an MPIJob: train
    assert research["metadata"]["annotations"]["kai.scheduler/topology-preferred-placement"] == "example.com/rack"
    assert "kai.scheduler/topology-required-placement" not in research["metadata"]["annotations"]
    for job in (allreduce, research):
        specs = pod_specs(job)
        assert len(specs) == 2 and all(spec["schedulerName"] == "kai-scheduler" for spec in specs)
        assert all("priorityClassName" not in spec for spec in specs)


def test_other_clusters_pods_name_no_kai_scheduler(example: CompileResult) -> None:
    for chart in ("volcano-lab/jobs/volcano-allreduce", "dgx-pod/jobs/vision-resnet50", "cpu-lab/jobs/cpu-pi"):
        job = mpijob(example, chart)
        assert all(spec.get("schedulerName") != "kai-scheduler" for spec in pod_specs(job)), chart
        assert "kai.scheduler/queue" not in job["metadata"]["labels"], chart


def test_608_under_kai_the_launcher_is_written_in_for_the_podgrouper_to_take_out(
        example: CompileResult, tmp_path: Path, helm: Path) -> None:
    """KAI's podgrouper subtracts the launcher from minAvailable under WaitForWorkersReady while no launcher exists:
    written as workers + 1, the gang before the launcher is the workers (mpi-grouper.go). At start-up it counts
    every pod, so workers + 1 too. Through real Helm, following the `workers` value."""
    root = write(example, tmp_path / "charts") / "kai-lab" / "jobs"
    for chart, policy in (("kai-allreduce", "WaitForWorkersReady"), ("kai-research", "AtStartup")):
        rendered = run_helm(helm, "template", "x", root / chart, "--set", "workers=3").stdout
        (job,) = [d for d in YAML(typ="safe").load_all(rendered) if d and d["kind"] == "MPIJob"]
        assert job["spec"]["launcherCreationPolicy"] == policy
        assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 4}


def test_608_under_kai_a_profiles_minimum_gets_the_launcher_only_under_wait_for_workers_ready(
        example: CompileResult) -> None:
    assert example.fleet is not None
    jobs = {job.name: job for job in example.fleet.jobs}
    for name, extra in (("kai-allreduce", 1), ("kai-research", 0)):
        job = jobs[name]
        given = dataclasses.replace(job, scheduling=dataclasses.replace(job.scheduling, min_available=2))
        assert kai_min_available(given, workers_variable(given)) == 2 + extra
