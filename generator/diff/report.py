"""`mpigen diff` as text for the terminal and as JSON for machines: strings from the report, nothing printed here.

Text: the action lines, then the notes, then one section per chart or bootstrap file that changed, under a header
naming its cluster (`== cluster dgx-pod, chart dgx-pod/infra ==`), each change as `status: key` and its unified
diff. JSON (`DIFF_FORMAT`): the same, pure ASCII.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mpigen.diff.compare import UnitChanges
from mpigen.diff.review import ACTION, HELD_BACK, NOTE, Review
from mpigen.support.diagnostics import one_line, printable

DIFF_FORMAT = 1
"""Version of `mpigen diff --format json`: raised when a field changes meaning or goes away (new fields do not
raise it)."""


@dataclass(frozen=True)
class DiffReport:
    against: str
    """The old side, as the user named it: `charts`, or `charts at origin/main`."""
    units: tuple[UnitChanges, ...]
    actions: tuple[Review, ...]
    notes: tuple[Review, ...]
    problems: tuple[str, ...]

    @property
    def change_count(self) -> int:
        return sum(len(unit.changes) for unit in self.units)

    def summary(self) -> str:
        counted = (f"{self.change_count} object(s) differ between {self.against} and the profiles"
                   if self.change_count else f"no object differs between {self.against} and the profiles")
        if self.actions:
            counted += f"; {len(self.actions)} change(s) need a person (the action lines)"
        return one_line(counted)


def header(cluster: str, path: str, bootstrap: bool) -> str:
    return one_line(f"== cluster {cluster}, {'bootstrap' if bootstrap else 'chart'} {path} ==")


def as_text(report: DiffReport) -> str:
    out = [one_line(r.line(ACTION)) + "\n" for r in report.actions]
    out += [one_line(r.line(NOTE)) + "\n" for r in report.notes]
    held = {(n.cluster, n.chart): n for n in report.notes if n.kind == HELD_BACK}
    sections = {(u.cluster, u.path): u for u in report.units}
    for key in sorted(sections.keys() | held.keys()):
        unit = sections.get(key)
        out.append(header(key[0], key[1], unit.bootstrap if unit else False) + "\n")
        for change in unit.changes if unit else ():
            out.append(f"{change.status}: {one_line(change.key)}\n" + printable(change.diff))
        if key in held:
            out.append(f"held back until the next run: {one_line(held[key].key)}\n" + printable(held[key].diff))
    return "".join(out)


def _review(review: Review) -> dict[str, Any]:
    return {"kind": review.kind, "cluster": review.cluster, "chart": review.chart, "key": review.key,
            "where": review.where, "what": review.what, "todo": review.todo, "command": review.command or None,
            "diff": review.diff}


def as_json(report: DiffReport) -> str:
    """Pure ASCII, as the other commands' JSON: a name's control or bidi character is written `\\u202e`."""
    return json.dumps({
        "format": DIFF_FORMAT,
        "kind": "diff",
        "against": report.against,
        "summary": {"changes": report.change_count, "actions": len(report.actions), "notes": len(report.notes),
                    "problems": len(report.problems)},
        "actions": [_review(r) for r in report.actions],
        "notes": [_review(r) for r in report.notes],
        "changes": [{"cluster": unit.cluster, "chart": unit.path, "bootstrap": unit.bootstrap, "key": change.key,
                     "status": change.status, "diff": change.diff}
                    for unit in report.units for change in unit.changes],
        "problems": list(report.problems),
    }, indent=2, ensure_ascii=True) + "\n"
