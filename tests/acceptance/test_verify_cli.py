"""`mpigen verify` through the real command line: a good log passes (exit 0); #wrong above 0, a truncated log, a
single-node run and another job's log each exit 1 with their reason; the JSON and JUnit outputs are well formed; a
name that is no acceptance job, and a log of nothing, are errors. The logs are tests/data/verify's (SOURCES.yaml),
judged by the acceptance jobs of tests/data/verify/fleet (DRANET's setups) and of the example fleet."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import (
    DRANET_B200_PODS,
    DRANET_H200_WORKERS,
    PROFILES,
    REPO,
    VERIFY_DATA,
    VERIFY_FLEET,
    as_workers_of,
    log_text,
    run_mpigen,
)

B200_GATHER = "accept-b200-all-gather-pair"
H200_REDUCE = "accept-h200-all-reduce-pair"


def job_log(tmp_path: Path, name: str, pods: str, job: str) -> Path:
    """The log `name` as the same run would print it on `job`'s workers (the stated edit of `as_workers_of`)."""
    path = tmp_path / f"{job}-{name}"
    path.write_text(as_workers_of(log_text(name), pods, job), encoding="utf-8")
    return path


def subprocess_with_input(args: list[str | Path], text: str) -> subprocess.CompletedProcess[str]:
    """The real command line with `text` on its standard input (run_mpigen gives it none)."""
    return subprocess.run([sys.executable, "-m", "mpigen", *map(str, args)], input=text, capture_output=True,
                          text=True, timeout=120)


def test_a_good_log_passes(tmp_path: Path) -> None:
    log = job_log(tmp_path, "dranet-b200-all-gather.log", DRANET_B200_PODS, B200_GATHER)
    result = run_mpigen("verify", log, "--job", B200_GATHER, "-p", VERIFY_FLEET)
    assert (result.returncode, result.stderr) == (0, ""), result.stdout
    assert "  pass  bus bandwidth: busbw 43.55 GB/s at the largest sizes (256 MiB to 1 GiB): the floor is 40 GB/s\n" in (
        result.stdout)
    assert result.stdout.endswith("\nall 7 judgements passed\n")


def test_a_good_perftest_log_on_standard_input_passes() -> None:
    result = subprocess_with_input(["verify", "-", "--job", "accept-dgx-perftest-rail0", "--cluster", "volcano-lab",
                                    "-p", PROFILES], log_text("perftest-edr-rail0.log"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "log standard input (perftest):" in result.stdout
    assert "  pass  rail bandwidth: BW average 98.39 Gb/s: the floor is 90 Gb/s\n" in result.stdout


def test_wrong_results_miss_with_their_reason(tmp_path: Path) -> None:
    """The H200 log on its job's workers with one stated edit: the 8 GiB row's in-place #wrong 0 -> 2."""
    log = job_log(tmp_path, "dranet-h200-all-reduce.log", DRANET_H200_WORKERS, H200_REDUCE)
    text = log.read_text(encoding="utf-8")
    row = "269407   31.88   31.88      0\n"
    assert text.count(row) == 1
    log.write_text(text.replace(row, row.replace("0\n", "2\n")), encoding="utf-8")
    result = run_mpigen("verify", log, "--job", H200_REDUCE, "-p", VERIFY_FLEET)
    assert result.returncode == 1 and result.stderr == ""
    assert "  MISS  #wrong (wrong results): 1 row(s) with #wrong above 0; Out of bounds values: 0\n" in result.stdout
    assert "        measured: 8589934592 B: #wrong 0 out-of-place, 2 in-place (line 63)\n" in result.stdout
    assert "        likely causes: data was corrupted on its way: a GPU or NVLink fault" in result.stdout
    assert "  MISS  bus bandwidth (bus bandwidth under the floor): busbw 31.86 GB/s" in result.stdout  # unaligned


def test_truncated_single_node_and_another_job_s_logs_miss_as_json(tmp_path: Path) -> None:
    """Three logs for one job in one run: the run that stopped after its header, the single-node run (on the job's
    names), and the aligned run as DRANET's StatefulSet printed it (another job's pods)."""
    logs = [job_log(tmp_path, "dranet-b200-all-gather-cut.log", DRANET_B200_PODS, B200_GATHER),
            job_log(tmp_path, "dranet-b200-all-gather-one-node.log", DRANET_B200_PODS, B200_GATHER),
            VERIFY_DATA / "dranet-b200-all-gather.log"]
    result = run_mpigen("verify", *logs, "--job", B200_GATHER, "-p", VERIFY_FLEET, "--output", "json")
    assert result.returncode == 1 and result.stderr == ""
    body = json.loads(result.stdout)
    assert (body["kind"], body["job"], body["passed"]) == ("verify", B200_GATHER, False)
    missed = [{j["name"]: j["miss"] for j in log["judgements"] if not j["passed"]} for log in body["logs"]]
    assert missed[0]["table"] == "truncated" and missed[0]["bus bandwidth"] == "truncated"
    assert missed[1]["nodes"] == "fewer nodes than workers"
    assert missed[2] == {"hosts": "log of another job"}
    cut = next(j for j in body["logs"][0]["judgements"] if j["name"] == "table")
    assert cut["summary"] == "truncated: the log stops after the table's header (line 18): no row was printed"
    assert cut["expected"] and cut["causes"].startswith("the run stopped before its end")


def test_junit_is_one_suite_a_log_one_case_a_judgement(tmp_path: Path) -> None:
    good = job_log(tmp_path, "dranet-h200-all-reduce.log", DRANET_H200_WORKERS, H200_REDUCE)
    result = run_mpigen("verify", good, VERIFY_DATA / "dranet-h200-all-reduce.log", "--job", H200_REDUCE,
                        "-p", VERIFY_FLEET, "--output", "junit")
    assert result.returncode == 1
    root = ET.fromstring(result.stdout)
    suites = root.findall("testsuite")
    assert [(suite.get("name"), len(suite.findall("testcase")), suite.get("failures")) for suite in suites] == [
        (str(good), 7, "1"), (str(VERIFY_DATA / "dranet-h200-all-reduce.log"), 7, "2")]
    failure = suites[1].find("testcase[@name='hosts']/failure")
    assert failure is not None and failure.get("type") == "log of another job"
    assert "expected: ranks on the job's workers accept-h200-all-reduce-pair-worker-0" in (failure.text or "")


def test_a_job_of_the_fleet_is_not_an_acceptance_job() -> None:
    result = run_mpigen("verify", VERIFY_DATA / "perftest-edr-rail0.log", "--job", "resnet50-dgx", "-p", PROFILES)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.endswith(
        "error: 'resnet50-dgx' is a job of the fleet, not an acceptance job; its acceptance jobs are "
        "accept-dgx-all-gather-pair, accept-dgx-all-gather-pool, accept-dgx-all-reduce-pair, "
        "accept-dgx-all-reduce-pool, accept-dgx-perftest-rail0, accept-dgx-perftest-rail1, "
        "accept-dgx-perftest-rail2, accept-dgx-perftest-rail3\n")


def test_an_unknown_name_a_shared_name_and_a_log_of_nothing_are_errors(tmp_path: Path) -> None:
    unknown = run_mpigen("verify", VERIFY_DATA / "perftest-edr-rail0.log", "--job", "accept-h200-all-reduce",
                         "-p", VERIFY_FLEET)
    assert unknown.returncode == 1 and unknown.stderr.endswith(
        f"error: no acceptance job 'accept-h200-all-reduce' in {VERIFY_FLEET}; did you mean "
        "'accept-h200-all-reduce-pair', 'accept-b200-all-reduce-pair' or 'accept-h200-all-gather-pair'?\n")
    shared = run_mpigen("verify", VERIFY_DATA / "perftest-edr-rail0.log", "--job", "accept-dgx-perftest-rail0",
                        "-p", PROFILES)
    assert shared.returncode == 1 and shared.stderr.endswith(
        "error: 5 acceptance jobs are named 'accept-dgx-perftest-rail0' (on clusters dgx-lab, dgx-pod, netapp-lab, "
        "roce-lab, volcano-lab): give --cluster\n")
    empty = tmp_path / "launcher.log"
    empty.write_text("Initializing SSH...\n", encoding="utf-8")
    nothing = run_mpigen("verify", empty, "--job", H200_REDUCE, "-p", VERIFY_FLEET)
    assert (nothing.returncode, nothing.stdout) == (1, "")
    assert nothing.stderr == (f"error: {empty}: no nccl-tests output (no `# nThread` header, `#  Rank` line or table); "
                              f"give the log of job {H200_REDUCE}'s launcher\n")
    usage = run_mpigen("verify", empty, "-p", VERIFY_FLEET)
    assert usage.returncode == 2 and "Missing option '--job'" in usage.stderr


def test_the_miss_docs_verify_md_shows_is_what_verify_prints() -> None:
    """docs/verify.md shows a real log's misses in full (a block test_docs.py cannot run: its log is outside the
    copy of the fleet it runs sessions in); run here from the repository's root, it must print exactly that."""
    page = (REPO / "docs" / "verify.md").read_text(encoding="utf-8").split("\n")
    marker = next(i for i, line in enumerate(page) if "test_verify_cli.py runs it" in line)
    end = page.index("```", marker + 2)
    command, *shown = page[marker + 2:end]
    assert command.startswith("$ mpigen verify ")
    result = run_mpigen(*shlex.split(command)[2:], cwd=REPO)
    assert result.returncode == 1 and result.stdout.rstrip("\n").split("\n") == shown
