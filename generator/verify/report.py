"""`mpigen verify`'s verdict as text for the terminal, JSON for machines and JUnit XML for CI test views: strings
from the verdict, nothing printed here. Whatever a log said is escaped where it is put into the text (`one_line`)."""

from __future__ import annotations

import json
from typing import Any

from mpigen.support.ci_reports import JUnitCase, JUnitFailure, JUnitSuite, junit_report
from mpigen.support.diagnostics import one_line
from mpigen.verify.judgement import Judgement, Verdict

VERIFY_FORMAT = 1
"""Version of `mpigen verify --output json`: raised when a field changes meaning or goes away."""
INDENT = "        "


def _details(judgement: Judgement) -> list[tuple[str, list[str]]]:
    """A miss's parts, each a heading and its lines: expected, the floor's chain, what was measured, likely causes."""
    parts = [("expected", [judgement.expected] if judgement.expected else []), ("floor", list(judgement.floor)),
             ("measured", list(judgement.measured)), ("likely causes", [judgement.causes])]
    return [(heading, lines) for heading, lines in parts if lines]


def verdict_text(verdict: Verdict) -> str:
    lines = [f"job {verdict.job} (cluster {verdict.cluster}): {verdict.what}"]
    for log in verdict.logs:
        lines += ["", f"log {one_line(log.log)} ({one_line(log.tool)}):"]
        for judgement in log.judgements:
            kind = "" if judgement.miss is None else f" ({judgement.miss.value})"
            lines.append(f"  {'pass' if judgement.passed else 'MISS'}  {judgement.name}{kind}: "
                         f"{one_line(judgement.summary)}")
            if judgement.passed:
                continue
            for heading, said in _details(judgement):
                lines.append(f"{INDENT}{heading}: {one_line(said[0])}")
                lines += [f"{INDENT}{' ' * (len(heading) + 2)}{one_line(line)}" for line in said[1:]]
    judged = sum(len(log.judgements) for log in verdict.logs)
    lines += ["", f"all {judged} judgements passed" if verdict.passed else
              f"{verdict.misses} of {judged} judgements missed"]
    return "\n".join(lines) + "\n"


def _judgement_json(judgement: Judgement) -> dict[str, Any]:
    return {"name": judgement.name, "passed": judgement.passed,
            "miss": judgement.miss.value if judgement.miss is not None else None, "summary": judgement.summary,
            "expected": judgement.expected, "floor": list(judgement.floor), "measured": list(judgement.measured),
            "causes": judgement.causes}


def verdict_json(verdict: Verdict) -> str:
    """Pure ASCII, as every JSON mpigen writes: a control character a log held is escaped, never raw."""
    body = {"format": VERIFY_FORMAT, "kind": "verify", "job": verdict.job, "cluster": verdict.cluster,
            "what": verdict.what, "passed": verdict.passed,
            "logs": [{"log": log.log, "tool": log.tool, "passed": log.passed,
                      "judgements": [_judgement_json(judgement) for judgement in log.judgements]}
                     for log in verdict.logs]}
    return json.dumps(body, indent=2) + "\n"


def verdict_junit(verdict: Verdict) -> str:
    """One testsuite per log, one testcase per judgement, a failure per miss (its kind as the failure's type)."""
    suites = []
    for log in verdict.logs:
        cases = []
        for judgement in log.judgements:
            text = "\n".join(f"{heading}: {line}" for heading, said in _details(judgement) for line in said)
            failures = () if judgement.miss is None else (JUnitFailure(judgement.summary, judgement.miss.value, text),)
            cases.append(JUnitCase(f"{verdict.cluster}.{verdict.job}", judgement.name, failures,
                                   output=judgement.summary if judgement.passed else ""))
        suites.append(JUnitSuite(log.log, tuple(cases)))
    return junit_report(f"mpigen verify {verdict.job}", suites)
