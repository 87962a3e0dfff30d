"""generator/check/report.py: text, JSON, JUnit and SARIF output of one result."""

from __future__ import annotations

import json
import re
import xml.dom.minidom
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import HOSTILE_NAME, RAW_CONTROL, sarif_problems

from mpigen.check.report import (
    FORMATS,
    RULE_DESCRIPTIONS,
    CheckReport,
    WorkloadSecurity,
    as_json,
    as_junit,
    as_sarif,
    as_text,
)
from mpigen.check.rules import RULES
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.support.diagnostics import Severity, one_line

MPIJOB = RenderedObject("charts/x/templates/mpijob.yaml", {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
                                                     "metadata": {"name": "x"}}, "charts/x")
CONFIG = RenderedObject("charts/x/templates/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x-h"}},
                  "charts/x")



@pytest.fixture(autouse=True)
def _outside_any_repository(tmp_path, monkeypatch):
    """SARIF names files relative to the git work tree the command runs in: here, the working folder, so the URIs
    below are the paths as given wherever the tests run from."""
    monkeypatch.chdir(tmp_path)

def _report() -> CheckReport:
    return CheckReport(
        findings=[Finding(MPIJOB.source, "MPIJob/x", ".spec.slotsPerWorker", "must be an integer", "schema"),
                  Finding(MPIJOB.source, "MPIJob/x", "", "slotsPerWorker 0 runs nothing", "mpi-operator",
                          Severity.WARNING)],
        documents=[MPIJOB, CONFIG], charts=["charts/x"])


def test_text_names_file_object_path_and_message():
    assert as_text(_report()).splitlines() == [
        "charts/x/templates/mpijob.yaml: MPIJob/x: .spec.slotsPerWorker: must be an integer",
        "charts/x/templates/mpijob.yaml: MPIJob/x: warning: slotsPerWorker 0 runs nothing",
        "1 error(s), 1 warning(s) in 2 document(s) of 1 chart(s) and 0 manifest file(s)",
    ]


def test_json_carries_every_finding_and_the_counts():
    data = json.loads(as_json(_report()))
    assert data["summary"] == {"errors": 1, "warnings": 1, "documents": 2, "charts": ["charts/x"], "files": []}
    assert data["findings"][0] == {"source": MPIJOB.source, "object": "MPIJob/x", "path": ".spec.slotsPerWorker",
                                   "message": "must be an integer", "rule": "schema", "severity": "error",
                                   "line": None, "column": None}
    report = _report()
    report.places = {report.findings[0]: (12, 5), report.findings[1]: (3, 0)}
    assert [(f["line"], f["column"]) for f in json.loads(as_json(report))["findings"]] == [(12, 5), (3, None)]


def test_junit_has_a_case_per_document_and_a_failure_per_failing_one():
    root = ET.fromstring(as_junit(_report()))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"MPIJob/x", "ConfigMap/x-h"}
    assert cases["MPIJob/x"].find("failure").get("message") == "must be an integer"
    assert cases["ConfigMap/x-h"].find("failure") is None
    assert "slotsPerWorker 0" in cases["MPIJob/x"].find("system-out").text


def test_clean_report():
    report = CheckReport(documents=[CONFIG], charts=["charts/x"])
    assert as_text(report) == "0 error(s), 0 warning(s) in 1 document(s) of 1 chart(s) and 0 manifest file(s)\n"
    assert ET.fromstring(as_junit(report)).find("testsuite").get("failures") == "0"


def test_sarif_is_one_run_of_results_each_at_its_file_with_its_rule_level_and_object():
    log = json.loads(as_sarif(_report()))
    assert (log["version"], len(log["runs"])) == ("2.1.0", 1)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mpigen" and [rule["id"] for rule in driver["rules"]] == ["mpi-operator", "schema"]
    for rule in driver["rules"]:  # GitHub requires the full description and help of each rule
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
    error, warning = run["results"]
    assert (error["ruleId"], error["level"], warning["ruleId"], warning["level"]) == \
        ("schema", "error", "mpi-operator", "warning")
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        assert location["physicalLocation"] == {  # code scanning needs a line: 1 where the finding has no place
            "artifactLocation": {"uri": "charts/x/templates/mpijob.yaml", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 1}}
    assert error["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "MPIJob/x .spec.slotsPerWorker",
                                                          "kind": "object"}]
    assert error["message"]["text"] == "MPIJob/x .spec.slotsPerWorker: must be an integer"


def test_sarif_puts_each_finding_at_its_place_and_is_valid_against_the_sarif_schema():
    report = _report()
    report.places = {report.findings[0]: (12, 5), report.findings[1]: (3, 0)}
    text = as_sarif(report)
    assert sarif_problems(text) == []
    error, warning = json.loads(text)["runs"][0]["results"]
    assert error["locations"][0]["physicalLocation"]["region"] == {"startLine": 12, "startColumn": 5}
    assert warning["locations"][0]["physicalLocation"]["region"] == {"startLine": 3}
    assert sarif_problems(as_sarif(_hostile())) == []


def test_junit_has_a_failure_per_finding_each_of_its_rule():
    """main grouped the errors of one object under one failure, typed by the first one's rule."""
    capacity = Finding(MPIJOB.source, "MPIJob/x", ".spec", "asks for 16 GPUs, a node has 8", "capacity")
    network = Finding(MPIJOB.source, "MPIJob/x", ".metadata", "attaches rail0, which no NAD defines", "network")
    report = CheckReport(findings=[capacity, network], documents=[MPIJOB, CONFIG], charts=["charts/x"])
    root = ET.fromstring(as_junit(report))
    (suite,) = root.iter("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failures = cases["MPIJob/x"].findall("failure")
    assert [(f.get("type"), f.get("message"), f.text) for f in failures] == [
        ("capacity", capacity.message, capacity.format()), ("network", network.message, network.format())]
    assert (suite.get("tests"), suite.get("failures")) == (root.get("tests"), root.get("failures")) == ("2", "1")


def test_sarif_fingerprints_tell_findings_at_the_same_line_apart_and_follow_each_across_runs():
    """GitHub matches alerts by primaryLocationLineHash alone: every finding is at line 1 of its file, so the
    hash must come from the finding, or all of a file's findings would be one alert."""
    first = json.loads(as_sarif(_report()))["runs"][0]["results"]
    reordered = _report()
    reordered.findings.reverse()
    again = json.loads(as_sarif(reordered))["runs"][0]["results"]
    hashes = [result["partialFingerprints"]["primaryLocationLineHash"] for result in first]
    assert len(set(hashes)) == 2 and all(h.endswith(":1") for h in hashes)
    assert sorted(hashes) == sorted(result["partialFingerprints"]["primaryLocationLineHash"] for result in again)


def test_sarif_locations_are_uri_references():
    report = CheckReport(findings=[Finding("my charts/x/job.yaml", "Job/x", "", "bad", "schema")])
    (result,) = json.loads(as_sarif(report))["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20charts/x/job.yaml"


RULE_ARGUMENT = (r'(?:Finding\(|finding\()[^()]*?(?:\([^()]*\)[^()]*?)*,\s*"([a-z][a-z-]*)"'
                 r'\s*(?:,\s*Severity\.\w+)?\)')
"""The rule string a `Finding(...)` or `finding(...)` call ends with (before an optional severity)."""


def test_every_rule_a_finding_can_carry_has_a_description_for_sarif():
    """Every rule string a Finding is made with in generator/check and generator/readback (and each rule of RULES)."""
    package = Path(__file__).resolve().parents[3] / "generator"
    made = set()
    for path in [*(package / "check").rglob("*.py"), *(package / "readback").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        made |= set(re.findall(RULE_ARGUMENT, text, re.DOTALL))
    made |= {rule.name for rule in RULES} | {"schema"}
    assert {"yaml", "lint", "render", "input"} <= made  # the scan finds what it should
    assert made <= set(RULE_DESCRIPTIONS), made - set(RULE_DESCRIPTIONS)


# --- hostile text in every format ---------------------------------------------------------------------------

def _hostile() -> CheckReport:
    """Object names, a file name, a JSON path, messages and a namespace holding terminal escapes, C1, bidi controls and
    characters XML 1.0 cannot hold (HOSTILE_NAME), as a manifest folder can give them to check."""
    source = f"manifests/{HOSTILE_NAME.replace(chr(0), '')}.yaml"  # no file name holds NUL
    document = RenderedObject(source, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": HOSTILE_NAME}})
    return CheckReport(
        findings=[Finding(source, document.label, f'.metadata.labels["{HOSTILE_NAME}"]', f"refused: {HOSTILE_NAME}",
                          "names"),
                  Finding(source, document.label, "", f"warned: {HOSTILE_NAME}", "schema", Severity.WARNING)],
        notes=[f"rendering with helm ({HOSTILE_NAME})"], documents=[document], files=[source],
        pod_security=[WorkloadSecurity(source, document.label, HOSTILE_NAME, "privileged", (HOSTILE_NAME,))])


def test_the_text_report_prints_no_control_character_of_its_input():
    # main printed them raw: an OSC title retitled the reader's terminal, `\x1b[2J` cleared it, U+202E reversed the
    # line, and the lone surrogate stopped the output with a UnicodeEncodeError.
    text = as_text(_hostile())
    assert not RAW_CONTROL.search(text)
    assert text.encode("utf-8")  # no lone surrogate left
    assert "Pod/a\\x1b]0;owned\\x07\\x1b]8;;https://example.invalid/" in text and "\\u202eb\\x00\\x01\\x0b\\ud800" in text
    assert len(text.splitlines()) == 4  # two findings, one workload, the summary: nothing broke a line


def test_a_junit_report_with_characters_xml_cannot_hold_is_read_by_xml_parsers():
    # main wrote NUL, \x01, \x0b and a lone surrogate into the XML: `not well-formed (invalid token)`, and a CI
    # dropped the whole report, findings included.
    report = _hostile()
    text = as_junit(report)
    assert not RAW_CONTROL.search(text)
    root = ET.fromstring(text.encode("utf-8"))  # expat, as CI plug-ins use it
    xml.dom.minidom.parseString(text.encode("utf-8"))
    (case,) = root.iter("testcase")
    assert case.get("name") == one_line(f"Pod/{HOSTILE_NAME}")
    assert case.get("classname") == one_line(report.files[0])
    assert case.find("failure").get("message") == one_line(f"refused: {HOSTILE_NAME}")
    assert case.find("failure").text == report.findings[0].format()
    assert case.find("system-out").text == report.findings[1].format()


def test_json_and_sarif_carry_hostile_text_exactly_through_json_escapes():
    report = _hostile()
    for text in (as_json(report), as_sarif(report)):
        assert not RAW_CONTROL.search(text) and text.isascii()
    data = json.loads(as_json(report))
    assert data["findings"][0]["object"] == f"Pod/{HOSTILE_NAME}" and data["notes"] == report.notes
    assert data["podSecurity"][0]["namespace"] == HOSTILE_NAME
    log = json.loads(as_sarif(report))  # main raised UnicodeEncodeError on the surrogate, fingerprinting the finding
    result = log["runs"][0]["results"][0]
    assert result["message"]["text"] == f'Pod/{HOSTILE_NAME} .metadata.labels["{HOSTILE_NAME}"]: refused: {HOSTILE_NAME}'
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("manifests/a%1B%5D0%3Bowned")


def test_a_file_name_that_is_no_utf_8_is_a_uri_of_its_bytes():
    source = "charts/x\udcff.yaml"  # how Python reads the name b"charts/x\xff.yaml"
    report = CheckReport(findings=[Finding(source, "", "", "m", "yaml")])
    assert json.loads(as_sarif(report))["runs"][0]["results"][0]["locations"][0]["physicalLocation"][
        "artifactLocation"]["uri"] == "charts/x%FF.yaml"
    assert as_text(report).startswith("charts/x\\udcff.yaml: m\n")
    assert all(FORMATS[name](report) for name in FORMATS)
