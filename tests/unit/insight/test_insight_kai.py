"""generator/insight (plan.py, kai_facts.py) under KAI, on kai-lab (profiles/clusters/kai-lab.yaml): its queues'
quota and what they may use over it, in KAI's units, with what their jobs ask; and where each KAI setting of a job
came from. Numbers by hand: a DGX-1 node offers 80000 millicores, 549755 MB and 8 GPUs; training holds 6 nodes and
may borrow 2, research holds 2 without a limit; each launcher asks 1 CPU and 1 GiB (1073.741824 MB)."""

from __future__ import annotations

from conftest import PROFILES

from mpigen.commands.pipeline import CompileResult, check_profiles
from mpigen.insight.explain import explain_job
from mpigen.insight.plan import plan_fleet


def kai_plan(example: CompileResult):
    plan = plan_fleet(example.fleet, example.documents, example.unfit)
    (cluster,) = [c for c in plan.clusters if c.name == "kai-lab"]
    return cluster


def test_plan_shows_each_kai_queues_quota_what_it_may_use_over_it_and_what_its_jobs_ask(example: CompileResult):
    cluster = kai_plan(example)
    assert cluster.scheduler == "kai"
    rows = {(q.name, line.resource): (line.pool, line.quota, line.may_borrow, line.asked, line.over)
            for q in cluster.queues for line in q.lines}
    assert rows == {
        ("training", "cpu"): ("", "480000m", "160000m", "1000m", False),
        ("training", "memory"): ("", "3298530MB", "1099510MB", "1073.741824MB", False),
        ("training", "gpu"): ("", "48", "16", "32", False),
        ("research", "cpu"): ("", "160000m", "unlimited", "1000m", False),
        ("research", "memory"): ("", "1099510MB", "unlimited", "1073.741824MB", False),
        ("research", "gpu"): ("", "16", "unlimited", "16", False),
    }
    assert {q.name: q.jobs for q in cluster.queues} == {"training": ("kai-allreduce",), "research": ("kai-research",)}


def test_plan_marks_a_queue_whose_jobs_ask_beyond_its_quota(profiles_copy):
    job = (PROFILES / "jobs" / "kai-research.yaml").read_text(encoding="utf-8").replace("totalGpus: 16",
                                                                                      "totalGpus: 24")
    result = check_profiles([profiles_copy({"jobs/kai-research.yaml": job})], set_aside_unfit=True)
    assert result.ok, [d.format() for d in result.diagnostics]
    cluster = kai_plan(result)
    (research,) = [q for q in cluster.queues if q.name == "research"]
    assert [(line.resource, line.asked, line.over) for line in research.lines if line.resource == "gpu"] == \
        [("gpu", "24", True)]  # preemptible: over quota, while training leaves room


def facts(example: CompileResult, name: str) -> dict[str, tuple[str, str]]:
    job = next(j for j in example.fleet.jobs if j.name == name)
    return {f.name: (f.value, f.origin) for f in explain_job(job, example.documents).facts if f.section == "scheduling"}


def test_explain_says_where_each_kai_setting_of_a_job_came_from(example: CompileResult):
    said = facts(example, "kai-allreduce")
    assert said["schedulerName"][0] == "kai-scheduler" and said["schedulerName"][1].startswith("default:")
    assert said["queue label"][0] == "kai.scheduler/queue=training"
    assert "gpu quota 48 limit 64" in said["queue label"][1]
    assert said["KAI priority"][0] == "release-critical (150), non-preemptible: KAI runs it only within its queue's quota"
    assert said["KAI priority"][1].endswith("jobs/kai-allreduce.yaml:15: scheduling.priorityClass (the MPIJob's "
                                            "priorityClassName label)")
    assert said["minAvailable"][0] == "5" and "WaitForWorkersReady" in said["minAvailable"][1]
    assert said["topology annotations"][0] == ("kai.scheduler/topology=kai-lab; "
                                               "kai.scheduler/topology-required-placement=example.com/rack")
    research = facts(example, "kai-research")
    assert research["KAI priority"] == ("train (50), preemptible: it may run over its queue's quota, and be reclaimed",
                                        "default: KAI's default for an MPIJob, train")
    assert research["minAvailable"] == ("3", "default: every pod (workers and launcher)")


def test_explain_says_nothing_of_kai_elsewhere(example: CompileResult):
    assert "queue label" not in facts(example, "volcano-allreduce")
    assert "KAI priority" not in facts(example, "vision-resnet50")
