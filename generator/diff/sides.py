"""The two sides `mpigen diff` compares, as units keyed by cluster and path: each chart, and each file of a
cluster's GitOps `bootstrap/` folder.

The old side is a charts folder (on disk, or extracted from a git revision): every chart with the cluster its
`mpigen/cluster` annotation names (a chart mpigen did not compile: the first folder under the charts folder), and
every file under `<cluster>/bootstrap/`. The new side is what the profiles compile to: each `Chart`, its
`bootstrap` files, and its `held_back` job object. Both read a chart's facts from its Chart.yaml annotations, and a
bootstrap file the way `kubectl apply` would (YAML object by object; anything else, or YAML that does not parse,
as text).
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpigen.check.helm import helm_template
from mpigen.diff.objects import keyed
from mpigen.model import names
from mpigen.objects import chartfiles
from mpigen.package import Chart
from mpigen.readback import kubeyaml
from mpigen.readback.discover import MANIFEST_SUFFIXES, chart_annotations, chart_name_findings, discover, every_file
from mpigen.readback.documents import parse_manifest
from mpigen.readback.inputs import MAX_MANIFEST_FILE_BYTES, InputError, read_text
from mpigen.readback.own_renderer import own_render
from mpigen.support.diagnostics import Severity


class DiffError(Exception):
    """The old side cannot be had (no git, unknown revision); the message says what to do."""


@dataclass(frozen=True)
class Unit:
    """A chart or a bootstrap file of one cluster, as one side holds it."""

    cluster: str
    path: str
    """Under the charts folder: `dgx-pod/infra`, `dgx-pod/bootstrap/root/root-application.yaml`."""
    bootstrap: bool = False
    objects: tuple[dict[str, Any], ...] | None = ()
    """None: a bootstrap file compared as text (not a manifest, or one that does not parse)."""
    text: str = ""
    """A bootstrap file's text."""
    annotations: Mapping[str, str] = field(default_factory=dict)
    """A chart's Chart.yaml annotations."""
    held_back: dict[str, Any] | None = None
    """New side: the job object this release would compile for a run that keeps the spec it started with."""

    @property
    def key(self) -> tuple[str, str]:
        return self.cluster, self.path


Side = dict[tuple[str, str], Unit]


def first_folder(path: str) -> str:
    return path.split("/", 1)[0]


def _duplicates(unit: Unit) -> list[str]:
    _, twice = keyed(unit.objects or ())
    return [f"{unit.path}: holds {key} more than once; the last one is compared" for key in twice]


def bootstrap_unit(path: str, text: str) -> tuple[Unit, list[str]]:
    """A bootstrap file under the charts folder: its objects where it is a manifest that parses, else its text."""
    cluster = first_folder(path)
    if not path.endswith(MANIFEST_SUFFIXES):
        return Unit(cluster, path, bootstrap=True, objects=None, text=text), []
    documents, findings = parse_manifest(text, path)
    problems = [f.format() for f in findings]
    if any(f.severity is Severity.ERROR for f in findings):
        return Unit(cluster, path, bootstrap=True, objects=None, text=text), \
            [*problems, f"{path}: compared as text: it does not parse"]
    unit = Unit(cluster, path, bootstrap=True, objects=tuple(d.obj for d in documents), text=text)
    return unit, problems + _duplicates(unit)


# --- the new side ----------------------------------------------------------------------------------

def compiled_side(charts: list[Chart]) -> tuple[Side, list[str]]:
    """What the profiles compile to, with the annotations each chart's Chart.yaml carries."""
    side: Side = {}
    problems: list[str] = []
    for chart in charts:
        documents = kubeyaml.load_all(dict(chart.files).get(chartfiles.CHART_YAML, ""))
        annotations = chart_annotations(documents[0] if documents and isinstance(documents[0], dict) else {})
        unit = Unit(annotations.get(chartfiles.CLUSTER) or first_folder(chart.directory), chart.directory,
                    objects=tuple(m.obj for m in chart.manifests), annotations=annotations,
                    held_back=chart.held_back.obj if chart.held_back is not None else None)
        side[unit.key] = unit
        problems += _duplicates(unit)
        for path, text in chart.bootstrap:
            unit, found = bootstrap_unit(path, text)
            side[unit.key] = unit
            problems += found
    return side, problems


# --- the old side ----------------------------------------------------------------------------------

def rendered_side(folder: Path, helm: str | None) -> tuple[Side, list[str]]:
    """Every chart under `folder`, rendered with default values (Helm for charts mpigen did not compile), and every
    bootstrap file."""
    side: Side = {}
    if not folder.is_dir():
        return side, []
    problems: list[str] = []
    targets = discover([folder])
    problems += [f.format() for f in targets.problems]
    for chart in targets.charts:
        findings = chart_name_findings(chart)
        docs: list[Any] = []
        rendered = False
        if chart.compiled_by_mpigen:  # mpigen's own renderer refuses any chart it would render otherwise than Helm
            docs, own = own_render(chart)
            rendered = not own or bool(docs)
            if rendered or not helm:
                findings += own
        if not rendered and helm:
            docs, problems_of_helm = helm_template(helm, chart, None)
            findings += problems_of_helm
        elif not rendered and not chart.compiled_by_mpigen:
            problems.append(f"{chart.display}: not compiled by mpigen and no helm to render it; left out")
        problems += [f.format() for f in findings]
        path = chart.path.relative_to(folder).as_posix()
        unit = Unit(chart.annotations.get(chartfiles.CLUSTER) or first_folder(path), path,
                    objects=tuple(d.obj for d in docs), annotations=chart.annotations)
        side[unit.key] = unit
        problems += _duplicates(unit)
    units, found = _bootstrap_files(folder)
    side.update((unit.key, unit) for unit in units)
    return side, problems + found


def _bootstrap_files(folder: Path) -> tuple[list[Unit], list[str]]:
    """The files of every `<cluster>/bootstrap/` folder under `folder`, read as `check` reads manifests."""
    units: list[Unit] = []
    problems: list[str] = []
    for cluster in sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()):
        root = cluster / names.BOOTSTRAP_FOLDER
        if not root.is_dir() or root.is_symlink():
            continue
        files, refused = every_file(root, names.bootstrap_dir(cluster.name))
        problems += [f.format() for f in refused]
        for file in files:
            path = file.relative_to(folder).as_posix()
            try:
                text = read_text(file, MAX_MANIFEST_FILE_BYTES)
            except InputError as exc:
                problems.append(f"{path}: {exc}; left out")
                continue
            unit, found = bootstrap_unit(path, text)
            units.append(unit)
            problems += found
    return units, problems


def charts_at_revision(charts: Path, revision: str, into: Path) -> Path:
    """Extract the `charts` folder as it was at a git revision into `into`; returns its copy there."""
    folder = charts.resolve()
    probe = folder if folder.exists() else folder.parent
    top = _git(probe, "rev-parse", "--show-toplevel").decode().strip()
    relative = folder.relative_to(Path(top)).as_posix()
    _git(Path(top), "rev-parse", "--verify", f"{revision}^{{commit}}")
    listed = _git(Path(top), "ls-tree", "-r", "--name-only", revision, "--", relative).decode().split()
    if listed:
        archive = _git(Path(top), "archive", "--format=tar", revision, "--", relative)
        try:
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(into, filter="data")
        except (tarfile.TarError, OSError) as exc:  # e.g. a committed link out of the charts folder
            raise DiffError(f"cannot extract {relative} at {revision}: {exc}") from exc
    return into / relative


def _git(cwd: Path, *args: str) -> bytes:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=120, check=False)
    except OSError as exc:
        raise DiffError(f"cannot run git: {exc.strerror}") from exc
    if out.returncode != 0:
        raise DiffError(f"git {' '.join(args)}: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout
