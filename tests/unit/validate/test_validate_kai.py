"""generator/validate (scheduling, job_scheduling, quota, backend) under KAI, on kai-lab (profiles/clusters/kai-lab.yaml):
queue training holds 6 of 8 DGX-1 nodes (48 GPUs, 549755 MB each) and may borrow 2 (limit: 64 GPUs, 4398040 MB);
research 2 (no limit); priority class release-critical is 150, non-preemptible."""

from __future__ import annotations

import pytest
from conftest import PROFILES, expect

CLUSTER = (PROFILES / "clusters" / "kai-lab.yaml").read_text(encoding="utf-8")
ALLREDUCE = (PROFILES / "jobs" / "kai-allreduce.yaml").read_text(encoding="utf-8")
UNPLACED = ALLREDUCE.replace("  topology:\n    level: rack\n", "")
"""kai-allreduce without its rack: its size is judged against the queue alone."""


def test_the_example_kai_jobs_are_valid(diagnose):
    assert diagnose({}).diagnostics == []


def test_a_non_preemptible_job_above_its_queues_quota_is_never_run(diagnose):
    outcome = diagnose({"jobs/kai-allreduce.yaml": UNPLACED.replace("totalGpus: 32", "totalGpus: 56")})
    expect(outcome, ("jobs/kai-allreduce.yaml", 11, 12, "the job's 7 workers and launcher ask for 56 GPUs of gpu, "
                     "more than the quota of queue 'training' (48 GPUs), and its priority class 'release-critical' "
                     "(150) is non-preemptible, which KAI runs only within quota: it is never scheduled",
                     "choose a preemptible priority class (value below 100)"))


@pytest.mark.parametrize("priority", ["", "  priorityClass: build-preemptible\n"])
def test_a_preemptible_job_may_run_over_quota_up_to_the_limit(diagnose, priority):
    job = UNPLACED.replace("totalGpus: 32", "totalGpus: 56").replace("  priorityClass: release-critical\n", priority)
    assert diagnose({"jobs/kai-allreduce.yaml": job}).diagnostics == []


def test_kais_own_non_preemptible_class_is_held_to_the_quota_too(diagnose):
    job = UNPLACED.replace("totalGpus: 32", "totalGpus: 56").replace("release-critical", "inference")
    expect(diagnose({"jobs/kai-allreduce.yaml": job}),
           ("jobs/kai-allreduce.yaml", 11, 12, "its priority class 'inference' (125) is non-preemptible"))


def test_a_job_above_its_queues_limit_is_never_run(diagnose):
    """8 workers of a whole node's 512 GiB and the 1 GiB launcher: 4399120.252928 MB, above 8 nodes' 4398040 MB."""
    job = UNPLACED.replace("totalGpus: 32", "totalGpus: 64\nresources:\n  memory: 512Gi\nshmSize: 8Gi") \
        .replace("  priorityClass: release-critical\n", "")
    expect(diagnose({"jobs/kai-allreduce.yaml": job}),
           ("jobs/kai-allreduce.yaml", 11, 12, "the job's 8 workers and launcher ask for 4399120.252928 MB of memory, "
            "more than the limit of queue 'training' (4398040 MB), so KAI never schedules it", "`borrowNodes`"))


def test_a_queue_that_does_not_serve_the_jobs_namespace_or_does_not_exist_is_refused(diagnose):
    expect(diagnose({"jobs/kai-allreduce.yaml": ALLREDUCE.replace("queue: training", "queue: research")}),
           ("jobs/kai-allreduce.yaml", 14, 10, "queue 'research' does not serve namespace 'training'"))
    expect(diagnose({"jobs/kai-allreduce.yaml": ALLREDUCE.replace("queue: training", "queue: trainin")}),
           ("jobs/kai-allreduce.yaml", 14, 10, "cluster 'kai-lab' declares no queue 'trainin'"))


def test_kais_own_queue_and_priority_class_names_and_a_cohort_named_as_a_queue_are_refused(diagnose):
    cluster = CLUSTER.replace("- name: release-critical", "- name: train").replace("- name: research\n",
                                                                                    "- name: default-queue\n")
    cluster = cluster.replace("      cohort: gpu-lab\n      weight", "      cohort: default-queue\n      weight")
    outcome = diagnose({"clusters/kai-lab.yaml": cluster,
                        "jobs/kai-allreduce.yaml": ALLREDUCE.replace("release-critical", "train")})
    expect(outcome,
           ("clusters/kai-lab.yaml", 31, 13, "KAI's chart installs the priority class 'train' itself"),
           ("clusters/kai-lab.yaml", 45, 15, "cohort 'default-queue' of queue 'training' is the name of a queue"),
           ("clusters/kai-lab.yaml", 47, 13, "KAI creates the queue 'default-queue' itself"))


def test_a_queue_setting_of_kai_is_refused_under_another_scheduler(diagnose):
    volcano = (PROFILES / "clusters" / "volcano-lab.yaml").read_text(encoding="utf-8")
    outcome = diagnose({"clusters/volcano-lab.yaml": volcano.replace("      weight: 2\n", "      weight: 2\n      "
                                                                     "priority: 3\n")})
    expect(outcome, ("clusters/volcano-lab.yaml", 37, 7, "`priority` of a queue has no effect with scheduler "
                     "`volcano`: only `kai` read it"))


def test_a_volcano_job_or_trainjob_under_kai_is_refused_with_why(diagnose):
    vcjob = ALLREDUCE.replace("pool: dgx", "pool: dgx\nbackend: volcano-job")
    expect(diagnose({"jobs/kai-allreduce.yaml": vcjob}),
           ("jobs/kai-allreduce.yaml", 9, 10, "KAI's podgrouper has no grouper for a Volcano Job"))
    trainjob = ALLREDUCE.replace("pool: dgx", "pool: dgx\nbackend: trainjob")
    expect(diagnose({"jobs/kai-allreduce.yaml": trainjob}),
           ("jobs/kai-allreduce.yaml", 9, 10, "KAI groups a TrainJob through its JobSet"))


def test_a_required_rack_too_small_for_the_workers_never_fits_under_kai(diagnose):
    outcome = diagnose({"jobs/kai-allreduce.yaml": ALLREDUCE.replace("totalGpus: 32", "totalGpus: 40")})
    expect(outcome, ("jobs/kai-allreduce.yaml", 17, 12, "it never fits, so KAI keeps the job Pending for ever"))
