"""What re-rendering charts another mpigen release compiled brings: which release compiled them, and which runs
the new charts rename. `mpigen render --check` reports it after the list of stale files, so that a reviewer of an
upgrade knows the differences come with the release (CHANGELOG.md says what each release changes in compiled
output) and whether any running job would be started again.

Only the Chart.yaml files are read: each names the release that compiled it (`mpigen/release`) and, in a job chart,
the run (`mpigen/mpijob`). A Chart.yaml that is byte for byte what this release writes was compiled by it; only the
stale ones are judged, from the bytes `mpigen.write.compare_tree` found on disk."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from mpigen import __version__
from mpigen.continuity.committed import LEGACY_RELEASE
from mpigen.objects import chartfiles
from mpigen.readback.discover import chart_annotations
from mpigen.readback.documents import load_yaml_text
from mpigen.readback.inputs import MAX_DOCUMENT_BYTES, InputError, decode


def is_chart_yaml(path: str) -> bool:
    """Whether an output file is a chart's Chart.yaml (what `compare_tree` is asked to keep of the stale files)."""
    return path.rpartition("/")[2] == chartfiles.CHART_YAML


def chart_folder(path: str) -> str:
    """The chart's folder in the output folder, from its Chart.yaml's path."""
    return path.rpartition("/")[0]


def release_key(release: str) -> tuple[int, ...] | None:
    """`0.10.2` as (0, 10, 2), to tell an older release from a newer one; None for any other spelling."""
    return tuple(int(part) for part in release.split(".")) if re.fullmatch(r"[0-9]+(\.[0-9]+)*", release) else None


@dataclass(frozen=True)
class CompiledBy:
    """The charts of the output folder one other release compiled."""

    release: str
    annotated: bool
    """False: the charts name no release; the first release, 0.1.0 (`LEGACY_RELEASE`), wrote none."""
    newer: bool
    """The release is newer than this one: rendering with this one takes back what that release changed."""
    charts: tuple[str, ...]


@dataclass(frozen=True)
class RenamedRun:
    """A job whose new chart names another run than the one on disk: a GitOps sync deletes the running job and
    starts the new one."""

    chart: str
    old: str
    new: str


@dataclass(frozen=True)
class Upgrade:
    """Charts of the output folder other releases compiled, and the runs the new charts rename."""

    release: str
    """This release (`mpigen --version`)."""
    compiled_by: tuple[CompiledBy, ...]
    renamed: tuple[RenamedRun, ...]


def _annotations(data: bytes) -> dict[str, str] | None:
    """The annotations of a Chart.yaml found on disk that mpigen compiled; None for one it did not compile, or that
    cannot be read (a hand edit: the list of stale files names it already)."""
    if len(data) > MAX_DOCUMENT_BYTES:
        return None
    try:
        meta = load_yaml_text(decode(data))
    except InputError:
        return None
    if not isinstance(meta, dict):
        return None
    annotations = chart_annotations(meta)
    return annotations if chartfiles.SOURCE in annotations else None


def upgrade_of(found: Mapping[str, bytes], files: Mapping[str, bytes], release: str = __version__) -> Upgrade | None:
    """What rendering `files` (this release's output) over the stale Chart.yaml files `found` on disk brings; None
    when no chart on disk was compiled by another release. Renamed runs are those of every job chart on both sides
    (a profile edit renames a run as an upgrade may: both are listed)."""
    by_release: dict[tuple[str, bool], list[str]] = {}
    renamed: list[RenamedRun] = []
    for path, data in sorted(found.items()):
        old = _annotations(data)
        new_data = files.get(path)
        new = _annotations(new_data) if new_data is not None else None
        if old is None or new is None:
            continue
        annotated = chartfiles.RELEASE in old
        compiled = old.get(chartfiles.RELEASE, LEGACY_RELEASE)
        if compiled != release:
            by_release.setdefault((compiled, annotated), []).append(chart_folder(path))
        old_run, new_run = old.get(chartfiles.MPIJOB), new.get(chartfiles.MPIJOB)
        if old_run and new_run and old_run != new_run:
            renamed.append(RenamedRun(chart_folder(path), old_run, new_run))
    if not by_release:
        return None
    this = release_key(release)
    groups = []
    for (compiled, annotated), charts in sorted(by_release.items(), key=lambda item: (release_key(item[0][0]) or (),
                                                                                       item[0])):
        key = release_key(compiled)
        groups.append(CompiledBy(compiled, annotated, key is not None and this is not None and key > this, tuple(charts)))
    return Upgrade(release, tuple(groups), tuple(renamed))
