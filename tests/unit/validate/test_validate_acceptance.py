"""A cluster's fabric acceptance jobs (generator/validate/acceptance.py): the settings, the names beside the cluster's
jobs, and each job checked as a job, at the `acceptance` key that asks for it. roce-lab (two dgx-1-roce nodes, four
RoCE rails, no job) is the base: its `acceptance:` is line 46, `image:` line 47."""

from __future__ import annotations

from conftest import PROFILES, expect

from mpigen.commands.pipeline import compile_profiles
from mpigen.support.diagnostics import Severity

ROCE = (PROFILES / "clusters" / "roce-lab.yaml").read_text(encoding="utf-8")
LAB = "clusters/roce-lab.yaml"
IMAGE = "  image: registry.example.com/platform/fabric-tests:2.16.9\n"
assert ROCE.splitlines()[45:47] == ["acceptance:", IMAGE.rstrip("\n")] and ROCE.endswith(IMAGE)
WITHOUT = ROCE[:ROCE.index("acceptance:")]
POOL = "    nodes: 2\n"
assert POOL in WITHOUT


def test_the_example_acceptance_passes(diagnose):
    assert diagnose({}).diagnostics == []


def test_a_namespace_not_of_the_cluster_is_refused_at_it(diagnose):
    outcome = diagnose({LAB: ROCE + "  namespace: roce-trainin\n"})
    expect(outcome, (LAB, 48, 14, "namespace 'roce-trainin' is not one of cluster 'roce-lab's", "roce-training"))


def test_sizes_the_wrong_way_round_run_nothing(diagnose):
    outcome = diagnose({LAB: ROCE + "  minBytes: 8G\n  maxBytes: 1M\n"})
    expect(outcome, (LAB, 48, 13, "minBytes 8G is more than maxBytes 1M", "make minBytes the smaller"))


def test_a_pool_that_asks_without_an_image_anywhere_is_refused_at_its_own_key(diagnose):
    pool = WITHOUT.replace(POOL, POOL + "    acceptance: {collectives: [all_gather]}\n")
    outcome = diagnose({LAB: pool})
    expect(outcome, (LAB, 21, 5, "the acceptance jobs of pool 'dgx' name no image", "give `image` here"))


def test_a_job_of_the_cluster_may_not_take_an_acceptance_jobs_name(diagnose):
    pi = (PROFILES / "jobs" / "cpu-pi.yaml").read_text(encoding="utf-8")
    job = ("apiVersion: mpigen/v1alpha1\nkind: Job\nname: accept-dgx-perftest-rail1\ncluster: roce-lab\npool: dgx\n"
           "image: nvcr.io/nvidia/pytorch:24.03-py3\nworkers: 2\nprogram: [hostname]\n")
    assert pi  # the example holds job profiles; this one is added beside them
    outcome = diagnose({"jobs/taken.yaml": job})
    expect(outcome, ("jobs/taken.yaml", 3, 7, "job name 'accept-dgx-perftest-rail1' is the name of a fabric acceptance "
                     "job of cluster 'roce-lab'", "rename the job"))


def test_a_pool_of_one_node_has_no_fabric_to_prove(diagnose):
    outcome = diagnose({LAB: ROCE.replace(POOL, "    nodes: 1\n")})
    expect(outcome, (LAB, 46, 1, "pool 'dgx' has 1 node(s): its fabric needs two nodes to be proven",
                     "`acceptance: false`"), severity=Severity.WARNING)


def test_a_broken_cluster_is_reported_once_not_again_for_each_acceptance_job(diagnose):
    outcome = diagnose({LAB: ROCE.replace("  provider: sriov-network-operator\n", "  provider: sriov-network-operator\n"
                                          "  numVfs: 0\n")})
    assert outcome.diagnostics and all(str(d.location) != outcome.at(LAB, 46, 1) for d in outcome.diagnostics)


def test_a_pool_says_false_or_its_own_keys(profiles_copy):
    off = compile_profiles([profiles_copy({LAB: ROCE.replace(POOL, POOL + "    acceptance: false\n")})])
    assert off.ok and not [job for job in off.fleet.acceptance if job.cluster.name == "roce-lab"]
    own = ROCE.replace(POOL, POOL + "    acceptance: {collectives: [alltoall], ncclTests: {suffix: _perf_mpi}}\n")
    result = compile_profiles([profiles_copy({LAB: own})])
    assert result.ok, [d.format() for d in result.diagnostics]
    names = sorted(job.name for job in result.fleet.acceptance if job.cluster.name == "roce-lab")
    assert names == ["accept-dgx-alltoall-pair", *(f"accept-dgx-perftest-rail{n}" for n in range(4))]
    (pair,) = [job for job in result.fleet.acceptance if job.name == "accept-dgx-alltoall-pair"]
    assert pair.program[0] == "/usr/local/bin/alltoall_perf_mpi" and pair.image == IMAGE.split(": ")[1].strip()
