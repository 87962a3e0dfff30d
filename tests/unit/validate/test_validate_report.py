"""generator/validate/report.py: `mpigen validate --output json|sarif|junit` of one result."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from conftest import HOSTILE_NAME, RAW_CONTROL, sarif_problems

from mpigen.commands.compile_commands import VALIDATE_FORMATS
from mpigen.support.diagnostics import Diagnostic, Location, Severity
from mpigen.support.profile_rules import DESCRIPTIONS
from mpigen.validate.report import FORMATS, FleetCounts, ValidateReport, as_json, as_junit, as_sarif

UNKNOWN_KEY = Diagnostic(Location("profiles/jobs/pi.yaml", 10, 1), "unknown key 'wokers' in the profile",
                         "did you mean 'workers'?", rule="schema/additionalProperties")
NO_POOL = Diagnostic(Location("profiles/jobs/pi.yaml", 8, 7), "cluster 'dgx-lab' has no node pool 'dgxx'",
                     "did you mean 'dgx'?", rule="references")
NOT_ROOT = Diagnostic(Location("profiles/jobs/big.yaml", 34, 12), "RDMA needs IPC_LOCK, which only takes effect for root",
                      "run as root", Severity.WARNING, rule="job")
FILES = ("profiles/clusters/dgx-lab.yaml", "profiles/jobs/big.yaml", "profiles/jobs/pi.yaml", "<builtin>/dgx-1.yaml")



@pytest.fixture(autouse=True)
def _outside_any_repository(tmp_path, monkeypatch):
    """SARIF names files relative to the git work tree the command runs in: here, the working folder, so the URIs
    below are the paths as given wherever the tests run from."""
    monkeypatch.chdir(tmp_path)

def _report(*diagnostics: Diagnostic, strict: bool = False) -> ValidateReport:
    return ValidateReport(diagnostics, FILES, 3, None if any(d.severity is Severity.ERROR for d in diagnostics)
                          else FleetCounts(0, 1, 2), strict)


def test_the_formats_are_the_options_of_the_command():
    assert sorted([*FORMATS, "text"]) == sorted(VALIDATE_FORMATS)


def test_json_is_versioned_and_gives_every_diagnostic_every_field():
    data = json.loads(as_json(_report(NO_POOL, NOT_ROOT)))
    assert (data["version"], data["valid"], data["strict"]) == (1, False, False)
    assert data["diagnostics"] == [
        {"file": "profiles/jobs/pi.yaml", "line": 8, "column": 7, "severity": "error", "rule": "references",
         "code": None, "message": NO_POOL.message, "hint": NO_POOL.hint},
        {"file": "profiles/jobs/big.yaml", "line": 34, "column": 12, "severity": "warning", "rule": "job", "code": None,
         "message": NOT_ROOT.message, "hint": NOT_ROOT.hint}]
    assert data["summary"] == {"errors": 1, "warnings": 1, "profileFiles": 3}
    clean = json.loads(as_json(_report(NOT_ROOT)))
    assert clean["valid"] and clean["summary"] == {"errors": 0, "warnings": 1, "profileFiles": 3, "hardware": 0,
                                                   "clusters": 1, "jobs": 2}
    assert not json.loads(as_json(_report(NOT_ROOT, strict=True)))["valid"]


def test_sarif_is_valid_and_puts_each_diagnostic_at_its_line_and_column_under_its_rule():
    text = as_sarif(_report(UNKNOWN_KEY, NO_POOL, NOT_ROOT))
    assert sarif_problems(text) == []
    (run,) = json.loads(text)["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["job", "references", "schema/additionalProperties"]
    assert rules[1]["fullDescription"]["text"] == DESCRIPTIONS["references"]
    assert "`additionalProperties`" in rules[2]["shortDescription"]["text"]
    assert run["automationDetails"]["id"] == "mpigen/validate/"
    first = run["results"][0]
    assert (first["ruleId"], first["level"], first["message"]["text"]) == (
        "schema/additionalProperties", "error", "unknown key 'wokers' in the profile; did you mean 'workers'?")
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "profiles/jobs/pi.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 10, "startColumn": 1}}
    assert [r["level"] for r in run["results"]] == ["error", "error", "warning"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])


def test_junit_has_a_case_per_profile_file_and_a_failure_per_diagnostic_with_its_rule():
    root = ET.fromstring(as_junit(_report(UNKNOWN_KEY, NO_POOL, NOT_ROOT)))
    (suite,) = root.iter("testsuite")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == list(FILES[:3])  # a built-in is no file of the user's
    failures = cases["profiles/jobs/pi.yaml"].findall("failure")
    assert [(f.get("type"), f.get("message"), f.text) for f in failures] == [
        ("schema/additionalProperties", UNKNOWN_KEY.message, UNKNOWN_KEY.format()),
        ("references", NO_POOL.message, NO_POOL.format())]
    assert cases["profiles/jobs/big.yaml"].find("failure") is None
    assert cases["profiles/jobs/big.yaml"].find("system-out").text == NOT_ROOT.format()
    failed = sum(1 for case in cases.values() if case.find("failure") is not None)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", str(failed), "0") == (
        root.get("tests"), root.get("failures"), root.get("errors"))


def test_under_strict_a_warning_is_a_failure_too():
    root = ET.fromstring(as_junit(_report(NOT_ROOT, strict=True)))
    (failure,) = root.iter("failure")
    assert (failure.get("type"), failure.text) == ("job", NOT_ROOT.format())
    assert root.get("failures") == "1"


def test_a_place_no_profile_file_is_gets_a_case_and_hostile_text_stays_readable():
    folder = Diagnostic(Location(f"profiles/{HOSTILE_NAME}"), "is a link that leads outside the profiles folder",
                        rule="files")
    text = as_junit(_report(folder))
    assert not RAW_CONTROL.search(text)
    root = ET.fromstring(text.encode("utf-8"))
    assert [case.find("failure").get("type") for case in root.iter("testcase") if case.find("failure") is not None] == [
        "files"]
    assert sarif_problems(as_sarif(_report(folder))) == []
