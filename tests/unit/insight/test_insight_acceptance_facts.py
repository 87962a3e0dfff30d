"""`mpigen explain` of a fabric acceptance job (generator/insight/acceptance_facts.py): what it proves, and each floor
verify judges its logs by, every step of its chain with where the number comes from; a real job has no such section."""

from __future__ import annotations

from pathlib import Path

from mpigen.commands.pipeline import CompileResult
from mpigen.insight.explain import explain_job
from mpigen.insight.explanation import Explanation


def explained(example: CompileResult, cluster: str, name: str) -> Explanation:
    assert example.fleet is not None
    job = next(job for job in (*example.fleet.jobs, *example.fleet.acceptance)
               if job.cluster.name == cluster and job.name == name)
    return explain_job(job, example.documents)


def section(explanation: Explanation) -> list[tuple[str, str, str]]:
    return [(fact.name, fact.value, fact.origin) for fact in explanation.facts if fact.section == "acceptance"]


def test_a_collective_job_shows_its_bus_bandwidth_floor_step_by_step(example: CompileResult) -> None:
    explanation = explained(example, "dgx-lab", "accept-dgx-all-reduce-pair")
    assert explanation.path.endswith("profiles/clusters/dgx-lab.yaml")  # the cluster's file implies it
    facts = section(explanation)
    assert [(name, value) for name, value, _ in facts] == [
        ("proves", "nccl-tests all_reduce over pair"),
        ("bus bandwidth floor", "40 GB/s, of nccl-tests busbw at the largest sizes"),
        ("  the rails a worker drives: 4 x 100 Gb/s InfiniBand EDR (rail0, rail1, rail2, rail3)",
         "400 Gb/s = 50 GB/s"),
        ("  nccl-tests busbw reaches at least", "80% of it = 40 GB/s"),
        ("  NVLink 2 of Tesla-V100-SXM2-16GB, 150 GB/s each way, at the same share", "120 GB/s, higher: no bound")]
    lines = Path(explanation.path).read_text(encoding="utf-8").split("\n")
    asked = next(number for number, line in enumerate(lines, 1) if line.startswith("acceptance:"))
    proves = facts[0][2]  # at the cluster's `acceptance`: its mapping's first line, as explain points at a mapping
    assert proves.startswith(f"{explanation.path}:{asked + 1}: acceptance: run by hand, its chart in "
                             "dgx-lab/acceptance/accept-dgx-all-reduce-pair delivered without automated sync")
    assert "hardware dgx-1, speedGbps of NIC ib0, ib1, ib2, ib3" in facts[2][2]
    assert "NVIDIA/nccl-tests#290" in facts[3][2]


def test_a_rail_job_shows_its_rail_floor_and_reports_latency(example: CompileResult) -> None:
    facts = section(explained(example, "roce-lab", "accept-dgx-perftest-rail1"))
    assert [(name, value) for name, value, _ in facts] == [
        ("proves", "perftest on rail rail1"),
        ("rail rail1 floor", "90 Gb/s, of ib_write_bw BW average"),
        ("  rail rail1 over NIC ib1 (mlx5_1 port 1), RoCE (Ethernet)", "100 Gb/s"),
        ("  ib_write_bw reaches at least", "90% of it = 90 Gb/s"),
        ("ib_read_lat", "reported, not judged")]


def test_a_real_job_has_no_acceptance_section(example: CompileResult) -> None:
    assert section(explained(example, "dgx-lab", "resnet50-dgx")) == []
