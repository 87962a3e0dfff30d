"""generator/check/rules/scheduling.py: `mpigen check` on hand-written manifests that a gang scheduler or Kueue
would never start: the #608 arithmetic, a gang larger than the job, a queue-name label naming no LocalQueue,
a ClusterQueue that does not cover what the job requests, a Kueue job created running; and objects of two
compiled clusters never stand in for each other.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mpigen.check.rules import run_rules
from mpigen.check.rules.scheduling import check_scheduling
from mpigen.readback.findings import CheckContext, Finding, RenderedObject
from mpigen.support.diagnostics import Severity


def mpijob(workers: int = 2, policy: str | None = "WaitForWorkersReady", min_available: Any = None,
           gang: bool = True, labels: dict[str, str] | None = None, suspend: bool | None = None,
           namespace: str = "team-a") -> dict[str, Any]:
    """A small MPIJob as a person writes it: a launcher and `workers` one-GPU workers."""
    spec: dict[str, Any] = {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "Running"}}
    if policy is not None:
        spec["launcherCreationPolicy"] = policy
    if gang:
        spec["runPolicy"]["schedulingPolicy"] = {} if min_available is None else {"minAvailable": min_available}
    if suspend is not None:
        spec["runPolicy"]["suspend"] = suspend
    container = {"name": "c", "image": "busybox"}
    spec["mpiReplicaSpecs"] = {
        "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
            {**container, "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}},
        "Worker": {"replicas": workers, "template": {"spec": {"containers": [
            {**container, "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "4"}}}]}}},
    }
    metadata: dict[str, Any] = {"name": "train", "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": metadata, "spec": spec}


def local_queue(name: str = "team-a", namespace: str = "team-a", cluster_queue: str = "gpus") -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cluster_queue}}


def cluster_queue(covered: list[str], name: str = "gpus") -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": covered, "flavors": [
                {"name": "default", "resources": [{"name": r, "nominalQuota": 8} for r in covered]}]}]}}


QUEUED = {"kueue.x-k8s.io/queue-name": "team-a"}
ALL = ["cpu", "memory", "nvidia.com/gpu"]


def check(*objects: dict[str, Any], extra: tuple[dict[str, Any], ...] = (), charts: tuple[str, ...] = (),
          clusters: dict[str, str] | None = None) -> list[Finding]:
    documents = [RenderedObject(f"m{i}.yaml", obj, charts[i] if i < len(charts) else "")
                 for i, obj in enumerate(objects)]
    context = CheckContext(extra=tuple(RenderedObject("extra.yaml", obj) for obj in extra),
                           chart_clusters=clusters or {})
    return check_scheduling(documents, context)


def said(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in findings]


# --- the gang (mpi-operator #608) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 2, 64])
def test_608_arithmetic_under_wait_for_workers_ready(workers: int) -> None:
    """The launcher exists only once every worker runs: a gang of the workers starts, one more deadlocks, and so does
    no minAvailable at all (the operator then asks for workers + 1)."""
    assert check(mpijob(workers, min_available=workers)) == []
    assert check(mpijob(workers, min_available=max(workers - 1, 1))) == []
    for broken, where in ((workers + 1, ".spec.runPolicy.schedulingPolicy.minAvailable"),
                          (None, ".spec.runPolicy.schedulingPolicy")):
        (finding,) = check(mpijob(workers, min_available=broken))
        assert finding.path == where and finding.severity is Severity.ERROR
        assert "the job deadlocks (mpi-operator #608)" in finding.message
        assert finding.message.endswith(f"set minAvailable to {workers}")


@pytest.mark.parametrize("workers", [1, 2, 64])
@pytest.mark.parametrize("policy", ["AtStartup", None])
def test_608_arithmetic_at_startup(workers: int, policy: str | None) -> None:
    """The launcher is created at once (AtStartup, the operator's default): the gang may count it, not more."""
    assert check(mpijob(workers, policy, min_available=workers + 1)) == []
    assert check(mpijob(workers, policy, min_available=None)) == []
    (finding,) = check(mpijob(workers, policy, min_available=workers + 2))
    assert said([finding]) == [(".spec.runPolicy.schedulingPolicy.minAvailable",
                                f"minAvailable {workers + 2} is more than the job's {workers + 1} pods ({workers} "
                                "workers and the launcher): the gang never completes and no pod starts")]


def test_a_job_without_a_gang_is_not_judged() -> None:
    assert check(mpijob(2, gang=False)) == []


def test_a_min_available_that_is_no_integer_is_left_to_the_schema_check() -> None:
    assert check(mpijob(2, min_available="two")) == []


# --- Kueue --------------------------------------------------------------------------------------------------------


def test_a_queued_job_with_its_local_and_cluster_queue_is_clean() -> None:
    job = mpijob(2, gang=False, labels=QUEUED, suspend=True)
    assert check(job, local_queue(), cluster_queue(ALL)) == []
    assert check(job, extra=(local_queue(), cluster_queue(ALL))) == []  # --context


def test_a_queue_name_naming_no_local_queue_of_the_namespace() -> None:
    job = mpijob(2, gang=False, labels=QUEUED, suspend=True)
    for others in ([], [local_queue(namespace="team-b")], [local_queue(name="team-b")]):
        assert said(check(job, *others)) == [(
            '.metadata.labels["kueue.x-k8s.io/queue-name"]',
            "no LocalQueue team-a/team-a (named by kueue.x-k8s.io/queue-name) in this render or the extra manifests "
            "(--context); Kueue never admits the job")]


def test_a_cluster_queue_that_does_not_cover_a_requested_resource() -> None:
    job = mpijob(2, gang=False, labels=QUEUED, suspend=True)
    assert said(check(job, local_queue(), cluster_queue(["cpu", "memory"]))) == [(
        '.spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits["nvidia.com/gpu"]',
        "the worker requests nvidia.com/gpu, which ClusterQueue gpus (of LocalQueue team-a/team-a) does not cover; "
        "Kueue never admits the job")]


def test_a_kueue_job_created_running_is_warned_about() -> None:
    for suspend in (False, None):
        (finding,) = check(mpijob(2, gang=False, labels=QUEUED, suspend=suspend), local_queue(), cluster_queue(ALL))
        assert finding.severity is Severity.WARNING and finding.path == ".spec.runPolicy.suspend"
        assert "should be created suspended" in finding.message


def test_queues_of_another_compiled_cluster_do_not_count() -> None:
    """Two clusters with a namespace and queue of the same names: each job sees its own cluster's queues only."""
    job = mpijob(2, gang=False, labels=QUEUED, suspend=True)
    charts = ("a/jobs/train", "b/infra", "b/infra")
    clusters = {"a/jobs/train": "a", "b/infra": "b"}
    assert len(check(job, local_queue(), cluster_queue(ALL), charts=charts, clusters=clusters)) == 1
    clusters["b/infra"] = "a"
    assert check(job, local_queue(), cluster_queue(ALL), charts=charts, clusters=clusters) == []


def volcano_queue(name: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"capability": {"nvidia.com/gpu": 8}}}


def test_a_volcano_gang_names_a_queue_that_exists_or_volcanos_own() -> None:
    job = mpijob(2, min_available=2)
    job["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = "training"
    assert said(check(job)) == [(".spec.runPolicy.schedulingPolicy.queue",
                                 "no Volcano Queue training in this render or the extra manifests (--context); "
                                 "Volcano leaves the job's PodGroup pending")]
    assert check(job, volcano_queue("training")) == []
    assert check(job, extra=(volcano_queue("training"),)) == []
    job["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = "default"  # Volcano makes it itself
    assert check(job) == []


def test_kueue_priority_class_and_topology_level_must_exist() -> None:
    labels = {**QUEUED, "kueue.x-k8s.io/priority-class": "production"}
    job = mpijob(2, gang=False, labels=labels, suspend=True)
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    worker["metadata"] = {"annotations": {"kueue.x-k8s.io/podset-required-topology": "example.com/rack"}}
    queues = (local_queue(), cluster_queue(ALL))
    assert said(check(job, *queues)) == [
        ('.metadata.labels["kueue.x-k8s.io/priority-class"]',
         "no WorkloadPriorityClass production in this render or the extra manifests (--context)"),
        ('.spec.mpiReplicaSpecs.Worker.template.metadata.annotations["kueue.x-k8s.io/podset-required-topology"]',
         "no Kueue Topology in this render or the extra manifests (--context) has the level example.com/rack; "
         "Kueue never admits the job")]
    priority = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                "metadata": {"name": "production"}, "value": 1000}
    topology = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "t"},
                "spec": {"levels": [{"nodeLabel": "example.com/block"}, {"nodeLabel": "example.com/rack"}]}}
    assert check(job, *queues, priority, topology) == []
    # A slice level (Kueue v0.13.0 and later, #5596) is a level of the Topology too.
    worker["metadata"]["annotations"].update({"kueue.x-k8s.io/podset-slice-required-topology": "example.com/leaf",
                                              "kueue.x-k8s.io/podset-slice-size": "2"})
    assert said(check(job, *queues, priority, topology)) == [
        ('.spec.mpiReplicaSpecs.Worker.template.metadata.annotations["kueue.x-k8s.io/podset-slice-required-topology"]',
         "no Kueue Topology in this render or the extra manifests (--context) has the level example.com/leaf; "
         "Kueue never admits the job")]


def test_the_rule_is_in_the_rule_table_and_skips_what_it_cannot_read() -> None:
    broken = copy.deepcopy(mpijob(2, labels={"kueue.x-k8s.io/queue-name": 7}))
    broken["spec"]["mpiReplicaSpecs"]["Worker"] = "not a mapping"
    findings = run_rules([RenderedObject("m.yaml", broken)], CheckContext())
    assert not [f for f in findings if f.rule == "scheduling"]
    assert [f.rule for f in run_rules([RenderedObject("m.yaml", mpijob(2, min_available=3))], CheckContext())
            if f.rule == "scheduling"] == ["scheduling"]


# --- reserved priority class names --------------------------------------------------------------------------------


def priority_class(name: Any, value: int = 1000, api_version: str = "scheduling.k8s.io/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "PriorityClass", "metadata": {"name": name}, "value": value}


@pytest.mark.parametrize(("name", "value"), [("system-node-critical", 1000), ("system-node-critical", 2000001000),
                                             ("system-gpu", 100)])
def test_a_system_priority_class_is_refused(name: str, value: int) -> None:
    """The API server refuses a `system-` PriorityClass it does not know ("priority class names with 'system-'
    prefix are reserved for system use only"), and the built-in ones exist in every cluster already."""
    assert said(check(priority_class(name, value))) == [(".metadata.name", (
        f"PriorityClass {name}: Kubernetes keeps priority class names starting with `system-` for its built-in "
        "classes (system-cluster-critical and system-node-critical, which every cluster has and which rank above "
        "every workload): the API server refuses any other PriorityClass so named, and pods of a built-in class run "
        "above every workload and preempt it; name it otherwise"))]


@pytest.mark.parametrize("obj", [priority_class("training-high"), priority_class("systems"), priority_class(None),
                                 priority_class("system-x", api_version="kueue.x-k8s.io/v1beta2"),
                                 {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                                  "metadata": {"name": "system-x"}, "value": 1}])
def test_other_priority_classes_pass(obj: dict[str, Any]) -> None:
    assert check(obj) == []


SYSTEM_REASON = ("Kubernetes keeps priority class names starting with `system-` for its built-in classes "
                 "(system-cluster-critical and system-node-critical, which every cluster has and which rank above "
                 "every workload): the API server refuses any other PriorityClass so named, and pods of a built-in "
                 "class run above every workload and preempt it; give the job a priority class of its own")


def test_a_job_at_a_system_priority_class_is_refused() -> None:
    """The second review's case: a hand-written job's pods at system-cluster-critical rank above every workload. Every
    pod spec's priorityClassName, a Volcano Job's own and an MPIJob's gang priorityClass are judged."""
    job = mpijob(min_available=2)
    job["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"] = "system-node-critical"
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = "system-cluster-critical"
    job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["priorityClassName"] = "training-high"
    vcjob = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "v", "namespace": "a"},
             "spec": {"priorityClassName": "system-node-critical", "tasks": [
                 {"name": "w", "replicas": 1, "template": {"spec": {"priorityClassName": "system-x"}}}]}}
    assert said(check(job, vcjob)) == [
        (".spec.mpiReplicaSpecs.Worker.template.spec.priorityClassName",
         f"priorityClassName system-cluster-critical: {SYSTEM_REASON}"),
        (".spec.runPolicy.schedulingPolicy.priorityClass", f"priorityClass system-node-critical: {SYSTEM_REASON}"),
        (".spec.priorityClassName", f"priorityClassName system-node-critical: {SYSTEM_REASON}"),
        (".spec.tasks[0].template.spec.priorityClassName", f"priorityClassName system-x: {SYSTEM_REASON}")]


def test_a_system_priority_class_is_judged_in_a_job_chart_only() -> None:
    """A device plugin's DaemonSet runs at system-node-critical by design; the same workload in one of mpigen's job
    charts is a job's."""
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "plugin", "namespace": "kube-system"},
                 "spec": {"template": {"spec": {"priorityClassName": "system-node-critical", "containers": []}}}}
    assert check(daemonset) == []
    document = RenderedObject("c/templates/d.yaml", daemonset, "c")
    assert said(check_scheduling([document], CheckContext(job_charts=frozenset({"c"})))) == [
        (".spec.template.spec.priorityClassName", f"priorityClassName system-node-critical: {SYSTEM_REASON}")]
