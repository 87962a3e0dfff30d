"""What `mpigen check` is pointed at: chart folders (with what their Chart.yaml says) and manifest files.

Walking the folders is kept apart from rendering so that `check`, `diff` and the schema set's --crds
folders find targets the same way, and a chart Helm would refuse is named before anything runs.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpigen.model import Selection
from mpigen.objects import chartfiles
from mpigen.readback.documents import load_yaml_file
from mpigen.readback.findings import Finding, NodeShape
from mpigen.readback.inputs import InputError, chart_refusals, inside

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

MAX_RELEASE_NAME = 53
PLACEHOLDER_RELEASE = "release-name"
"""What `helm template` calls a release it is given no name for."""
_RELEASE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclass(frozen=True)
class ChartInfo:
    """A chart folder and what its Chart.yaml says; `display` is the folder as the user named it."""

    path: Path
    display: str
    name: str
    annotations: dict[str, str]

    @property
    def has_valid_name(self) -> bool:
        """Whether Helm takes the name as a release name (what Argo CD and check render the chart as)."""
        return len(self.name) <= MAX_RELEASE_NAME and _RELEASE_NAME.fullmatch(self.name) is not None

    @property
    def release(self) -> str:
        """The release name to render with: the chart's name, once validated, else Helm's placeholder."""
        return self.name if self.has_valid_name else PLACEHOLDER_RELEASE

    @property
    def compiled_by_mpigen(self) -> bool:
        return chartfiles.SOURCE in self.annotations

    @property
    def is_job_chart(self) -> bool:
        """A job chart mpigen compiled: its Chart.yaml names the job object (an infra chart's names none)."""
        return self.compiled_by_mpigen and chartfiles.MPIJOB in self.annotations

    @property
    def kubernetes_version(self) -> str | None:
        return self.annotations.get(chartfiles.KUBERNETES_VERSION)

    @property
    def node_shape(self) -> NodeShape | None:
        raw = self.annotations.get(chartfiles.NODE_RESOURCES)
        if raw is None:
            return None
        try:
            resources = json.loads(raw)
        except ValueError:
            return None
        return NodeShape(self.annotations.get(chartfiles.CLUSTER, ""), self.annotations.get(chartfiles.POOL, ""),
                         {str(k): v for k, v in resources.items()} if isinstance(resources, dict) else {},
                         self._device_classes())

    def _device_classes(self) -> tuple[str, ...]:
        try:
            classes = json.loads(self.annotations.get(chartfiles.DEVICE_CLASSES, "[]"))
        except ValueError:
            return ()
        return tuple(c for c in classes if isinstance(c, str)) if isinstance(classes, list) else ()


@dataclass
class Targets:
    charts: list[ChartInfo] = field(default_factory=list)
    manifests: list[Path] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)


def read_chart(path: Path, display: str) -> ChartInfo | Finding:
    try:
        meta = load_yaml_file(path / chartfiles.CHART_YAML)
    except InputError as exc:
        return Finding(f"{display}/{chartfiles.CHART_YAML}", "", "", f"cannot read {chartfiles.CHART_YAML}: {exc}", "chart")
    if not isinstance(meta, dict):
        return Finding(f"{display}/{chartfiles.CHART_YAML}", "", "", f"{chartfiles.CHART_YAML} is not a mapping", "chart")
    name = meta.get("name", path.name)
    return ChartInfo(path, display, name if isinstance(name, str) else str(name), chart_annotations(meta))


def chart_annotations(meta: dict[Any, Any]) -> dict[str, str]:
    """A Chart.yaml's annotations, each as a string ({} where there are none, or they are no mapping): how check
    and `render --check` read the `mpigen/*` annotations of a chart on disk."""
    annotations = meta.get("annotations") or {}
    return {str(k): str(v) for k, v in annotations.items()} if isinstance(annotations, dict) else {}


def chart_name_findings(chart: ChartInfo) -> list[Finding]:
    """A chart name Helm would not take as a release name is an error: never an argument to Helm."""
    if chart.has_valid_name:
        return []
    shown = json.dumps(chart.name[:80])
    return [Finding(f"{chart.display}/{chartfiles.CHART_YAML}", "", "", f"name {shown} is not a valid Helm release name "
                    f"(lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most "
                    f"{MAX_RELEASE_NAME} characters); rename the chart. Checked as release `{PLACEHOLDER_RELEASE}`",
                    "chart")]


def _walk(root: Path, display: str, charts: bool,
          suffixes: tuple[str, ...] | None = MANIFEST_SUFFIXES) -> tuple[list[Path], list[Path], list[Finding]]:
    """Chart folders (when `charts`), manifest files (or every file, for `suffixes` None) and refused links under
    `root`, in a stable order: a folder's files before its subfolders'. Hidden files and folders are read too
    (kubectl applies a `.pod.yaml`, and `apply -R` walks hidden folders), all but `.git`; links are followed only
    while they stay inside `root`, and each folder is read once."""
    base = root.resolve()
    chart_folders: list[Path] = []
    files: list[Path] = []
    problems: list[Finding] = []
    seen: set[Path] = set()
    pending = [root]
    while pending:
        here = pending.pop()
        real = here.resolve()
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted((e for e in os.scandir(here) if e.name != ".git"), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Finding(_shown(here, root, display), "", "", f"cannot list: {exc.strerror}", "input"))
            continue
        if charts and any(e.name == chartfiles.CHART_YAML for e in entries):
            chart_folders.append(here)  # a chart's own files (templates, subcharts) are Helm's to read
            continue
        folders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink() and not inside(path, base):
                problems.append(Finding(_shown(path, root, display), "", "", f"is a link to '{os.readlink(path)}', "
                                        f"outside {display}: not checked. Argo CD refuses such links too: copy the "
                                        "file in instead", "input"))
            elif entry.is_dir():
                folders.append(path)
            elif suffixes is None or entry.name.endswith(suffixes):
                files.append(path)
        pending += reversed(folders)
    return chart_folders, files, problems


def _shown(path: Path, root: Path, display: str) -> str:
    relative = path.relative_to(root).as_posix()
    return display if relative == "." else f"{display}/{relative}"


def manifest_files(root: Path) -> tuple[list[Path], list[Finding]]:
    """Every manifest file under `root` (a file, or a folder searched without leaving it)."""
    if root.is_file():
        return [root], []
    _, files, problems = _walk(root, root.as_posix(), charts=False)
    return files, problems


def every_file(root: Path, display: str) -> tuple[list[Path], list[Finding]]:
    """Every file under the folder `root` (not only manifests: `diff` reads the Lua of a GitOps bootstrap folder
    too), found as `manifest_files` finds them; `display` names `root` in findings."""
    _, files, problems = _walk(root, display, charts=False, suffixes=None)
    return files, problems


def discover(paths: list[Path]) -> Targets:
    """Chart folders (those holding Chart.yaml) and manifest files under `paths`, in a stable order."""
    targets = Targets()
    for root in paths:
        display = root.as_posix().rstrip("/") or "."
        if root.exists() and not root.is_dir():  # a FIFO or device too: reading it says why it is refused
            targets.manifests.append(root)
            continue
        if not root.is_dir():
            targets.problems.append(Finding(display, "", "", "no such file or folder", "usage"))
            continue
        chart_folders, files, problems = _walk(root, display, charts=True)
        targets.manifests += files
        targets.problems += problems
        for folder in chart_folders:
            info = read_chart(folder, _shown(folder, root, display))
            if isinstance(info, Finding):
                targets.problems.append(info)
            else:
                targets.charts.append(info)
    targets.charts.sort(key=lambda chart: chart.display)
    return targets


def chart_refusal_findings(chart: ChartInfo) -> list[Finding]:
    """What in the chart folder neither Helm nor mpigen may read (see inputs.chart_refusals)."""
    return [Finding(f"{chart.display}/{r.path}" if r.path != "." else chart.display, "", "",
                    f"{r.why}; the chart is not rendered", "render") for r in chart_refusals(chart.path)]


def chosen_targets(targets: Targets, selection: Selection) -> tuple[Targets, Targets, list[str]]:
    """The targets of the clusters and jobs `selection` names (`check --cluster NAME --job NAME`), by what each
    chart's Chart.yaml says (charts mpigen compiled name their cluster): a job's chart; a cluster's charts, and the
    manifest files in its folder (the GitOps bootstrap beside its infra chart) unless jobs are named. Then the rest:
    what exists beside them (an infra chart's NADs and namespaces, a bootstrap's objects), to be read as context and
    not judged, so that a selection narrows what is reported and never changes its verdict. Also what the selection
    names that none of the targets is, with the closest names there are."""
    if selection.everything:
        return targets, Targets(), []
    clustered = [(chart, chart.annotations[chartfiles.CLUSTER]) for chart in targets.charts
                 if chartfiles.CLUSTER in chart.annotations]
    unknown = selection.unknown({cluster for _, cluster in clustered},
                                {(chart.name, cluster) for chart, cluster in clustered if chart.is_job_chart})
    charts = [chart for chart, cluster in clustered
              if (selection.has_job(chart.name, cluster) if chart.is_job_chart
                  else selection.whole_clusters and selection.has_cluster(cluster))]
    folders = {chart.path.parent.resolve() for chart in charts if not chart.is_job_chart}
    manifests = [file for file in targets.manifests if any(inside(file, folder) for folder in folders)]
    rest = Targets([chart for chart in targets.charts if chart not in charts],
                   [file for file in targets.manifests if file not in manifests])
    return Targets(charts, manifests, targets.problems), rest, unknown
