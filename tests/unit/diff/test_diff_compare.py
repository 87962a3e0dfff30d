"""generator/diff/compare.py and objects.py: objects compared only within their own cluster and chart."""

from __future__ import annotations

import pytest

from mpigen.diff.compare import compare
from mpigen.diff.objects import ADDED, CHANGED, REMOVED, REPLACED, diff_objects, diff_text, keyed
from mpigen.diff.sides import Unit


def _side(*units: Unit) -> dict[tuple[str, str], Unit]:
    return {unit.key: unit for unit in units}


def _infra(cluster: str, *objects: dict) -> Unit:
    return Unit(cluster, f"{cluster}/infra", objects=objects)


SRIOVDP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sriovdp-config", "namespace": "kube-system"},
           "data": {"config.json": '{"resourceList": [{"resourceName": "rdma_rail0"}]}'}}
RENAMED_RAIL = {**SRIOVDP, "data": {"config.json": '{"resourceList": [{"resourceName": "rdma_fabric0"}]}'}}
# The objects several clusters hold under one name: cluster-scoped ones, and a namespace they share.
SHARED = [
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "training"},
     "spec": {"cohort": "a"}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "production"}, "value": 1000},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "default"},
     "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "training"},
     "spec": {"weight": 1}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml-training", "labels": {"a": "b"}}},
    SRIOVDP,
]


def _edited(obj: dict) -> dict:
    return {**obj, "edited": True}


@pytest.mark.parametrize("shared", SHARED, ids=lambda o: o["kind"])
@pytest.mark.parametrize("edited", ["east", "lab", "west"])
def test_an_object_several_clusters_hold_by_one_name_changes_on_its_own_cluster_only(shared, edited):
    clusters = ("east", "lab", "west")
    old = _side(*(_infra(c, shared) for c in clusters))
    new = _side(*(_infra(c, _edited(shared) if c == edited else shared) for c in clusters))
    changed = compare(old, new)
    assert [(u.cluster, u.path, [c.status for c in u.changes]) for u in changed] == [
        (edited, f"{edited}/infra", [CHANGED])]
    assert "+edited: true\n" in changed[0].changes[0].diff


def test_a_renamed_rail_changes_the_device_plugin_config_of_its_cluster_beside_identical_copies():
    old = _side(*(_infra(c, SRIOVDP) for c in ("east", "lab", "west")))
    new = _side(_infra("east", RENAMED_RAIL), _infra("lab", SRIOVDP), _infra("west", SRIOVDP))
    assert [(u.cluster, u.changes[0].key) for u in compare(old, new)] == [
        ("east", "v1 ConfigMap kube-system/sriovdp-config")]


def _job(name: str, release: str, namespace: str = "ml") -> dict:
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/instance": release}}}


def test_a_rename_pairs_within_one_chart_only():
    """Two clusters' job charts of the same release name: one loses its run, the other gains one. Not a rename."""
    old = _side(Unit("east", "east/jobs/bert", objects=(_job("bert-aaaaaaa", "bert"),)), Unit("west", "west/jobs/bert"))
    new = _side(Unit("east", "east/jobs/bert"), Unit("west", "west/jobs/bert", objects=(_job("bert-bbbbbbb", "bert"),)))
    assert [(u.cluster, [c.status for c in u.changes]) for u in compare(old, new)] == [
        ("east", [REMOVED]), ("west", [ADDED])]
    old = _side(Unit("east", "east/jobs/bert", objects=(_job("bert-aaaaaaa", "bert"),)))
    new = _side(Unit("east", "east/jobs/bert", objects=(_job("bert-bbbbbbb", "bert"),)))
    assert [c.status for c in compare(old, new)[0].changes] == [REPLACED]


def test_a_chart_of_one_side_only_is_all_added_or_all_removed():
    new = _side(_infra("east", SRIOVDP, SHARED[0]))
    assert [c.status for c in compare({}, new)[0].changes] == [ADDED, ADDED]
    assert [c.status for c in compare(new, {})[0].changes] == [REMOVED, REMOVED]
    assert compare(new, new) == []


def test_a_bootstrap_file_that_is_not_read_as_objects_is_compared_as_text():
    lua = "return hs\n"
    old = _side(Unit("west", "west/bootstrap/argocd/mpijob-health.lua", bootstrap=True, objects=None, text=lua))
    new = _side(Unit("west", "west/bootstrap/argocd/mpijob-health.lua", bootstrap=True, objects=None,
                     text="hs = {}\n" + lua))
    (unit,) = compare(old, new)
    assert unit.bootstrap and [(c.key, c.status) for c in unit.changes] == [
        ("west/bootstrap/argocd/mpijob-health.lua", CHANGED)]
    assert "+hs = {}\n" in unit.changes[0].diff
    # One side a manifest that does not parse: both compared as text.
    broken = Unit("west", "west/bootstrap/root/r.yaml", bootstrap=True, objects=None, text="kind: [\n")
    good = Unit("west", "west/bootstrap/root/r.yaml", bootstrap=True, objects=(SRIOVDP,), text="kind: ConfigMap\n")
    assert [c.status for c in compare(_side(broken), _side(good))[0].changes] == [CHANGED]
    assert [c.status for c in compare({}, _side(broken))[0].changes] == [ADDED]


def test_diff_text_says_added_removed_or_changed_and_nothing_when_equal():
    assert diff_text("f", None, "a\n").status == ADDED
    assert diff_text("f", "a\n", None).status == REMOVED
    assert diff_text("f", "a\n", "b\n").status == CHANGED
    assert diff_text("f", "a\n", "a\n") is None


def test_an_object_held_twice_is_named_and_the_later_one_compared():
    later = _edited(SRIOVDP)
    by_key, twice = keyed([SRIOVDP, later, SHARED[0]])
    assert twice == ["v1 ConfigMap kube-system/sriovdp-config"] and by_key[twice[0]] is later
    assert diff_objects([SRIOVDP, later], [later]) == []
