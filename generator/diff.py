"""Object-by-object difference between charts as they are (on disk, or at a git revision) and what
the profiles compile to now: what a reviewer needs, rather than a text diff of templates."""

from __future__ import annotations

import difflib
import io
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import yamlio
from generator.check.discover import chart_name_findings, discover
from generator.check.helm import helm_template
from generator.check.own_renderer import own_render
from generator.package import Chart


class DiffError(Exception):
    """The old side cannot be had (no git, unknown revision); the message says what to do."""


@dataclass(frozen=True)
class ObjectChange:
    key: str
    status: str  # "added", "removed", "changed", or "replaced" (renamed: a new run of a job)
    diff: str = ""


def object_key(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    name = metadata.get("name") or "?"
    return f"{obj.get('apiVersion', '?')} {obj.get('kind', '?')} {namespace + '/' if namespace else ''}{name}"


def _lineage(obj: dict[str, Any]) -> tuple[str, ...] | None:
    """What a renamed object keeps: its type, namespace and the Helm release it belongs to."""
    metadata = obj.get("metadata") or {}
    release = (metadata.get("labels") or {}).get("app.kubernetes.io/instance")
    if not release:
        return None
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(metadata.get("namespace") or ""), str(release))


def _replacements(removed: dict[str, dict[str, Any]], added: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Removed key -> added key, where a release lost exactly one object of a kind and gained exactly one:
    an MPIJob whose name carries the run's hash, and its hostfile ConfigMap, after a profile edit."""
    def by_lineage(objects: dict[str, dict[str, Any]]) -> dict[tuple[str, ...], list[str]]:
        grouped: dict[tuple[str, ...], list[str]] = {}
        for key, obj in objects.items():
            lineage = _lineage(obj)
            if lineage:
                grouped.setdefault(lineage, []).append(key)
        return grouped
    gone, new = by_lineage(removed), by_lineage(added)
    return {gone[lineage][0]: new[lineage][0] for lineage in gone.keys() & new.keys()
            if len(gone[lineage]) == 1 and len(new[lineage]) == 1}


def diff_objects(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[ObjectChange]:
    before = {object_key(o): o for o in old}
    after = {object_key(o): o for o in new}
    removed = {k: v for k, v in before.items() if k not in after}
    added = {k: v for k, v in after.items() if k not in before}
    replaced = _replacements(removed, added)
    replacing = set(replaced.values())
    changes: list[ObjectChange] = []
    for key in sorted(before.keys() | after.keys()):
        if key in replaced:
            name = (after[replaced[key]].get("metadata") or {}).get("name")
            changes.append(ObjectChange(f"{key} -> {name}", "replaced",
                                        _unified(yamlio.dump(before[key]), yamlio.dump(after[replaced[key]]), key,
                                                 replaced[key])))
        elif key in replacing:
            continue
        elif key not in before:
            changes.append(ObjectChange(key, "added", _unified("", yamlio.dump(after[key]), key)))
        elif key not in after:
            changes.append(ObjectChange(key, "removed", _unified(yamlio.dump(before[key]), "", key)))
        elif before[key] != after[key]:
            changes.append(ObjectChange(key, "changed", _unified(yamlio.dump(before[key]), yamlio.dump(after[key]), key)))
    return changes


def _unified(old: str, new: str, key: str, new_key: str | None = None) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a: {key}", tofile=f"b: {new_key or key}", n=3))


def compiled_objects(charts: list[Chart]) -> list[dict[str, Any]]:
    return [m.obj for chart in charts for m in chart.manifests]


def rendered_objects(folder: Path, helm: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The objects of every chart under `folder`, rendered with default values (Helm for charts mpigen
    did not compile)."""
    if not folder.exists():
        return [], []
    objects: list[dict[str, Any]] = []
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
        objects += [d.obj for d in docs]
        problems += [f.format() for f in findings]
    return objects, problems


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


def diff_against(charts: Path, compiled: list[Chart], revision: str | None,
                 helm: str | None) -> tuple[list[ObjectChange], list[str]]:
    """Changes from the charts (on disk, or at `revision`) to what the profiles compile to now."""
    if revision is not None and not revision.strip():
        raise DiffError("--against needs a git revision (e.g. origin/main); leave it out to compare with the "
                        "charts on disk")
    if revision is not None and revision.startswith("-"):
        raise DiffError(f"--against {revision}: a git revision does not start with '-'")
    with tempfile.TemporaryDirectory() as tmp:
        folder = charts_at_revision(charts, revision, Path(tmp)) if revision else charts
        old, problems = rendered_objects(folder, helm)
    return diff_objects(old, compiled_objects(compiled)), problems
