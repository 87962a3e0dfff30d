"""`mpigen validate` for machines: the diagnostics as JSON (a stable, versioned shape), as SARIF for code scanning, or
as a JUnit report for CI test views. The text the command prints for people is the diagnostics' own `format`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from mpigen import __version__
from mpigen.load.catalogue import BUILTIN_PREFIX
from mpigen.support.ci_reports import JUnitCase, JUnitFailure, JUnitSuite, SarifPlace, SarifResult, junit_xml, sarif_log
from mpigen.support.diagnostics import Diagnostic, Severity
from mpigen.support.profile_rules import describe

JSON_VERSION = 1
"""The version of the JSON shape (docs/errors.md#machine-readable-output): raised when a field changes or goes;
fields may be added within a version."""
UNNAMED_RULE = "profile"
"""The rule of a diagnostic no check named (none should be left: a test holds every rule described)."""


@dataclass(frozen=True)
class FleetCounts:
    hardware: int
    clusters: int
    jobs: int


@dataclass(frozen=True)
class ValidateReport:
    """What one `mpigen validate` found: every diagnostic, the profile files read (as the user named them), and the
    fleet's size where it resolved. Under `strict` a warning fails the run as an error does."""

    diagnostics: tuple[Diagnostic, ...]
    files: tuple[str, ...]
    profile_files: int
    fleet: FleetCounts | None = None
    strict: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def failed(self) -> bool:
        return bool(self.errors or (self.strict and self.warnings))

    def fails(self, diagnostic: Diagnostic) -> bool:
        return diagnostic.severity is Severity.ERROR or self.strict


def _rule(diagnostic: Diagnostic) -> str:
    return diagnostic.rule or UNNAMED_RULE


def as_json(report: ValidateReport) -> str:
    """`{"version": 1, "valid", "strict", "diagnostics": [...], "summary": {...}}`; every diagnostic has every key
    (`code` null where it has none), and `summary` counts the fleet only where it resolved."""
    summary: dict[str, object] = {"errors": len(report.errors), "warnings": len(report.warnings),
                                  "profileFiles": report.profile_files}
    if report.fleet is not None:
        summary |= {"hardware": report.fleet.hardware, "clusters": report.fleet.clusters, "jobs": report.fleet.jobs}
    return json.dumps({
        "version": JSON_VERSION, "valid": not report.failed, "strict": report.strict,
        "diagnostics": [{"file": d.location.path, "line": d.location.line, "column": d.location.column,
                         "severity": d.severity.value, "rule": _rule(d), "code": d.code or None, "message": d.message,
                         "hint": d.hint} for d in report.diagnostics],
        "summary": summary,
    }, indent=2) + "\n"


def as_sarif(report: ValidateReport) -> str:
    """Each diagnostic a result at its profile's line and column, under its rule; the message with its hint, as the
    text output says it."""
    results = [SarifResult(_rule(d), "error" if d.severity is Severity.ERROR else "warning",
                           f"{d.message}; {d.hint}" if d.hint else d.message,
                           SarifPlace(d.location.path, d.location.line, d.location.column),
                           (d.location.path, d.message)) for d in report.diagnostics]
    return sarif_log(__version__, "mpigen/validate", {r.rule: describe(r.rule) for r in results}, results)


def as_junit(report: ValidateReport) -> str:
    """A test case per profile file (and per other place a diagnostic names, such as a folder that cannot be read), a
    failure per error (per warning too under `strict`) with its rule as the failure's type; other warnings are the
    case's output."""
    by_file: dict[str, list[Diagnostic]] = {path: [] for path in report.files if not path.startswith(BUILTIN_PREFIX)}
    for diagnostic in sorted(report.diagnostics, key=lambda d: d.location.path not in by_file):
        by_file.setdefault(diagnostic.location.path, []).append(diagnostic)
    cases = tuple(JUnitCase("mpigen validate", path,
                            tuple(JUnitFailure(d.message, _rule(d), d.format()) for d in found if report.fails(d)),
                            "\n".join(d.format() for d in found if not report.fails(d)))
                  for path, found in by_file.items())
    return junit_xml(JUnitSuite("mpigen validate", cases))


FORMATS: dict[str, Callable[[ValidateReport], str]] = {"json": as_json, "sarif": as_sarif, "junit": as_junit}
"""The machine formats of `mpigen validate --output`; `text` is what the command prints itself."""
