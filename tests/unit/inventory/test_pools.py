"""Which live nodes a pool's selector picks, the label that keeps the others out, and how many workers they hold."""

from __future__ import annotations

from mpigen.inventory import LiveNode
from mpigen.inventory.pools import (
    affinity_selects,
    extended_ask,
    keeping_out,
    live_nodes,
    picked,
    short_of,
    workers_held,
)
from mpigen.model.cluster import Taint

GPU_TAINT = Taint("nvidia.com/gpu", "NoSchedule", "present")
TOLERATED = [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]
DGX1 = {"node.kubernetes.io/instance-type": "dgx-1", "nvidia.com/gpu.product": "Tesla-V100-SXM2-16GB"}


def live(name: str, labels: dict[str, str], offers: dict[str, str] | None = None,
         taints: tuple[Taint, ...] = ()) -> LiveNode:
    return LiveNode(name, {"kubernetes.io/hostname": name, **labels}, taints, offers or {})


def test_nodes_are_read_once_each_from_the_objects_exported() -> None:
    node = {"kind": "Node", "metadata": {"name": "a"}}
    found = live_nodes([(node, "one.yaml"), ({"kind": "ConfigMap"}, "one.yaml"), (node, "two.yaml")])
    assert [(n.name, n.source) for n in found] == [("a", "one.yaml")]


def test_a_selector_picks_the_nodes_that_carry_all_its_labels() -> None:
    nodes = [live("a", DGX1), live("b", {**DGX1, "nvidia.com/gpu.product": "other"}), live("c", {})]
    assert [n.name for n in picked(DGX1, nodes)] == ["a"]
    assert [n.name for n in picked({}, nodes)] == ["a", "b", "c"]


def test_the_one_label_that_keeps_nodes_out_is_named() -> None:
    unlabelled = {k: v for k, v in DGX1.items() if k != "node.kubernetes.io/instance-type"}
    assert keeping_out(DGX1, [live("a", unlabelled), live("b", unlabelled)]) == \
        ("node.kubernetes.io/instance-type", "dgx-1")
    other_gpu = {**DGX1, "nvidia.com/gpu.product": "Tesla-V100-SXM2-32GB"}
    assert keeping_out(DGX1, [live("a", DGX1), live("b", other_gpu)]) == ("nvidia.com/gpu.product", DGX1[
        "nvidia.com/gpu.product"])
    cpu = {"node.kubernetes.io/instance-type": "cpu-2s64c"}
    assert keeping_out(cpu, [live("a", {})]) == ("node.kubernetes.io/instance-type", "cpu-2s64c")


def test_no_label_is_blamed_where_the_nodes_are_simply_not_there() -> None:
    assert keeping_out(DGX1, [live("a", DGX1)]) is None  # one node picked, the other gone
    cpu = {"node.kubernetes.io/instance-type": "cpu-2s64c"}
    assert keeping_out(cpu, [live("a", cpu), live("gpu", DGX1)]) is None  # one label: no near miss to go by
    assert keeping_out(DGX1, [live("cpu", {"node.kubernetes.io/instance-type": "cpu"})]) is None  # two labels missing


def test_workers_held_counts_what_a_node_offers_and_its_taints() -> None:
    node = live("a", DGX1, {"nvidia.com/gpu": "8", "nvidia.com/rdma_rail0": "8"}, (GPU_TAINT,))
    ask = {"nvidia.com/gpu": 4, "nvidia.com/rdma_rail0": 1}
    assert workers_held(node, ask, TOLERATED, most=8) == 2
    assert workers_held(node, ask, TOLERATED, most=1) == 1
    assert workers_held(node, ask, [], most=8) == 0  # the taint is not tolerated
    assert workers_held(node, {"nvidia.com/gpu": 8, "nvidia.com/mlx5_rail0": 1}, TOLERATED, most=1) == 0
    assert short_of(node, {"nvidia.com/gpu": 16, "nvidia.com/rdma_rail0": 1}) == ["nvidia.com/gpu (asks 16, offers 8)"]


def test_required_node_affinity_is_matched_as_the_scheduler_does() -> None:
    node = live("n1", {"zone": "a", "gpus": "8"})

    def required(*expressions: dict[str, object]) -> dict[str, object]:
        return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": list(expressions)}]}}

    assert affinity_selects(None, node)
    assert affinity_selects(required({"key": "zone", "operator": "In", "values": ["a", "b"]}), node)
    assert not affinity_selects(required({"key": "zone", "operator": "NotIn", "values": ["a"]}), node)
    assert affinity_selects(required({"key": "gpus", "operator": "Gt", "values": ["4"]},
                                     {"key": "rack", "operator": "DoesNotExist"}), node)
    assert not affinity_selects(required({"key": "rack", "operator": "Exists"}), node)
    assert not affinity_selects(required({"key": "gpus", "operator": "Lt", "values": ["x"]}), node)
    assert affinity_selects(required({"key": "gpus", "operator": "Lt", "values": ["+9"]}), node)


def test_odd_integers_in_gt_and_lt_are_no_match_rather_than_an_error() -> None:
    """Go's ParseInt takes neither `--1` nor `²` nor `1_0` (Python's int() takes or trips on them)."""
    for bound, label in (("--1", "5"), ("²", "5"), ("1_0", "50"), (" 1", "5"), ("4", "--1"), ("4", "²")):
        term = {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": [bound]}]}
        assert not affinity_selects({"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}},
                                    live("n1", {"gpus": label})), (bound, label)


def test_an_empty_term_admits_no_node_and_match_fields_name_the_node() -> None:
    """Kubernetes' NodeSelectorTerm: "a null or empty node selector term matches no objects"; terms are ORed; the
    one field matchFields names is `metadata.name`."""
    node = live("n1", {"zone": "a"})

    def terms(*given: object) -> dict[str, object]:
        return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(given)}}

    assert not affinity_selects(terms({}), node)
    assert not affinity_selects(terms({"matchExpressions": []}), node)
    assert affinity_selects(terms({}, {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}), node)
    by_name = {"key": "metadata.name", "operator": "In", "values": ["n1"]}
    assert affinity_selects(terms({"matchFields": [by_name]}), node)
    assert not affinity_selects(terms({"matchFields": [{**by_name, "values": ["n2"]}]}), node)
    assert not affinity_selects(terms({"matchFields": [{**by_name, "values": ["n2"]}],
                                       "matchExpressions": [{"key": "zone", "operator": "Exists"}]}), node)


def test_a_worker_under_dra_asks_no_extended_resource_for_the_devices_it_claims(example) -> None:
    """llm-pretrain (h100-dra, dranet): its claim holds its 8 GPUs and 8 NICs; the pod asks for neither, and a live
    node under NVIDIA's DRA driver offers no nvidia.com/gpu."""
    job = next(j for j in example.fleet.jobs if j.name == "llm-pretrain")
    assert job.devices is not None and extended_ask(job) == {}
    resnet = next(j for j in example.fleet.jobs if j.name == "resnet50-dgx")
    assert extended_ask(resnet)["nvidia.com/gpu"] == 8  # device plugins: asked for
