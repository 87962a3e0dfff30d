"""`plan --context`: each pool's nodes counted on the live ones that hold its workers, with why they differ from the
profile's claim (the drift fleet of tests/fixtures/drift/ against the cluster fixtures)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mpigen.commands.pipeline import CompileResult, check_profiles
from mpigen.insight.live import LivePool, live_pools
from mpigen.insight.plan import STARTS, plan_fleet
from mpigen.inventory import LiveNode
from mpigen.inventory.exports import exported_nodes
from mpigen.model import Fleet
from mpigen.model.cluster import Taint

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@pytest.fixture(scope="module")
def profiles() -> CompileResult:
    return check_profiles([FIXTURES / "drift" / "profiles"])


@pytest.fixture(scope="module")
def fleet(profiles: CompileResult) -> Fleet:
    assert profiles.fleet is not None
    return profiles.fleet


@pytest.fixture(scope="module")
def nodes() -> list[LiveNode]:
    found, problems = exported_nodes([FIXTURES / "clusters"])
    assert problems == []
    return found


def test_the_fixtures_hold_what_the_pools_claim(fleet: Fleet, nodes: list[LiveNode]) -> None:
    for cluster in fleet.clusters:
        assert live_pools(cluster, fleet.jobs_of(cluster), nodes) == {
            pool.name: LivePool(pool.nodes) for pool in cluster.pools}


def test_nodes_a_pool_cannot_use_are_not_counted_and_say_why(fleet: Fleet, nodes: list[LiveNode]) -> None:
    maintenance = Taint("example.com/maintenance", "NoSchedule", "true")
    changed = []
    for node in nodes:
        if node.name.startswith("dgxa100"):
            node = LiveNode(node.name, node.labels, (*node.taints, maintenance), node.allocatable, node.capacity)
        elif node.name == "dgx1-02":
            node = LiveNode(node.name, node.labels, node.taints,
                            {k: v for k, v in node.allocatable.items() if k != "nvidia.com/rdma_rail0"}, node.capacity)
        changed.append(node)
    [sriov] = [cluster for cluster in fleet.clusters if cluster.name == "fixture-sriov"]
    live = live_pools(sriov, fleet.jobs_of(sriov), changed)
    assert (live["dgxa100"].nodes, live["dgx1"].nodes, live["cpu"]) == (0, 1, LivePool(4))
    assert live["dgxa100"].reason.endswith("dgxa100-01, dgxa100-02 carry taints the pool does not declare")
    assert live["dgx1"].reason.endswith("dgx1-02 lacks nvidia.com/rdma_rail0 (asks 1, offers 0)")


def test_nodes_that_take_no_pods_now_are_not_counted_and_say_why(fleet: Fleet, nodes: list[LiveNode]) -> None:
    """A cordoned node (and the taint Kubernetes puts on it) and a not-ready one are not the pool's capacity now,
    and the reason names their state, not a taint the pool should declare."""
    cordon = Taint("node.kubernetes.io/unschedulable", "NoSchedule")
    changed = [replace(node, taints=(*node.taints, cordon), cordoned=True) if node.name == "dgx1-01"
               else replace(node, ready=False) if node.name == "dgxa100-02" else node for node in nodes]
    [sriov] = [cluster for cluster in fleet.clusters if cluster.name == "fixture-sriov"]
    live = live_pools(sriov, fleet.jobs_of(sriov), changed)
    assert (live["dgx1"].nodes, live["dgxa100"].nodes) == (1, 1)
    assert live["dgx1"].reason.endswith("picks 2: dgx1-01, dgx1-02; dgx1-01 cordoned")
    assert live["dgxa100"].reason.endswith("; dgxa100-02 not ready")


def test_a_cluster_none_of_whose_pools_picks_an_exported_node_is_not_counted(profiles: CompileResult,
                                                                             nodes: list[LiveNode]) -> None:
    """An export is of one cluster: the other cluster's pools keep their claims, and its job still starts."""
    assert profiles.fleet is not None
    sriov_only = [node for node in nodes if not node.name.startswith("dgxh100")]
    planned = {cluster.name: cluster for cluster in plan_fleet(profiles.fleet, profiles.documents,
                                                               nodes=sriov_only).clusters}
    assert [pool.live_nodes for pool in planned["fixture-rdma"].pools] == [None]
    assert [job.state for pool in planned["fixture-rdma"].pools for job in pool.jobs] == [STARTS]
    assert {pool.name: pool.live_nodes for pool in planned["fixture-sriov"].pools} == {"dgx1": 2, "dgxa100": 2, "cpu": 4}
