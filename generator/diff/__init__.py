"""`mpigen diff`: the difference between charts as they are (on disk, or at a git revision) and what the profiles
compile to now, object by object and per cluster: what a reviewer needs, rather than a text diff of templates.

- sides.py: each side as units keyed by cluster and path (every chart, and every GitOps bootstrap file);
- compare.py, objects.py: the changed objects of each unit (a rename pairs only within one chart);
- review.py: the changes that need a person (action lines) and what a running job will and will not get (notes);
- report.py: text and JSON.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from generator.diff.compare import UnitChanges, compare
from generator.diff.objects import ObjectChange, diff_objects, object_key
from generator.diff.report import DiffReport, as_json, as_text
from generator.diff.review import Review, review
from generator.diff.sides import DiffError, charts_at_revision, compiled_side, rendered_side
from generator.package import Chart

__all__ = ["DiffError", "DiffReport", "ObjectChange", "Review", "UnitChanges", "as_json", "as_text", "diff_against",
           "diff_objects", "object_key"]


def diff_against(charts: Path, compile_with: Callable[[Path], tuple[list[Chart], Sequence[str]]],
                 revision: str | None, helm: str | None) -> DiffReport:
    """Changes from the charts (on disk, or at `revision`) to what the profiles compile to now. `compile_with`
    compiles the profiles with the runs of the old side's charts (each keeps its name and spec, as a render over
    those charts would), giving the charts and the problems found reading them."""
    if revision is not None and not revision.strip():
        raise DiffError("--against needs a git revision (e.g. origin/main); leave it out to compare with the "
                        "charts on disk")
    if revision is not None and revision.startswith("-"):
        raise DiffError(f"--against {revision}: a git revision does not start with '-'")
    with tempfile.TemporaryDirectory() as tmp:
        folder = charts_at_revision(charts, revision, Path(tmp)) if revision else charts
        compiled, known = compile_with(folder)
        old, problems = rendered_side(folder, helm)
    new, found = compiled_side(compiled)
    changed = compare(old, new)
    reviewed = review(changed, old, new, charts.as_posix())
    against = f"{charts.as_posix()} at {revision}" if revision else charts.as_posix()
    return DiffReport(against, tuple(changed), reviewed.actions, reviewed.notes, (*known, *problems, *found))
