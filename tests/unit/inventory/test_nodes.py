"""Reading exported Nodes, and Kubernetes' own selector and toleration rules over them."""

from __future__ import annotations

from mpigen.inventory import read_node, selects, tolerates, untolerated
from mpigen.model.cluster import Taint

GPU_TAINT = Taint("nvidia.com/gpu", "NoSchedule", "present")


def node(**status: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "dgx1-01", "labels": {"nvidia.com/gpu.count": "8", "kubernetes.io/hostname": "dgx1-01"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            "status": status}


def test_a_node_reads_its_labels_taints_and_what_it_advertises() -> None:
    live = read_node(node(allocatable={"nvidia.com/gpu": "8", "memory": "512Gi"}, capacity={"nvidia.com/gpu": "8"}))
    assert live is not None and live.name == "dgx1-01"
    assert live.labels["nvidia.com/gpu.count"] == "8"
    assert live.taints == (GPU_TAINT,)
    assert live.offers("nvidia.com/gpu") == 8
    assert live.offers("nvidia.com/rdma_rail0") is None


def test_allocatable_wins_and_capacity_stands_in_only_where_there_is_no_allocatable() -> None:
    reserved = read_node(node(allocatable={"nvidia.com/gpu": "7"}, capacity={"nvidia.com/gpu": "8", "x.io/y": "1"}))
    assert reserved is not None and reserved.offers("nvidia.com/gpu") == 7
    assert reserved.offers("x.io/y") is None  # allocatable is the scheduler's count: it does not list x.io/y
    bare = read_node(node(capacity={"nvidia.com/gpu": "8"}))
    assert bare is not None and bare.offers("nvidia.com/gpu") == 8


def test_what_is_not_a_named_node_or_cannot_be_read_is_not_invented() -> None:
    assert read_node({"kind": "ConfigMap", "metadata": {"name": "x"}}) is None
    assert read_node({"kind": "Node", "metadata": {}}) is None
    odd = read_node({"kind": "Node", "metadata": {"name": "n", "labels": ["a"]}, "spec": {"taints": [{"key": "k"}]},
                     "status": {"allocatable": "8"}})
    assert odd is not None and (odd.labels, odd.taints, odd.offers("nvidia.com/gpu")) == ({}, (), None)


def test_a_selector_picks_a_node_only_when_every_label_is_equal() -> None:
    labels = {"a": "1", "b": "2"}
    assert selects({}, labels) and selects({"a": "1"}, labels) and selects({"a": "1", "b": "2"}, labels)
    assert not selects({"a": "2"}, labels) and not selects({"c": "1"}, labels)


def test_tolerations_follow_kubernetes_rules() -> None:
    assert tolerates({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}, GPU_TAINT)
    assert tolerates({"key": "nvidia.com/gpu", "value": "present"}, GPU_TAINT)  # Equal by default, any effect
    assert tolerates({"key": "nvidia.com/gpu", "operator": "Exists"}, GPU_TAINT)
    assert tolerates({"operator": "Exists"}, GPU_TAINT)  # an empty key with Exists tolerates everything
    assert not tolerates({"key": "nvidia.com/gpu", "value": "absent"}, GPU_TAINT)
    assert not tolerates({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, GPU_TAINT)
    assert not tolerates({"key": "other", "operator": "Exists"}, GPU_TAINT)
    assert not tolerates({"value": "present"}, GPU_TAINT)  # no key needs Exists


def test_only_taints_that_keep_pods_off_are_untolerated() -> None:
    soft = Taint("team", "PreferNoSchedule", "a")
    hard = Taint("maintenance", "NoExecute")
    assert untolerated([], [GPU_TAINT, soft, hard]) == [GPU_TAINT, hard]
    assert untolerated([{"key": "nvidia.com/gpu", "operator": "Exists"}], [GPU_TAINT, hard]) == [hard]


def test_a_cordoned_or_failing_node_says_so_and_its_state_taints_are_kept_apart() -> None:
    cordoned = node(conditions=[{"type": "Ready", "status": "True"}])
    cordoned["spec"] = {"unschedulable": True, "taints": [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-11-26T10:00:00Z"}]}
    live = read_node(cordoned)
    assert live is not None and (live.cordoned, live.ready, live.state) == (True, True, "cordoned")
    assert live.placement_taints == (GPU_TAINT,) and len(live.taints) == 2
    for status, state in (("False", "not ready"), ("Unknown", "not ready"), ("True", "")):
        judged = read_node(node(conditions=[{"type": "MemoryPressure", "status": "False"},
                                            {"type": "Ready", "status": status}]))
        assert judged is not None and judged.state == state
    unreported = read_node(node(conditions="odd"))
    assert unreported is not None and unreported.state == ""  # nothing in the export says it is down
    pressed = node()
    pressed["spec"] = {"taints": [{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}]}
    live = read_node(pressed)
    assert live is not None and (live.state, live.placement_taints) == ("tainted node.kubernetes.io/disk-pressure", ())


def test_gpus_cut_up_by_mig_or_sharing_are_told_from_whole_ones() -> None:
    def labelled(labels: dict[str, str], offers: dict[str, str] | None = None) -> str:
        exported = node(allocatable=offers or {"nvidia.com/gpu": "8"})
        exported["metadata"]["labels"].update(labels)  # type: ignore[index]
        live = read_node(exported)
        assert live is not None
        return live.gpus_partitioned

    assert labelled({}) == ""
    assert labelled({"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "A100-SXM4-40GB"}) == ""
    assert labelled({"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb"}) \
        == "MIG: nvidia.com/mig.strategy=single"
    assert labelled({"nvidia.com/mig.strategy": "mixed"}) == ""
    assert labelled({"nvidia.com/mig.strategy": "mixed"}, {"nvidia.com/mig-3g.20gb": "2"}) \
        == "MIG: nvidia.com/mig.strategy=mixed"
    assert (labelled({"nvidia.com/gpu.replicas": "1"}), labelled({"nvidia.com/gpu.replicas": "4"})) \
        == ("", "shared: nvidia.com/gpu.replicas=4")
