"""`check --context` with Nodes, for what no profile describes: hand-written pods and NADs judged against the live
nodes, each finding at the line of the chart or manifest that asks what the nodes do not give. (The profiles of
compiled charts: tests/acceptance/test_drift.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from mpigen.check.report import CheckReport
from mpigen.check.run import CheckOptions, run_check

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def node(name: str, labels: dict[str, str], offers: dict[str, str],
         taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints or []}, "status": {"allocatable": offers, "capacity": offers}}


NODES = [node(f"gpu-{i}", {"pool": "gpu"}, {"nvidia.com/gpu": "8", "nvidia.com/rdma_rail0": "8"}, [GPU_TAINT])
         for i in (1, 2)]


def workload(replicas: int = 2, selector: dict[str, str] | None = None, tolerations: list[dict[str, str]] | None = None,
             limits: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "trainer", "namespace": "ml"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "t"}}, "template": {
                "metadata": {"labels": {"app": "t"}},
                "spec": {"nodeSelector": selector if selector is not None else {"pool": "gpu"},
                         "tolerations": tolerations if tolerations is not None else [GPU_TAINT],
                         "containers": [{"name": "main", "image": "busybox:1.36", "resources": {
                             "limits": limits if limits is not None else {"nvidia.com/gpu": "8",
                                                                          "nvidia.com/rdma_rail0": "1"}}}]}}}}


def nad(name: str, resource: str) -> dict[str, Any]:
    return {"apiVersion": "k8s.cni.cncf.io/v1", "kind": "NetworkAttachmentDefinition",
            "metadata": {"name": name, "namespace": "ml", "annotations": {"k8s.v1.cni.cncf.io/resourceName": resource}},
            "spec": {"config": json.dumps({"cniVersion": "0.3.1", "name": name, "type": "sriov"})}}


def checked(tmp_path: Path, *objects: dict[str, Any], context: list[dict[str, Any]] | None = None,
            nodes: list[dict[str, Any]] | None = None) -> CheckReport:
    (tmp_path / "app.yaml").write_text(yaml.safe_dump_all(objects), encoding="utf-8")
    (tmp_path / "export.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        *(NODES if nodes is None else nodes), *(context or [])]}), encoding="utf-8")
    return run_check([tmp_path / "app.yaml"], CheckOptions(use_helm=False, context=(tmp_path / "export.yaml",)))


def drift(report: CheckReport) -> list[tuple[str, str, int]]:
    return [(f.path, f.message, report.places.get(f, (0, 0))[0]) for f in report.findings if f.rule == "drift"]


def test_pods_the_nodes_take_give_no_finding(tmp_path: Path) -> None:
    assert drift(checked(tmp_path, workload())) == []


def test_a_resource_no_node_advertises_is_found_at_the_request(tmp_path: Path) -> None:
    [(path, message, line)] = drift(checked(tmp_path, workload(limits={"nvidia.com/mlx5_rail0": "1"})))
    assert path == '.spec.template.spec.containers[0].resources.limits["nvidia.com/mlx5_rail0"]'
    assert "nvidia.com/mlx5_rail0, which none of the live nodes it may run on (gpu-1, gpu-2) advertises" in message
    text = (tmp_path / "app.yaml").read_text(encoding="utf-8").splitlines()
    assert "nvidia.com/mlx5_rail0" in text[line - 1]


def test_a_selector_no_node_matches_and_a_taint_not_tolerated_are_found(tmp_path: Path) -> None:
    [(path, message, _)] = drift(checked(tmp_path, workload(selector={"pool": "gpus"})))
    assert path == ".spec.template.spec.nodeSelector" and "pool=gpus" in message
    [(path, message, _)] = drift(checked(tmp_path, workload(tolerations=[{"key": "other", "operator": "Exists"}])))
    assert path == ".spec.template.spec.tolerations" and "nvidia.com/gpu:NoSchedule" in message


def test_a_cordoned_node_is_not_judged_for_the_taint_kubernetes_puts_on_it(tmp_path: Path) -> None:
    cordoned = node("gpu-1", {"pool": "gpu"}, {"nvidia.com/gpu": "8", "nvidia.com/rdma_rail0": "8"},
                    [GPU_TAINT, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])
    assert drift(checked(tmp_path, workload(replicas=1), nodes=[cordoned])) == []


def test_affinity_is_judged_as_the_scheduler_does_whatever_its_operands(tmp_path: Path) -> None:
    """An odd Gt operand admits no node (it was a traceback); a term naming the node by matchFields admits it."""
    def affinity(*terms: dict[str, Any]) -> dict[str, Any]:
        pod = workload(replicas=1)
        pod["spec"]["template"]["spec"]["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}
        return pod

    counted = [node(f"gpu-{i}", {"pool": "gpu", "gpus": "8"}, {"nvidia.com/gpu": "8", "nvidia.com/rdma_rail0": "8"},
                    [GPU_TAINT]) for i in (1, 2)]
    odd = {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["--1"]}]}
    [(path, message, _)] = drift(checked(tmp_path, affinity(odd), nodes=counted))
    assert path == ".spec.template.spec.nodeSelector" and "and required node affinity" in message
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-2"]}]}
    assert drift(checked(tmp_path, affinity({}, by_name))) == []
    assert len(drift(checked(tmp_path, affinity({})))) == 1  # an empty term admits no node


def test_pods_of_a_cluster_not_exported_are_not_judged_against_another_clusters_nodes(tmp_path: Path) -> None:
    """Manifests of two clusters, the nodes of one exported (kubectl's current context), said to be of neither:
    the other cluster's pods select labels no exported node nearly carries, and are not judged; a pod one label off
    the nodes is still found."""
    for cluster, selector in (("gpu-lab", {"pool": "gpu"}), ("cpu-lab", {"pool": "cpu", "zone": "b"})):
        (tmp_path / cluster).mkdir()
        (tmp_path / cluster / "app.yaml").write_text(yaml.safe_dump(workload(selector=selector, limits={})),
                                                     encoding="utf-8")
    (tmp_path / "export.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": NODES}),
                                          encoding="utf-8")
    clusters = (("gpu-lab", tmp_path / "gpu-lab"), ("cpu-lab", tmp_path / "cpu-lab"))
    options = CheckOptions(use_helm=False, context=(tmp_path / "export.yaml",), clusters=clusters)
    assert drift(run_check([tmp_path / "gpu-lab", tmp_path / "cpu-lab"], options)) == []
    (tmp_path / "gpu-lab" / "app.yaml").write_text(yaml.safe_dump(workload(selector={"pool": "gpus"})), encoding="utf-8")
    [(path, message, _)] = drift(run_check([tmp_path / "gpu-lab", tmp_path / "cpu-lab"], options))
    assert path == ".spec.template.spec.nodeSelector" and "pool=gpus" in message


def test_more_replicas_than_the_nodes_hold_are_found(tmp_path: Path) -> None:
    [(path, message, _)] = drift(checked(tmp_path, workload(replicas=3)))
    assert path == ".spec.template" and message.startswith("3 pods asking") and "fit 2 at once" in message


def test_a_live_nad_needs_a_resource_some_node_advertises_and_one_cause_is_one_finding(tmp_path: Path) -> None:
    found = drift(checked(tmp_path, workload(), context=[nad("rail0", "nvidia.com/rdma_rail0"),
                                                         nad("old", "nvidia.com/gone")]))
    assert [(path, message.split(",")[0]) for path, message, _ in found] == [
        ('.metadata.annotations["k8s.v1.cni.cncf.io/resourceName"]', "the network needs nvidia.com/gone")]
    renamed = drift(checked(tmp_path, workload(limits={"nvidia.com/gone": "1"}), context=[nad("old", "nvidia.com/gone")]))
    assert len(renamed) == 1 and "the pod requests nvidia.com/gone" in renamed[0][1]


def test_without_nodes_in_the_context_nothing_is_judged_against_them(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(yaml.safe_dump(workload(limits={"nvidia.com/gone": "1"})), encoding="utf-8")
    report = run_check([tmp_path / "app.yaml"], CheckOptions(use_helm=False))
    assert drift(report) == []
