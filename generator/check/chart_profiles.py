"""The profiles a compiled chart was made from (its Chart.yaml's `mpigen/source`), found beside the chart and loaded
by the load stage, which keeps the line and column of every fact: what `check --context` judges against the live
nodes, so that a finding points at the profile line that is not true rather than at the rendered text."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from mpigen.load import ProfileFile, load_paths
from mpigen.load.catalogue import expand_hardware
from mpigen.model import Fleet
from mpigen.objects import chartfiles
from mpigen.readback.discover import ChartInfo
from mpigen.readback.inputs import inside
from mpigen.resolve import resolve
from mpigen.support.diagnostics import errors
from mpigen.support.worktree import git_top
from mpigen.validate import validate


@dataclass(frozen=True)
class ChartProfiles:
    """A resolved fleet and the profiles it came from; `charts` are the judged charts compiled from it."""

    fleet: Fleet
    documents: tuple[ProfileFile, ...]
    charts: tuple[ChartInfo, ...]

    def document(self, kind: str, name: str) -> ProfileFile:
        return next(d for d in self.documents if d.kind == kind and d.data.get("name") == name)


@dataclass
class FoundProfiles:
    fleets: list[ChartProfiles] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Charts whose profiles could not be found or read: they are judged by their rendered pods instead."""


def profiles_folder(chart: ChartInfo) -> Path | None:
    """The profiles folder a compiled chart's `mpigen/source` names: `source` is relative to that folder's parent
    (the project), so it is looked for above the chart, then in the working directory. Shown relative to the
    working directory where it lies below it.

    `source` is the chart's text, which anyone who can commit a chart may write: the folder is taken only where it
    lies, every link followed, inside the chart's project (the git work tree holding the chart, else the working
    directory), so that no chart makes check read a file outside its repository."""
    source = PurePosixPath(chart.annotations.get(chartfiles.SOURCE, ""))
    if source.is_absolute() or ".." in source.parts or len(source.parts) < 2:
        return None
    chart_folder = Path(os.path.abspath(chart.path))
    project = git_top(chart_folder) or Path.cwd().resolve()
    for base in (*chart_folder.parents, Path.cwd()):
        folder = base / source.parts[0]
        if (base / source).is_file() and all(inside(path, project) for path in (base, folder, base / source)):
            shown = os.path.relpath(folder)
            return Path(shown) if not shown.startswith("..") else folder
    return None


def chart_profiles(charts: list[ChartInfo]) -> FoundProfiles:
    """The fleets the compiled charts were made from, each profiles folder loaded, validated and resolved once."""
    found = FoundProfiles()
    by_folder: dict[Path, list[ChartInfo]] = {}
    for chart in charts:
        if not chart.compiled_by_mpigen:
            continue
        folder = profiles_folder(chart)
        if folder is None:
            found.notes.append(f"{chart.display}: its profile {chart.annotations[chartfiles.SOURCE]} is not found above "
                               "the chart nor in the working directory; its rendered pods are judged against the "
                               "nodes instead")
            continue
        by_folder.setdefault(folder, []).append(chart)
    for folder, judged in by_folder.items():
        loaded = load_paths([folder])
        expanded = expand_hardware(loaded.documents, loaded.unreadable)
        problems = errors(loaded.diagnostics + expanded.diagnostics
                          + validate(expanded.documents, [*loaded.unreadable, *expanded.unresolved]))
        if problems:
            found.notes.append(f"{folder}: the profiles do not validate ({problems[0].format()}); the rendered pods "
                               "of its charts are judged against the nodes instead")
            continue
        found.fleets.append(ChartProfiles(resolve(expanded.documents), tuple(expanded.documents), tuple(judged)))
    return found
