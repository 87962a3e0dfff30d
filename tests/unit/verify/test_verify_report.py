"""`mpigen verify`'s verdict as text, JSON and JUnit (generator/verify/report.py): every judgement, a miss with its
expected value, floor, rows and causes; and nothing a log held reaches the output raw."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from conftest import DRANET_H200_WORKERS, HOSTILE_NAME, RAW_CONTROL, as_workers_of, log_text

from mpigen.commands.pipeline import CompileResult
from mpigen.model import Job
from mpigen.verify import Verdict, verify_logs
from mpigen.verify.logtext import log_of
from mpigen.verify.report import verdict_json, verdict_junit, verdict_text


def h200_job(verify_fleet: CompileResult) -> Job:
    assert verify_fleet.fleet is not None
    return next(job for job in verify_fleet.fleet.acceptance if job.name == "accept-h200-all-reduce-pair")


def verdict_of(job: Job, *texts: str) -> Verdict:
    return verify_logs(job, [log_of(f"log{i}.log", text.encode("utf-8")) for i, text in enumerate(texts)])


def test_text_says_each_judgement_and_a_miss_in_full(verify_fleet: CompileResult) -> None:
    job = h200_job(verify_fleet)
    text = verdict_text(verdict_of(job, as_workers_of(log_text("dranet-h200-all-reduce.log"), DRANET_H200_WORKERS,
                                                      job.name)))
    lines = text.splitlines()
    assert lines[0] == "job accept-h200-all-reduce-pair (cluster gke-lab): nccl-tests all_reduce over pair"
    assert lines[2] == "log log0.log (nccl-tests all_reduce):"
    assert [line.split(":")[0] for line in lines if line.startswith(("  pass", "  MISS"))] == [
        "  pass  table", "  pass  #wrong", "  pass  ranks", "  pass  nodes", "  pass  hosts", "  pass  collective",
        "  MISS  bus bandwidth (bus bandwidth under the floor)"]
    miss = lines.index(next(line for line in lines if line.startswith("  MISS")))
    assert [line.strip().split(":")[0] for line in lines[miss + 1:] if line.startswith("        ") and
            not line.startswith("         ")] == ["expected", "floor", "measured", "likely causes"]
    assert lines[-1] == "1 of 7 judgements missed"


def test_json_holds_every_judgement(verify_fleet: CompileResult) -> None:
    job = h200_job(verify_fleet)
    body = json.loads(verdict_json(verdict_of(job, log_text("dranet-h200-all-reduce.log"))))
    assert (body["format"], body["kind"], body["job"], body["cluster"], body["passed"]) == (
        1, "verify", "accept-h200-all-reduce-pair", "gke-lab", False)
    (log,) = body["logs"]
    assert log["log"] == "log0.log" and log["passed"] is False
    missed = {judgement["name"]: judgement for judgement in log["judgements"] if not judgement["passed"]}
    assert sorted(missed) == ["bus bandwidth", "hosts"]
    assert missed["hosts"]["miss"] == "log of another job" and missed["hosts"]["causes"]
    assert len(missed["bus bandwidth"]["floor"]) == 2 and len(missed["bus bandwidth"]["measured"]) == 3


def test_junit_has_a_suite_a_log_and_a_case_a_judgement(verify_fleet: CompileResult) -> None:
    job = h200_job(verify_fleet)
    good = as_workers_of(log_text("dranet-h200-all-reduce.log"), DRANET_H200_WORKERS, job.name)
    root = ET.fromstring(verdict_junit(verdict_of(job, good, log_text("dranet-h200-all-reduce.log"))))
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "14", "3")
    suites = root.findall("testsuite")
    assert [(suite.get("name"), suite.get("tests"), suite.get("failures")) for suite in suites] == [
        ("log0.log", "7", "1"), ("log1.log", "7", "2")]
    failure = suites[0].find("testcase[@name='bus bandwidth']/failure")
    assert failure is not None and failure.get("type") == "bus bandwidth under the floor"
    assert failure.get("message", "").startswith("busbw 31.86 GB/s at the largest sizes")
    assert (failure.text or "").splitlines()[0].startswith("expected: busbw at least 40 GB/s")
    passed = suites[0].find("testcase[@name='table']")
    assert passed is not None and passed.find("failure") is None and passed.get("classname") == (
        "gke-lab.accept-h200-all-reduce-pair")


def test_nothing_a_log_held_reaches_the_output_raw(verify_fleet: CompileResult) -> None:
    """A host name with terminal escapes, bidi controls and NUL (conftest's HOSTILE_NAME but for what a line of UTF-8
    text cannot hold: a line break, a lone surrogate), in every format: escaped, and the JUnit still parses."""
    job = h200_job(verify_fleet)
    hostile = HOSTILE_NAME.replace("\x0b", "").replace("\ud800", "")
    text = log_text("dranet-h200-all-reduce.log").replace("nccl-test-dranet-1gpu-1nic-worker-0 device", f"{hostile} device")
    verdict = verdict_of(job, text)
    assert any("owned" in judgement.summary for judgement in verdict.logs[0].judgements)  # the host is said
    for output in (verdict_text(verdict), verdict_json(verdict), verdict_junit(verdict)):
        assert not RAW_CONTROL.search(output)
    ET.fromstring(verdict_junit(verdict))
