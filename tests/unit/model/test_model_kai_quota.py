"""generator/model/kai_quota.py: a KAI Queue's numbers in KAI's units, and what KAI can never run.

A DGX-1 node (profiles/hardware/dgx-1.yaml): 2 sockets x 20 cores x 2 threads = 80 CPUs = 80000 millicores;
512 GiB = 549755813888 bytes = 549755 whole megabytes of 10^6 bytes; 8 GPUs.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from mpigen.model import KaiResource, admission, kai_quota

DGX1 = (("cpu", 80, ""), ("memory", 512, "Gi"), ("nvidia.com/gpu", 8, ""), ("rdma/rail0", 1000, ""))
NODE = {"cpu": 80000, "memory": 549755, "gpu": 8}


def decl(nodes: dict[str, int], borrow: dict[str, int] | None = None, cohort: str | None = None) -> admission.QueueDecl:
    return admission.QueueDecl("q", ("ns",), tuple(nodes.items()), tuple((borrow or {}).items()), cohort, None, ())


def test_a_node_offers_millicores_whole_megabytes_and_gpus_and_no_rail_devices():
    assert kai_quota.node_offer(DGX1, "nvidia.com/gpu") == NODE
    assert kai_quota.node_offer((("memory", 1, "Gi"),), None) == {"memory": 1073, "gpu": 0}  # 1.073741824 MB, down


def test_the_quota_is_the_nodes_times_the_node_and_the_limit_unlimited_without_borrowing():
    found = kai_quota.queue_resources(decl({"dgx": 6}), {"dgx": NODE})
    assert found == (KaiResource("cpu", 480000, -1), KaiResource("memory", 3298530, -1), KaiResource("gpu", 48, -1))
    assert not any(entry.limited for entry in found)


def test_the_limit_adds_the_nodes_the_queue_may_borrow_summed_over_pools():
    cpu_node = {"cpu": 32000, "memory": 137438, "gpu": 0}
    found = kai_quota.queue_resources(decl({"dgx": 6, "cpu": 2}, {"dgx": 2}), {"dgx": NODE, "cpu": cpu_node})
    assert found == (KaiResource("cpu", 6 * 80000 + 2 * 32000, 8 * 80000 + 2 * 32000),
                     KaiResource("memory", 6 * 549755 + 2 * 137438, 8 * 549755 + 2 * 137438),
                     KaiResource("gpu", 48, 64))


def test_a_parent_holds_its_childrens_quotas_without_a_limit():
    children = [kai_quota.queue_resources(decl({"dgx": n}, {"dgx": 1}), {"dgx": NODE}) for n in (6, 2)]
    assert kai_quota.parent_resources(children) == (KaiResource("cpu", 640000, -1),
                                                    KaiResource("memory", 4398040, -1), KaiResource("gpu", 64, -1))


def test_a_demand_in_kai_units_leaves_rail_devices_out():
    asked = {"cpu": Decimal("1.5"), "memory": Decimal(1), "nvidia.com/gpu": Decimal(8), "rdma/rail0": Decimal(4)}
    assert kai_quota.demand(asked, "nvidia.com/gpu") == {"cpu": Decimal(1500), "memory": Decimal("1073.741824"),
                                                         "gpu": Decimal(8)}


QUEUE = (KaiResource("cpu", 480000, 640000), KaiResource("memory", 3298530, -1), KaiResource("gpu", 48, 64))


@pytest.mark.parametrize(("gpus", "priority", "short"), [
    (64, 50, None),                                                   # preemptible: up to the limit
    (65, 50, kai_quota.KaiShortfall("gpu", Decimal(65), 64, False)),  # beyond it: never
    (48, 100, None),                                                  # non-preemptible: up to the quota
    (49, 100, kai_quota.KaiShortfall("gpu", Decimal(49), 48, True)),  # beyond it: never
    (49, 99, None),
])
def test_kai_never_runs_a_job_beyond_its_limit_nor_a_non_preemptible_one_beyond_its_quota(gpus, priority, short):
    assert kai_quota.shortfall(QUEUE, {"gpu": Decimal(gpus)}, priority) == short


def test_an_unlimited_resource_bounds_only_non_preemptible_jobs():
    assert kai_quota.shortfall(QUEUE, {"memory": Decimal(10**9)}, 50) is None
    assert kai_quota.shortfall(QUEUE, {"memory": Decimal(10**9)}, 125).bound == 3298530


def test_a_jobs_priority_is_its_declared_class_else_kais_own_else_train():
    assert kai_quota.priority_value("release-critical", {"release-critical": 150}) == 150
    assert kai_quota.priority_value("inference", {}) == 125
    assert kai_quota.priority_value("build", {}) == 100
    assert kai_quota.priority_value(None, {"release-critical": 150}) == 50


def test_a_kai_cluster_without_queues_gets_one_named_after_it_covering_every_pool():
    cluster = {"name": "lab", "namespaces": ["a", "b"], "scheduling": {"scheduler": "kai"},
               "nodePools": [{"name": "dgx", "nodes": 4}, {"name": "cpu", "nodes": 2}]}
    (queue,) = admission.queues(cluster)
    assert (queue.name, queue.namespaces, queue.nodes) == ("lab", ("a", "b"), (("dgx", 4), ("cpu", 2)))
