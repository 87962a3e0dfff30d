"""The run of `mpigen diff`: the old side (the charts on disk, or checked out at a git revision) rendered, the
profiles compiled with that side's runs, and the two compared unit by unit and reviewed."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from mpigen.diff.compare import compare
from mpigen.diff.report import DiffReport
from mpigen.diff.review import review
from mpigen.diff.sides import DiffError, charts_at_revision, compiled_side, rendered_side
from mpigen.package import Chart


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
