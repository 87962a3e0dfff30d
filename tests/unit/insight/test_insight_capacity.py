"""Plan's placement (generator/insight/capacity.py `_Nodes`): first fit over runs of identical nodes gives exactly the
placement of the straightforward first fit (`FirstFitReference` in conftest), and stays a few runs however many nodes
and workers there are."""

from __future__ import annotations

from decimal import Decimal

from conftest import FirstFitReference
from hypothesis import given, settings
from hypothesis import strategies as st

from mpigen.insight import capacity
from mpigen.insight.capacity import Amounts

RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
# Whole and fractional amounts, the millicore, and one past the default context's 28 digits (exact here).
AMOUNTS = st.one_of(st.integers(0, 9).map(Decimal),
                    st.sampled_from([Decimal("0.5"), Decimal("0.25"), Decimal("1.5"), Decimal("0.001"),
                                     Decimal("2.9999999999999999999999999999"), Decimal("0.1000000000000000000000000001")]))
OFFERS = st.dictionaries(st.sampled_from(RESOURCES), st.one_of(st.integers(0, 24).map(Decimal), AMOUNTS), max_size=3)
# An ask may name a resource twice, ask for 0 of it, or ask for one the nodes do not offer.
ASKS = st.lists(st.tuples(st.sampled_from((*RESOURCES, "openshift.io/rdma_rail0")), AMOUNTS), max_size=4).map(tuple)
JOBS = st.lists(st.tuples(ASKS, st.integers(0, 14), st.integers(0, 5)), min_size=1, max_size=8)


def free_of_each_node(nodes: capacity._Nodes) -> list[dict[str, Decimal]]:
    return [run.free for run in nodes.runs for _ in range(run.count)]


def same_free(a: dict[str, Decimal], b: dict[str, Decimal]) -> bool:
    return all(a.get(name, Decimal(0)) == b.get(name, Decimal(0)) for name in {*a, *b})


@settings(max_examples=400, derandomize=True, deadline=None, database=None)
@given(offer=OFFERS, count=st.integers(0, 12), jobs=JOBS)
def test_placement_is_the_straightforward_first_fit(offer, count, jobs):
    amounts = Amounts(tuple(offer.items()))
    fast, reference = capacity._Nodes(amounts, count), FirstFitReference(amounts, count)
    for ask, workers, per_node in jobs:
        assert fast.place_workers(ask, workers, per_node) == reference.place_workers(ask, workers, per_node)
    assert sum(run.count for run in fast.runs) == count
    assert all(same_free(a, b) for a, b in zip(free_of_each_node(fast), reference.free, strict=True))


def test_a_gang_that_does_not_fit_takes_nothing():
    nodes = capacity._Nodes(Amounts((("cpu", Decimal(4)),)), 3)
    assert nodes.place_workers((("cpu", Decimal(3)),), 2, 1) == (0, 1)
    assert nodes.place_workers((("cpu", Decimal(2)),), 3, 2) is None, "one node has room for 2, the others for 0"
    assert [run.free["cpu"] for run in nodes.runs] == [1, 4] and [run.count for run in nodes.runs] == [2, 1]
    assert nodes.place_workers((("cpu", Decimal(1)),), 4, 4) == (0, 1, 2, 2)


def test_a_job_of_one_node_workers_on_an_idle_pool_leaves_two_runs():
    # 5,000 one-node workers on 5,000 nodes: one division, not a scan of the nodes per worker.
    nodes = capacity._Nodes(Amounts((("cpu", Decimal(128)), ("memory", Decimal(256)))), 5_000)
    placed = nodes.place_workers((("cpu", Decimal(100)), ("memory", Decimal(1))), 4_999, 1)
    assert placed == tuple(range(4_999))
    assert [(run.count, run.free["cpu"]) for run in nodes.runs] == [(4_999, 28), (1, 128)]
    assert nodes.place_workers((("cpu", Decimal(100)),), 2, 1) is None
    assert nodes.place_workers((("cpu", Decimal(28)),), 5_000, 1) == tuple(range(5_000))
    assert [(run.count, run.free["cpu"]) for run in nodes.runs] == [(4_999, 0), (1, 100)]


def test_workers_fill_a_node_before_the_next_up_to_their_layout():
    nodes = capacity._Nodes(Amounts((("cpu", Decimal(10)),)), 4)
    assert nodes.place_workers((("cpu", Decimal(3)),), 7, 2) == (0, 0, 1, 1, 2, 2, 3)
    assert nodes.place_workers((("cpu", Decimal(1)),), 5, 5) == (0, 0, 0, 0, 1)
