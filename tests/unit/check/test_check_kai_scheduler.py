"""generator/check/rules/kai_scheduler.py: `mpigen check` on hand-written KAI Scheduler manifests that KAI would
leave Pending: a queue that is missing or a parent, a Topology or level that does not exist, a job above its queue's
limit (KAI's units: millicores, megabytes of 10^6 bytes, GPUs) or, non-preemptible, above its quota, KAI's gang
arithmetic for MPIJobs, and KAI's own queues and priority classes created by a chart. Each with a case that passes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from mpigen.check.rules import run_rules
from mpigen.check.rules.kai_scheduler import check_kai
from mpigen.check.rules.scheduling import check_scheduling
from mpigen.readback.findings import CheckContext, Finding, RenderedObject
from mpigen.support.diagnostics import Severity

QUEUE_LABEL = "kai.scheduler/queue"


def queue(name: str, parent: str | None = None, gpu: dict[str, Any] | None = None,
          cpu: dict[str, Any] | None = None, memory: dict[str, Any] | None = None) -> dict[str, Any]:
    """A KAI Queue; every resource unbounded unless given."""
    unbounded = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    spec: dict[str, Any] = {"resources": {"gpu": gpu or unbounded, "cpu": cpu or unbounded,
                                          "memory": memory or unbounded}}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def topology(name: str = "lab") -> dict[str, Any]:
    return {"apiVersion": "kai.scheduler/v1alpha1", "kind": "Topology", "metadata": {"name": name},
            "spec": {"levels": [{"nodeLabel": "example.com/block", "alias": "block"},
                                {"nodeLabel": "example.com/rack"}, {"nodeLabel": "kubernetes.io/hostname"}]}}


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def mpijob(workers: int = 2, queue_name: str | None = "team-a", min_available: int | None = None,
           policy: str | None = "WaitForWorkersReady", labels: dict[str, str] | None = None,
           annotations: dict[str, str] | None = None, gpus: int = 8, cpu: str = "16", memory: str = "100G",
           scheduler: str = "kai-scheduler") -> dict[str, Any]:
    """An MPIJob as a person writes it for KAI: the queue label, KAI's scheduler name on every pod."""
    def pod(limits: dict[str, Any]) -> dict[str, Any]:
        return {"spec": {"schedulerName": scheduler, "containers": [
            {"name": "c", "image": "busybox", "resources": {"limits": limits}}]}}
    spec: dict[str, Any] = {"slotsPerWorker": gpus, "runPolicy": {"cleanPodPolicy": "Running"}, "mpiReplicaSpecs": {
        "Launcher": {"replicas": 1, "template": pod({"cpu": "1", "memory": "1G"})},
        "Worker": {"replicas": workers, "template": pod({"nvidia.com/gpu": gpus, "cpu": cpu, "memory": memory})}}}
    if policy is not None:
        spec["launcherCreationPolicy"] = policy
    if min_available is not None:
        spec["runPolicy"]["schedulingPolicy"] = {"minAvailable": min_available}
    metadata: dict[str, Any] = {"name": "train", "namespace": "team-a",
                                "labels": {**({QUEUE_LABEL: queue_name} if queue_name else {}), **(labels or {})}}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": metadata, "spec": spec}


LAB = (queue("lab"), queue("team-a", parent="lab"), topology())


def check(*objects: dict[str, Any], extra: tuple[dict[str, Any], ...] = ()) -> list[Finding]:
    documents = [RenderedObject(f"m{i}.yaml", obj) for i, obj in enumerate(objects)]
    return check_kai(documents, CheckContext(extra=tuple(RenderedObject("extra.yaml", obj) for obj in extra)))


def said(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in findings]


# --- the queue -----------------------------------------------------------------------------------------------------


def test_a_job_in_a_leaf_queue_that_exists_passes() -> None:
    assert check(mpijob(min_available=3), *LAB) == []
    assert check(mpijob(min_available=3), extra=LAB) == []  # the queues from --context


def test_a_queue_that_does_not_exist_leaves_the_job_pending() -> None:
    assert said(check(mpijob(queue_name="team-b", min_available=3), *LAB)) == [(
        '.metadata.labels["kai.scheduler/queue"]',
        "no KAI Queue team-b in this render or the extra manifests (--context): KAI never schedules the job and its "
        "pods stay Pending; create the Queue or name one that exists")]


def test_kais_own_default_queue_needs_no_queue_object() -> None:
    assert check(mpijob(queue_name="default-queue", min_available=3)) == []


def test_the_queue_label_on_the_pods_is_read_when_the_job_has_none() -> None:
    job = mpijob(queue_name=None, min_available=3)
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"] = {"labels": {QUEUE_LABEL: "nowhere"}}
    assert [f.path for f in check(job, *LAB)] == [
        '.spec.mpiReplicaSpecs.Worker.template.metadata.labels["kai.scheduler/queue"]']


def test_a_parent_queue_takes_no_jobs() -> None:
    assert said(check(mpijob(queue_name="lab", min_available=3), *LAB)) == [(
        '.metadata.labels["kai.scheduler/queue"]',
        "Queue lab is a parent queue (of team-a): KAI schedules only in leaf queues, so the job's pods stay Pending; "
        "name one of its child queues")]


def test_no_queue_label_is_a_warning_that_kai_uses_its_default_queue() -> None:
    (found,) = check(mpijob(queue_name=None, min_available=3), *LAB)
    assert found.severity == Severity.WARNING and "puts it in default-queue, whose quota is 0" in found.message


def test_a_pod_of_another_scheduler_without_the_label_is_not_kais() -> None:
    assert check(mpijob(queue_name=None, scheduler="default-scheduler", min_available=99)) == []


def test_a_queue_whose_parent_is_missing_or_that_has_no_resources() -> None:
    orphan = queue("team-c", parent="nowhere")
    bare = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "bare"}, "spec": {}}
    assert said(check(orphan, bare)) == [
        (".spec.parentQueue", "no KAI Queue nowhere (its parentQueue) in this render or the extra manifests "
         "(--context); KAI schedules nothing in a queue whose parent is missing, so its jobs stay Pending; create "
         "the parent queue or drop parentQueue"),
        (".spec", "KAI's admission webhook refuses the Queue: resources must be specified; give it spec.resources "
         "(cpu, memory, gpu, each with quota, limit and overQuotaWeight)")]
    assert check(queue("team-c", parent="lab"), queue("lab")) == []


# --- KAI's own queues and priority classes --------------------------------------------------------------------------


def test_kais_own_queues_and_priority_classes_are_not_a_charts(upstream: Path) -> None:
    """KAI's quickstart queues (upstream, as they are) and its `train` class, created by a chart, are errors."""
    own = [doc for doc in YAML(typ="safe").load_all(
        (upstream / "scheduling" / "kai" / "quickstart__default-queues.yaml").read_text(encoding="utf-8")) if doc]
    found = check(*own, priority_class("train", 50))
    assert [(f.path, f.message.split(":")[0]) for f in found] == [
        (".metadata.name", "Queue default-parent-queue is KAI Scheduler's own (its chart creates it)"),
        (".metadata.name", "Queue default-queue is KAI Scheduler's own (its chart creates it)"),
        (".metadata.name", "PriorityClass train is KAI Scheduler's own (its chart creates it)")]
    assert check(priority_class("research", 50), queue("research")) == []
    assert check(priority_class("inference", 1000)) == []  # a cluster without KAI may have a class of that name


# --- topology ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["example.com/rack", "block", "kubernetes.io/hostname"])
def test_a_placement_at_a_level_or_alias_of_the_topology_passes(level: str) -> None:
    job = mpijob(min_available=3, annotations={"kai.scheduler/topology": "lab",
                                               "kai.scheduler/topology-required-placement": level})
    assert check(job, *LAB) == []


def test_a_topology_that_does_not_exist_or_a_level_it_lacks() -> None:
    missing = mpijob(min_available=3, annotations={"kai.scheduler/topology": "other"})
    assert said(check(missing, *LAB)) == [(
        '.metadata.annotations["kai.scheduler/topology"]',
        "no KAI Topology other in this render or the extra manifests (--context): KAI says 'Requested topology "
        "other does not exist' and the job's pods stay Pending; create the Topology or name one that exists")]
    wrong = mpijob(min_available=3, annotations={"kai.scheduler/topology": "lab",
                                                 "kai.scheduler/topology-preferred-placement": "example.com/zone"})
    assert said(check(wrong, *LAB)) == [(
        '.metadata.annotations["kai.scheduler/topology-preferred-placement"]',
        "example.com/zone is no level of KAI Topology lab (its levels: example.com/block, example.com/rack, "
        "kubernetes.io/hostname): KAI finds no domain at it and the job's pods stay Pending; name one of its "
        "levels' node labels")]


def test_a_placement_without_a_topology_is_ignored_by_kai() -> None:
    job = mpijob(min_available=3, annotations={"kai.scheduler/topology-required-placement": "example.com/rack"})
    (found,) = check(job, *LAB)
    assert found.severity == Severity.WARNING and "ignores the placement" in found.message


# --- the gang --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 4])
def test_kais_gang_under_wait_for_workers_ready(workers: int) -> None:
    """KAI subtracts the launcher until it exists: workers + 1, or no minAvailable, is a gang of every worker (no
    #608 deadlock, unlike mpi-operator's PodGroup); the workers alone are one fewer, a warning; more than the
    job's pods never completes."""
    assert check(mpijob(workers, min_available=workers + 1), *LAB) == []
    assert check(mpijob(workers), *LAB) == []
    (partial,) = check(mpijob(workers, min_available=workers), *LAB)
    assert partial.severity == Severity.WARNING and partial.message.startswith(
        f"minAvailable {workers}: under WaitForWorkersReady KAI subtracts the launcher until it exists, so its gang "
        f"is {workers - 1} of the {workers} workers")
    (never,) = check(mpijob(workers, min_available=workers + 2), *LAB)
    assert never.severity == Severity.ERROR and "KAI's gang never completes" in never.message
    assert check(mpijob(workers, min_available=workers, policy=None), *LAB) == []  # the launcher is made at once


def test_the_mpi_operator_608_rule_leaves_kai_jobs_to_kai() -> None:
    """mpi-operator runs without --gang-scheduling under KAI: its #608 arithmetic is not KAI's."""
    documents = [RenderedObject("m.yaml", mpijob(2, min_available=None))]
    documents[0].obj["spec"]["runPolicy"]["schedulingPolicy"] = {}
    assert check_scheduling(documents, CheckContext()) == []
    other = copy.deepcopy(documents[0].obj)
    del other["metadata"]["labels"]
    for replica in other["spec"]["mpiReplicaSpecs"].values():
        replica["template"]["spec"]["schedulerName"] = "volcano"
    assert len(check_scheduling([RenderedObject("m.yaml", other)], CheckContext())) == 1


def test_a_volcano_job_has_no_kai_grouper() -> None:
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": "j", "namespace": "team-a", "labels": {QUEUE_LABEL: "team-a"}},
           "spec": {"minAvailable": 2, "tasks": [{"name": "w", "replicas": 2, "template": {"spec": {
               "schedulerName": "kai-scheduler", "containers": [{"name": "c", "image": "busybox"}]}}}]}}
    (found,) = check(job, *LAB)
    assert found.severity == Severity.WARNING and found.message.startswith(
        "KAI Scheduler has no grouper for Volcano's Job")


# --- the job against its queue's limit and quota ----------------------------------------------------------------------


def test_a_job_above_its_queues_limit_is_never_scheduled() -> None:
    """2 workers x 8 GPUs = 16 GPUs against a limit of 8; the same job in a queue limited to 16 passes."""
    tight = (queue("lab"), queue("team-a", parent="lab", gpu={"quota": 8, "limit": 8, "overQuotaWeight": 1}))
    assert said(check(mpijob(min_available=3), *tight)) == [(
        '.metadata.labels["kai.scheduler/queue"]',
        "its 3 pods together ask for 16 GPUs of gpu, above the limit 8 of KAI Queue team-a: KAI never schedules the "
        "job (OverLimit) and its pods stay Pending; raise the queue's limit (-1: none) or make the job smaller")]
    roomy = (queue("lab"), queue("team-a", parent="lab", gpu={"quota": 8, "limit": 16, "overQuotaWeight": 1}))
    assert check(mpijob(min_available=3), *roomy) == []


def test_kais_units_millicores_and_megabytes_of_ten_to_the_sixth() -> None:
    """The launcher's 1 CPU and 1G plus 2 workers of 500m and 8G: 2000 millicores and 17000 megabytes, exactly."""
    job = mpijob(min_available=3, cpu="500m", memory="8G")
    exact = queue("team-a", cpu={"quota": 0, "limit": 2000}, memory={"quota": 0, "limit": 17000})
    assert check(job, exact) == []
    short = queue("team-a", cpu={"quota": 0, "limit": 1999}, memory={"quota": 0, "limit": 16999})
    assert [f.message.split(",")[0] for f in check(job, short)] == [
        "its 3 pods together ask for 2000 millicores of cpu", "its 3 pods together ask for 17000 megabytes of memory"]


def test_an_unset_limit_is_zero_and_an_ancestors_limit_binds_too() -> None:
    unset = queue("team-a", parent="lab", gpu={"quota": 32})
    assert "above the limit 0 (unset counts as 0) of KAI Queue team-a" in check(mpijob(min_available=3), unset,
                                                                                queue("lab"))[0].message
    parent = queue("lab", gpu={"quota": 4, "limit": 4})
    (found,) = check(mpijob(min_available=3), queue("team-a", parent="lab"), parent)
    assert "above the limit 4 of KAI Queue lab" in found.message


def test_a_non_preemptible_job_above_its_quota_never_runs() -> None:
    """Over quota is fine for a preemptible job (train, 50: KAI's default); inference (125) is not preemptible, nor
    a class of the chart's own of value 100, and the preemptibility label overrides the value."""
    queues = (queue("lab"), queue("team-a", parent="lab", gpu={"quota": 8, "limit": -1, "overQuotaWeight": 1}))
    assert check(mpijob(min_available=3), *queues) == []
    (found,) = check(mpijob(min_available=3, labels={"priorityClassName": "inference"}), *queues)
    assert found.message == (
        "its 3 pods together ask for 16 GPUs of gpu, above the quota 8 of KAI Queue team-a, and priority class "
        "inference (125) makes it non-preemptible, which KAI runs only within quota (NonPreemptibleOverQuota): its "
        "pods stay Pending; raise the quota or give the job a preemptible priority class (value below 100, such as "
        "train)")
    assert len(check(mpijob(min_available=3, labels={"priorityClassName": "urgent"}), *queues,
                     priority_class("urgent", 100))) == 1
    assert check(mpijob(min_available=3, labels={"priorityClassName": "inference",
                                                 "kai.scheduler/preemptibility": "preemptible"}), *queues) == []
    assert len(check(mpijob(min_available=3, labels={"kai.scheduler/preemptibility": "non-preemptible"}),
                     *queues)) == 1


def test_the_rule_runs_with_every_rule_under_scheduling() -> None:
    findings = run_rules([RenderedObject("m.yaml", mpijob(queue_name="team-b", min_available=3)),
                          *(RenderedObject("q.yaml", obj) for obj in LAB)], CheckContext())
    assert [(f.rule, f.message.split(":")[0]) for f in findings if "KAI" in f.message] == [
        ("scheduling", "no KAI Queue team-b in this render or the extra manifests (--context)")]


def test_a_deployment_defaults_to_inference_and_is_held_to_its_quota() -> None:
    """KAI's default priority of a Deployment is inference (125, not preemptible); a batch Job's is train."""
    def workload(api_version: str, kind: str) -> dict[str, Any]:
        template = {"metadata": {"labels": {"app": "x"}}, "spec": {"schedulerName": "kai-scheduler", "containers": [
            {"name": "c", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}
        return {"apiVersion": api_version, "kind": kind,
                "metadata": {"name": "w", "namespace": "team-a", "labels": {QUEUE_LABEL: "team-a"}},
                "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}}
    small = queue("team-a", gpu={"quota": 1, "limit": -1})
    (found,) = check(workload("apps/v1", "Deployment"), small)
    assert "its pod asks for 2 GPUs of gpu, above the quota 1 of KAI Queue team-a, and priority class inference " \
           "(125)" in found.message
    assert check(workload("batch/v1", "Job"), small) == []
