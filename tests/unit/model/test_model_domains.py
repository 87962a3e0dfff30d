"""generator/model/domains.py: domain sizes, the fit of a job's workers, and its podset slices, by hand-worked numbers.

Kueue facts (kubernetes-sigs/kueue): the slice annotations `kueue.x-k8s.io/podset-slice-required-topology` and
`kueue.x-k8s.io/podset-slice-size` came with v0.13.0 ("Add PodSet Slice API", #5596; apis/kueue/v1alpha1 and later
v1beta2/topology_types.go). At v0.13.0 and HEAD, pkg/controller/jobframework/tas_validation.go refuses a slice level
without a size, a size without a level, a size below 1, a size above the pod count
(ValidateSliceSizeAnnotationUpperBound) and `podset-group-name` beside either; pkg/cache/scheduler/
tas_flavor_snapshot.go refuses a slice level above the podset's ("podset slice topology %s is above the podset
topology %s"). GB200 NVL72: 72 GPUs in one NVLink domain, 18 trays of 4; GFD labels each node's NVLink domain
`nvidia.com/gpu.clique` (tests/upstream/inventory/gpu-feature-discovery_README.md, its labels table).
"""

from __future__ import annotations

import pytest

from mpigen.model import TopologyLevel, domains

NVL72 = (TopologyLevel("block", "fabric.example.com/block", 36), TopologyLevel("rack", "nvidia.com/gpu.clique"),
         TopologyLevel("host", "kubernetes.io/hostname"))
BLOCKS = (TopologyLevel("spine", "fabric.example.com/spine", 32), TopologyLevel("block", "fabric.example.com/block", 8),
          TopologyLevel("host", "kubernetes.io/hostname"))


def test_the_domain_sizes_say_where_each_came_from():
    sizes = domains.domain_sizes(NVL72, gpus_per_node=4, nvlink_domain_gpus=72)
    assert [(s.level, s.nodes, s.origin) for s in sizes] == [("block", 36, domains.PROFILE), ("rack", 18, domains.NVLINK),
                                                              ("host", 1, domains.HOST)]
    assert sizes[1].said() == "one NVLink domain (gpu.nvlinkDomainGpus 72 / 4 GPUs a node)"
    unknown = domains.domain_sizes(NVL72, gpus_per_node=8, nvlink_domain_gpus=None)[1]
    assert (unknown.nodes, unknown.origin) == (None, domains.UNKNOWN)


def test_a_36_tray_job_on_nvl72_gets_two_slices_of_18_on_the_clique_level():
    sizes = domains.domain_sizes(NVL72, gpus_per_node=4, nvlink_domain_gpus=72)
    fit = domains.job_fit(sizes, {"level": "block"}, workers=36, workers_per_node=1)
    assert fit.slices is not None and fit.slices.derived
    assert (fit.slices.domain.node_label, fit.slices.size, fit.slices.count) == ("nvidia.com/gpu.clique", 18, 2)
    assert fit.verdict() == "fits in one block; 2 slices of 18 workers, each within one rack"
    # A Kueue before v0.13.0 reads no slice annotations: none are made.
    assert domains.job_fit(sizes, {"level": "block"}, 36, 1, slices_served=False).slices is None


def test_a_16_node_job_on_blocks_of_8_gets_two_slices_of_8():
    sizes = domains.domain_sizes(BLOCKS, gpus_per_node=8, nvlink_domain_gpus=None)
    fit = domains.job_fit(sizes, {"level": "spine", "sliceLevel": "block"}, workers=16, workers_per_node=1)
    assert fit.slices is not None and not fit.slices.derived
    assert (fit.slices.domain.level, fit.slices.size, fit.slices.count) == ("block", 8, 2)
    # Four workers of 2 GPUs a node: a block's slice is 32 pods, on the same 8 nodes.
    packed = domains.job_fit(sizes, {"level": "spine", "sliceLevel": "block"}, workers=64, workers_per_node=4)
    assert packed.slices is not None and (packed.slices.size, packed.slices.count, packed.nodes_needed) == (32, 2, 16)


@pytest.mark.parametrize(("workers", "topology"), [
    (8, {"level": "spine", "sliceLevel": "block"}),  # fits one block: a slice of 8 would be the pod count or more
    (20, {"level": "spine", "sliceLevel": "block"}),  # not a whole number of slices (validate refuses it)
    (16, {"level": "spine"}),  # no slice level asked, and no NVLink domain to derive one from
])
def test_no_slices_where_the_workers_fit_one_domain_or_do_not_divide(workers, topology):
    sizes = domains.domain_sizes(BLOCKS, gpus_per_node=8, nvlink_domain_gpus=None)
    assert domains.job_fit(sizes, topology, workers=workers, workers_per_node=1).slices is None


def test_what_is_emitted_holds_kueues_own_rules():
    """Every slice made: the size at least 1 and below the pod count, the slice level strictly below the job's."""
    for levels, gpus, nvlink, topology in ((NVL72, 4, 72, {"level": "block"}),
                                           (BLOCKS, 8, None, {"level": "spine", "sliceLevel": "block"})):
        sizes = domains.domain_sizes(levels, gpus, nvlink)
        for workers in range(1, 80):
            slices = domains.job_fit(sizes, topology, workers, 1).slices
            if slices is not None:
                level = next(s for s in sizes if s.level == topology["level"])
                assert 1 <= slices.size < workers and workers % slices.size == 0
                assert slices.domain.index > level.index


@pytest.mark.parametrize(("fit", "verdict"), [
    (dict(workers=4, level="block", required=True), "fits in one block"),
    (dict(workers=16, level="block", required=True), "never fits: stays Pending (one block holds 8 nodes)"),
    (dict(workers=20, level="block", required=False), "likely split across 3 blocks (one holds 8 nodes)"),
])
def test_the_verdict(fit, verdict):
    sizes = domains.domain_sizes(BLOCKS, gpus_per_node=8, nvlink_domain_gpus=None)
    mode = "required" if fit["required"] else "preferred"
    assert domains.job_fit(sizes, {"level": fit["level"], "mode": mode}, fit["workers"], 1).verdict() == verdict
    unsized = domains.domain_sizes((TopologyLevel("rack", "r"),), 8, None)
    assert domains.job_fit(unsized, {"level": "rack"}, 9, 1).verdict() == "not judged: no domainNodes for level 'rack'"


@pytest.mark.parametrize(("levels", "problem"), [
    ((TopologyLevel("block", "b", 6), TopologyLevel("rack", "r", 4)), (0, "a 'block' domain of 6 nodes does not hold "
                                                                          "a whole number of 'rack' domains of 4")),
    ((TopologyLevel("block", "b", 2), TopologyLevel("rack", "r", 4)), (0, "a 'block' domain of 2 nodes")),
    ((TopologyLevel("block", "b", 8), TopologyLevel("host", "kubernetes.io/hostname", 2)), (1, "is one node, not 2")),
    ((TopologyLevel("block", "b", 8), TopologyLevel("rack", "r"), TopologyLevel("host", "kubernetes.io/hostname", 1)),
     None),
])
def test_levels_nest(levels, problem):
    found = domains.nesting_problem(levels)
    if problem is None:
        assert found is None
    else:
        assert found is not None and found[0] == problem[0] and problem[1] in found[1]


def test_nearest_whole_numbers_of_slices():
    assert domains.nearest_multiples(20, 8) == (16, 24)
    assert domains.nearest_multiples(5, 8) == (8,)
