"""`mpigen validate --output json|sarif|junit` and `--strict`: profile errors reach code scanning at their line and
column, CI test views as a failure per diagnostic, and the text output stays as it was. SARIF and text through the real
command in a process of its own, the other outputs and options in-process (conftest.invoke_mpigen)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from conftest import PROFILES, invoke_mpigen, run_mpigen, sarif_problems

WARNED = {"jobs/language-bert.yaml": (PROFILES / "jobs" / "language-bert.yaml").read_text(encoding="utf-8")
          + "runAsUser: 1000\n"}  # two warnings: a non-root RDMA job, and its ssh keys
BROKEN = {  # a key mistyped (schema), a pool that does not exist (a reference), and the warnings
    "jobs/pi.yaml": (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8").replace("\nworkers:", "\nwokers:"),
    "jobs/resnet50-dgx.yaml": (PROFILES / "jobs" / "resnet50-dgx.yaml").read_text(encoding="utf-8").replace(
        "pool: dgx\n", "pool: dgxx\n"),
    **WARNED,
}
PLACE = re.compile(r"^(profiles/[^:]+):(\d+):(\d+): (error|warning): (.*)$")


def _text_diagnostics(stderr: str) -> list[tuple[str, int, int, str]]:
    return [(m[1], int(m[2]), int(m[3]), m[4]) for line in stderr.splitlines() if (m := PLACE.match(line))]


def test_sarif_results_are_where_the_text_says_each_of_its_rule(profiles_copy, tmp_path):
    profiles_copy(BROKEN)
    text = run_mpigen("validate", "profiles", cwd=tmp_path)
    sarif = run_mpigen("validate", "profiles", "--output", "sarif", cwd=tmp_path)
    assert (text.returncode, sarif.returncode, sarif.stderr) == (1, 1, "")
    assert sarif_problems(sarif.stdout) == []
    (run,) = json.loads(sarif.stdout)["runs"]
    places = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
               r["locations"][0]["physicalLocation"]["region"]["startLine"],
               r["locations"][0]["physicalLocation"]["region"]["startColumn"], r["level"]) for r in run["results"]]
    assert places == _text_diagnostics(text.stderr) and len(places) == 4
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
               for r in run["results"])
    rules = [r["ruleId"] for r in run["results"]]
    assert rules == ["job", "job", "schema/additionalProperties", "references"]
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} == set(rules)


def test_json_and_junit_carry_every_diagnostic(profiles_copy, tmp_path):
    profiles_copy(BROKEN)
    as_json = invoke_mpigen("validate", "profiles", "--output", "json", cwd=tmp_path)
    data = json.loads(as_json.stdout)
    assert (as_json.returncode, as_json.stderr, data["version"], data["valid"]) == (1, "", 1, False)
    assert data["summary"] == {"errors": 2, "warnings": 2, "profileFiles": 30}
    assert [(d["file"], d["line"], d["column"], d["severity"]) for d in data["diagnostics"]] == _text_diagnostics(
        invoke_mpigen("validate", "profiles", cwd=tmp_path).stderr)
    as_junit = invoke_mpigen("validate", "profiles", "--output", "junit", cwd=tmp_path)
    suite = ET.fromstring(as_junit.stdout).find("testsuite")
    cases = suite.findall("testcase")
    assert as_junit.returncode == 1 and len(cases) == 30 == int(suite.get("tests"))
    failures = {case.get("name"): [f.get("type") for f in case.findall("failure")] for case in cases}
    assert failures["profiles/jobs/pi.yaml"] == ["schema/additionalProperties"]
    assert failures["profiles/jobs/resnet50-dgx.yaml"] == ["references"]
    assert failures["profiles/jobs/language-bert.yaml"] == []  # warnings are the case's output, not failures
    assert suite.get("failures") == "2"


def test_strict_fails_on_warnings_and_the_text_output_is_as_it_was(profiles_copy, tmp_path):
    profiles_copy(WARNED)
    plain = invoke_mpigen("validate", "profiles", cwd=tmp_path)
    assert plain.returncode == 0 and plain.stdout == "30 profile(s) valid: 5 hardware, 10 cluster(s), 15 job(s)\n"
    warnings = [line for line in plain.stderr.splitlines() if line.startswith("profiles/jobs/language-bert.yaml:27:12: "
                                                                                "warning: ")]
    assert len(warnings) == 2 == len(plain.stderr.splitlines())
    strict = invoke_mpigen("validate", "profiles", "--strict", cwd=tmp_path)
    assert (strict.returncode, strict.stdout) == (1, "")
    assert strict.stderr.splitlines() == [*warnings, "2 warning(s) in 30 profile file(s); --strict fails on warnings"]
    as_json = invoke_mpigen("validate", "profiles", "--strict", "--output", "json", cwd=tmp_path)
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["valid"] is False


def test_a_kueue_timeout_under_a_first_pull_is_a_warning_at_the_clusters_line(profiles_copy, tmp_path):
    """Kueue evicts and requeues a job whose pods are not all ready within waitForPodsReady.timeout (Kueue
    site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md); its Configuration v1beta1 default, 5m (v0.14.0
    apis/config/v1beta1/defaults.go), is less than the 412 s dgx-pod's language-bert needs on a first pull
    (tests/unit/model/test_model_pods_ready.py): a warning, the profiles stay valid."""
    cluster = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
    assert "    timeoutSeconds: 600\n" in cluster
    line = cluster.splitlines().index("    timeoutSeconds: 600") + 1  # found, not numbered: other edits move it
    profiles_copy({"clusters/dgx-pod.yaml": cluster.replace("    timeoutSeconds: 600\n", "    timeoutSeconds: 300\n")})
    result = invoke_mpigen("validate", "profiles", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "30 profile(s) valid: 5 hardware, 10 cluster(s), 15 job(s)\n"
    assert result.stderr.splitlines() == [
        f"profiles/clusters/dgx-pod.yaml:{line}:21: warning: Kueue's waitForPodsReady timeout of 300 s is less than the "
        "412 s that job 'language-bert' (6 workers) needs for every pod to be ready on a first pull of a 20 GB image, "
        "each node at 100 MB/s or its share of the registry's 1250 MB/s: Kueue evicts it before it runs, and again "
        "after each requeue; set waitForPodsReady.timeout in Kueue's Configuration to 7m or more, and "
        "`timeoutSeconds` here; or state the image and the pull rates (`imageGB`, `nodePullMBps`, `registryMBps`)"]
