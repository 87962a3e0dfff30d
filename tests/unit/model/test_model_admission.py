"""generator/model/admission.py: what a queue can ever admit, one rule for `validate` (a job beyond it is refused)
and for the job chart's `workers` maximum (`--set workers` beyond it is refused by Helm).

Expected numbers by hand from the example fleet: a DGX-1 node has 8 GPUs. dgx-pod (Kueue): queue language holds 4
of the pool's 8 nodes and may borrow 2 of vision's (`borrowNodes`), so 6 workers of 8 GPUs; vision may borrow all
4 of language's, so 8. volcano-lab (Volcano): queue training's capability is 4 of the pool's 6 nodes.
"""

from __future__ import annotations

from decimal import Decimal

from conftest import PROFILES

from mpigen.commands.pipeline import compile_profiles
from mpigen.model import admission
from mpigen.support.diagnostics import NEVER_FITS

GPU = "nvidia.com/gpu"


def test_kueue_a_launcher_that_fits_beside_the_workers_or_on_another_covered_pool() -> None:
    reach = {"gpu": {admission.CPU: 80, GPU: 16}, "cpu": {admission.CPU: 10}}
    launcher = {admission.CPU: Decimal(1)}
    two = {admission.CPU: Decimal(80), GPU: Decimal(16)}  # every CPU of the GPU pool's reach
    assert admission.kueue_shortfall(reach, "gpu", two, launcher, None) is None  # the launcher goes to pool cpu
    pinned = admission.kueue_shortfall(reach, "gpu", two, launcher, "gpu")
    assert pinned == admission.Shortfall(launcher=True, pinned="gpu")
    assert admission.kueue_shortfall({"gpu": reach["gpu"]}, "gpu", two, launcher, None) == \
        admission.Shortfall(launcher=True)
    over = admission.kueue_shortfall(reach, "gpu", {GPU: Decimal(24)}, launcher, None)
    assert over == admission.Shortfall(GPU, Decimal(24), 16)


def test_volcano_the_launcher_counts_against_the_capability() -> None:
    capability = {admission.CPU: 8, GPU: 16}
    assert admission.volcano_shortfall(capability, {admission.CPU: Decimal(7)}, {admission.CPU: Decimal(1)}) is None
    assert admission.volcano_shortfall(capability, {admission.CPU: Decimal(8)}, {admission.CPU: Decimal(1)}) == \
        admission.Shortfall(admission.CPU, Decimal(9), 8)


def test_most_admitted_is_the_largest_count_that_fits() -> None:
    capability = {admission.CPU: 10}
    launcher = {admission.CPU: Decimal(1)}

    def fits(workers: dict[str, Decimal]) -> bool:
        return admission.volcano_shortfall(capability, workers, launcher) is None

    assert admission.most_admitted({admission.CPU: Decimal(3)}, 100, fits) == 3  # 9 + 1
    assert admission.most_admitted({admission.CPU: Decimal(3)}, 2, fits) == 2  # the pool holds 2
    assert admission.most_admitted({admission.CPU: Decimal(10)}, 5, fits) == 0


def test_the_chart_maximum_is_the_largest_job_validation_admits(example, profiles_copy) -> None:
    """The example fleet's queued jobs ask for what their queues hold already: their charts' maximum is their size;
    one worker more is refused by validation, as `--set workers` one above it is by Helm (test_charts_helm.py)."""
    jobs = {job.name: job for job in example.fleet.jobs}
    assert {name: (jobs[name].worker_count, jobs[name].max_workers) for name in
            ("language-bert", "vision-resnet50", "volcano-allreduce", "allreduce-vcjob")} == {
        "language-bert": (6, 6), "vision-resnet50": (4, 4), "volcano-allreduce": (4, 4), "allreduce-vcjob": (2, 2)}
    # vision's queue could borrow all 8 nodes, but its required `rack` level holds 4 (tests/unit/resolve/
    # test_resolve_scheduling.py): the domain, not the queue, sets its maximum.
    assert jobs["language-bert"].queue_limit and "'rack' domain" in (jobs["vision-resnet50"].queue_limit or "")
    edits = {}
    for path, before, after in (("jobs/language-bert.yaml", "totalGpus: 48", "totalGpus: 56"),
                                ("jobs/volcano-allreduce.yaml", "totalGpus: 32", "totalGpus: 40"),
                                ("jobs/vision-resnet50.yaml", "totalGpus: 32", "totalGpus: 40")):
        edits[path] = (PROFILES / path).read_text(encoding="utf-8").replace(before, after)
    refused = compile_profiles([profiles_copy(edits)])
    assert sorted((d.location.path.rsplit("/", 1)[1], d.code) for d in refused.diagnostics) == [
        ("language-bert.yaml", NEVER_FITS), ("vision-resnet50.yaml", NEVER_FITS), ("volcano-allreduce.yaml", NEVER_FITS)]


def test_a_job_of_some_rails_asks_nothing_of_the_pools_other_rails():
    """A worker attaching rail0 only (a perftest of rail0, a job's `rails: [rail0]`) asks one rail0 device and its
    GPUs; the pool's rail1 devices are not GPUs, and not its to count (it once asked GPUs-many of them)."""
    offer = admission.NodeOffer((("memory", 512, "Gi"), ("nvidia.com/gpu", 8, ""), ("x/rdma_rail0", 1, ""),
                                 ("x/rdma_rail1", 1, "")))
    demand = admission.worker_demand({}, offer, 8, 2, ["x/rdma_rail0"], ["x/rdma_rail0", "x/rdma_rail1"])
    assert demand == {"nvidia.com/gpu": Decimal(16), "x/rdma_rail0": Decimal(2)}
