"""The pieces of the reports CI systems read, shared by `mpigen validate` and `mpigen check`: a SARIF 2.1.0 log for
code scanning (GitHub's, GitLab's, editors') and a JUnit XML report for test views (GitLab's, Jenkins')."""

from __future__ import annotations

import hashlib
import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mpigen.support.diagnostics import one_line
from mpigen.support.worktree import git_top

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"
"""The uriBaseId of every artifact in the repository: code scanning resolves it to the checkout's root."""


@dataclass(frozen=True)
class SarifPlace:
    """Where a result is: a file as the user named it, and the line and column there (1-based; 0: unknown)."""

    path: str
    line: int = 1
    column: int = 0


@dataclass(frozen=True)
class SarifResult:
    rule: str
    level: str
    """`error` or `warning`."""
    message: str
    place: SarifPlace | None
    identity: tuple[str, ...]
    """What the result is, without where it is: the same from run to run while the problem stays, lines moving."""
    logical: str = ""
    """An object and JSON path in it (`MPIJob/x .spec.slotsPerWorker`), where the result names one."""


def sarif_log(tool_version: str, category: str, rules: dict[str, str], results: Sequence[SarifResult]) -> str:
    """One run of one tool: each rule used with its description (GitHub wants the full description and help of each),
    each result at its file, line and column, relative to the repository (`%SRCROOT%`), and fingerprinted.

    GitHub matches alerts by `primaryLocationLineHash` and computes one from the text of the line where none is given:
    the hash here comes from the result's identity instead, numbered where one identity occurs twice, so an alert
    follows its problem when lines move, and two problems on one line stay two alerts."""
    used = sorted({result.rule for result in results})
    root = _source_root()
    seen: dict[str, int] = {}
    entries = []
    for result in results:
        digest = hashlib.sha256("\0".join((result.rule, *result.identity)).encode("utf-8", "surrogatepass")).hexdigest()
        seen[digest] = seen.get(digest, 0) + 1
        entry: dict[str, Any] = {"ruleId": result.rule, "ruleIndex": used.index(result.rule), "level": result.level,
                                 "message": {"text": result.message}}
        location: dict[str, Any] = {}
        if result.place is not None and (artifact := artifact_location(result.place.path, root)) is not None:
            region = {"startLine": max(result.place.line, 1)}
            if result.place.column > 0:
                region["startColumn"] = result.place.column
            location["physicalLocation"] = {"artifactLocation": artifact, "region": region}
        if result.logical:
            location["logicalLocations"] = [{"fullyQualifiedName": result.logical, "kind": "object"}]
        if location:
            entry["locations"] = [location]
        entry["partialFingerprints"] = {"primaryLocationLineHash": f"{digest[:16]}:{seen[digest]}",
                                        "mpigenFinding/v1": digest}
        entries.append(entry)
    driver = {"name": "mpigen", "version": tool_version, "semanticVersion": tool_version,
              "rules": [{"id": rule, "shortDescription": {"text": rules[rule]}, "fullDescription": {"text": rules[rule]},
                         "help": {"text": rules[rule]}} for rule in used]}
    run = {"tool": {"driver": driver}, "automationDetails": {"id": f"{category}/"}, "results": entries}
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


def _source_root() -> Path:
    """What artifact URIs are relative to: the git work tree the command runs in, else the working folder."""
    here = Path(os.getcwd())
    return git_top(here) or here.resolve()


def artifact_location(path: str, root: Path) -> dict[str, str] | None:
    """A file as SARIF names it: a URI reference relative to `root` (`%SRCROOT%`), or an absolute `file:` URI for a
    file outside it; None for a name that is no file (a built-in hardware profile's `<builtin>/...`)."""
    if not path or path.startswith("<"):
        return None
    absolute = Path(os.path.abspath(path))
    relative = _inside(absolute, root)
    if relative is None:
        try:  # through the links that lead into the root (the working folder's own path may pass one)
            relative = _inside(absolute.resolve(), root)
        except (OSError, ValueError):  # a name no file system can hold (a lone surrogate): not a file here
            relative = None
    if relative is None:
        return {"uri": "file://" + _uri(absolute.as_posix())}
    return {"uri": _uri(relative.as_posix()), "uriBaseId": SOURCE_ROOT}


def _inside(path: Path, root: Path) -> Path | None:
    try:
        return path.relative_to(root)
    except ValueError:
        return None


def _uri(path: str) -> str:
    """A path as a URI reference: a name that is no UTF-8 (its bytes kept as surrogates, as Python reads file names)
    is percent-encoded byte for byte; any other lone surrogate as the bytes of its UTF-16 half."""
    try:
        return quote(path or ".", safe="/", errors="surrogateescape")
    except UnicodeEncodeError:
        return quote(path, safe="/", errors="surrogatepass")


@dataclass(frozen=True)
class JUnitFailure:
    message: str
    type: str
    """The rule that failed: CI views group and filter failures by it."""
    text: str


@dataclass(frozen=True)
class JUnitCase:
    classname: str
    name: str
    failures: tuple[JUnitFailure, ...] = ()
    output: str = ""
    """Said beside the result without failing it (warnings), as `system-out`."""


@dataclass(frozen=True)
class JUnitSuite:
    name: str
    cases: tuple[JUnitCase, ...] = field(default_factory=tuple)


def junit_xml(suite: JUnitSuite) -> str:
    """`testsuites` holding one `testsuite`: a `testcase` per case, a `failure` per failure (its rule as `type`).
    `tests` counts the cases and `failures` the cases that failed, as JUnit's own reports do, on both elements."""
    return junit_report(suite.name, (suite,))


def junit_report(name: str, suites: Sequence[JUnitSuite]) -> str:
    """`testsuites` named `name` holding each suite (`junit_xml` writes one).

    Every attribute and text passes `one_line` (a failure's text line by line): XML 1.0 cannot hold a NUL, a `\\x01`
    or a lone surrogate even as a character reference, and a CI that cannot parse the report drops it whole."""
    cases = sum(len(suite.cases) for suite in suites)
    failed = sum(1 for suite in suites for case in suite.cases if case.failures)
    root = ET.Element("testsuites", name=one_line(name), tests=str(cases), failures=str(failed), errors="0")
    for suite in suites:
        suite_failed = str(sum(1 for case in suite.cases if case.failures))
        element = ET.SubElement(root, "testsuite", name=one_line(suite.name), tests=str(len(suite.cases)),
                                failures=suite_failed, errors="0")
        for case in suite.cases:
            test = ET.SubElement(element, "testcase", classname=one_line(case.classname), name=one_line(case.name))
            for failure in case.failures:
                ET.SubElement(test, "failure", message=one_line(failure.message), type=one_line(failure.type)).text = \
                    "\n".join(one_line(line) for line in failure.text.split("\n"))
            if case.output:
                ET.SubElement(test, "system-out").text = "\n".join(one_line(line) for line in case.output.split("\n"))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
