"""What stage 5 gives: a chart, its files and its objects, and every chart's files under the output folder."""

from __future__ import annotations

from dataclasses import dataclass

from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest


@dataclass(frozen=True)
class Chart:
    """One chart: where it goes under the output folder, its files, and the objects it renders to."""

    directory: str
    ref: ChartRef
    files: tuple[tuple[str, str], ...]
    manifests: tuple[Manifest, ...]
    bootstrap: tuple[tuple[str, str], ...] = ()
    """Infra charts of clusters with a GitOps tool: the files of `<cluster>/bootstrap/`, keyed by their
    path under the output folder (not the chart's: they are no part of it)."""
    source: str = ""
    """The profile the chart is compiled from (the job's, or the cluster's for an infra chart)."""
    held_back: Manifest | None = None
    """Job charts whose run keeps the spec it started with (`mpigen/run-release` older than this release): the
    job object as this release would compile it, written nowhere. `mpigen diff` shows what the next run gets."""


def output_files(charts: list[Chart]) -> dict[str, bytes]:
    """Every file of every chart, and the GitOps bootstrap files, keyed by their path under the output folder."""
    files: dict[str, bytes] = {}
    for chart in charts:
        for path, text in chart.files:
            files[f"{chart.directory}/{path}"] = text.encode("utf-8")
        for path, text in chart.bootstrap:
            files[path] = text.encode("utf-8")
    return dict(sorted(files.items()))
