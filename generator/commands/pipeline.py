"""The stages wired in order, returning results instead of printing: the CLI only reports them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mpigen.load import ProfileFile, load_paths
from mpigen.load.catalogue import expand_hardware
from mpigen.manifests import raised_pod_security
from mpigen.model import EVERYTHING, Fleet, Selection
from mpigen.package import Chart, oversized_files, package_fleet
from mpigen.resolve import resolve
from mpigen.support.diagnostics import NEVER_FITS, Diagnostic, Severity, errors, names_text, raises, sort_diagnostics
from mpigen.support.profile_rules import POD_SECURITY
from mpigen.support.progress import Progress, stage
from mpigen.support.worktree import git_top
from mpigen.validate import validate

if TYPE_CHECKING:
    from mpigen.continuity.committed import HeldRun


@dataclass
class CompileResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fleet: Fleet | None = None
    charts: list[Chart] = field(default_factory=list)
    profile_count: int = 0
    paths: dict[str, str] = field(default_factory=dict)
    """Each profile's path as the user gave it, by its `source` (the name the model and the charts use)."""
    fingerprint: str | None = None
    """The digest of the profile files as read (mpigen.load.ProfilesFingerprint), None if loading reported
    anything."""
    documents: list[ProfileFile] = field(default_factory=list)
    """The profiles the fleet was resolved from (hardware expanded): where each value was written."""
    unfit: list[tuple[ProfileFile, list[Diagnostic]]] = field(default_factory=list)
    """Jobs set aside because they can never run where they are, with why (`check_profiles(set_aside_unfit)`)."""
    held: list[HeldRun] = field(default_factory=list)
    """Runs that keep the spec they started with, compiled by an earlier release (generator/continuity/committed.py)."""
    notes: list[str] = field(default_factory=list)
    """Warnings about the committed charts: one that could not be read, a spec that could not be kept."""

    @property
    def ok(self) -> bool:
        return not errors(self.diagnostics)


def check_profiles(paths: Iterable[Path], set_aside_unfit: bool = False,
                   committed_in: Path | None = None, progress: Progress | None = None) -> CompileResult:
    """Load, validate and resolve. `set_aside_unfit`: a job that is sound but can never run where it is
    (`NEVER_FITS`) is left out of the fleet and listed in `unfit`, instead of failing the whole (`mpigen plan`).
    `committed_in`: the output folder whose job charts say what each run is called (generator/continuity/committed.py): a run
    keeps its name while its profiles ask the same of it; None names every run as new. `progress` hears of each
    stage as it goes (`mpigen -v`, the progress line of a terminal)."""
    with stage(progress, "load", "profile file(s)", "loading profiles") as loading:
        loaded = load_paths(paths, tally=loading.tally)
        loading.count = loaded.file_count
    with stage(progress, "validate", "profile(s)", "validating profiles") as validating:
        expanded = expand_hardware(loaded.documents, loaded.unreadable)
        problems = validate(expanded.documents, [*loaded.unreadable, *expanded.unresolved], tally=validating.tally)
        validating.count = len(expanded.documents)
    diagnostics = sort_diagnostics(loaded.diagnostics + expanded.diagnostics + problems)
    documents = expanded.documents
    unfit: dict[str, list[Diagnostic]] = {}
    if set_aside_unfit:
        for diagnostic in errors(diagnostics):
            if diagnostic.code == NEVER_FITS:
                unfit.setdefault(diagnostic.location.path, []).append(diagnostic)
        diagnostics = [d for d in diagnostics if d.code != NEVER_FITS]  # each is in `unfit` now
        documents = [d for d in documents if d.kind != "Job" or d.path not in unfit]
    result = CompileResult(diagnostics=diagnostics, profile_count=loaded.file_count,
                           paths={document.source: document.path for document in expanded.documents},
                           fingerprint=loaded.fingerprint, documents=documents,
                           unfit=[(d, unfit[d.path]) for d in expanded.documents if d.kind == "Job" and d.path in unfit])
    if result.ok:
        with stage(progress, "resolve", "job(s)", "resolving jobs") as resolving:
            if committed_in is not None:  # reads charts as `mpigen check` does: loaded only where a command names them
                from mpigen.continuity.committed import read_committed
                committed = read_committed(committed_in)
                result.notes = committed.problems
            result.fleet = resolve(documents, committed.runs if committed_in is not None else None)
            resolving.count = len(result.fleet.jobs)
        result.diagnostics = sort_diagnostics(result.diagnostics + raised_pod_security_warnings(result.fleet, documents))
    return result


@raises(POD_SECURITY)
def raised_pod_security_warnings(fleet: Fleet, documents: list[ProfileFile]) -> list[Diagnostic]:
    """A warning at a cluster's `podSecurity` entry whose level its jobs raise (the infra chart labels the namespace
    with what the jobs need), naming the jobs (the first few: `names_text`) and the level used."""
    by_source = {document.source: document for document in documents}
    found = []
    for cluster in fleet.clusters:
        for raised in raised_pod_security(cluster, fleet.jobs_of(cluster) + fleet.acceptance_of(cluster)):
            needs = names_text([f"job {name} needs {need.describe() if need.level == raised.level else need.level.label}"
                                for name, need in raised.jobs])
            found.append(Diagnostic(
                by_source[cluster.source].location("podSecurity", raised.namespace),
                f"`podSecurity` asks for {raised.asked.label} in namespace '{raised.namespace}', but {needs}: the "
                f"infra chart labels the namespace {raised.level.label}",
                f"write `{raised.namespace}: {raised.level.label}` to say so, or change the "
                f"job{'s' if len(raised.jobs) > 1 else ''}", Severity.WARNING))
    return found


def compile_profiles(paths: Iterable[Path], committed_in: Path | None = None, progress: Progress | None = None,
                     selection: Selection = EVERYTHING) -> CompileResult:
    """`committed_in`: the output folder whose job charts say what each run is called and which spec it started
    with (generator/continuity/committed.py); None compiles every run as new. `selection`: the clusters and jobs
    whose charts are packaged (`render --manifests --cluster/--job`); the whole fleet is still validated."""
    result = check_profiles(paths, committed_in=committed_in, progress=progress)
    if result.fleet is not None:
        with stage(progress, "package", "chart(s)", "compiling charts") as packaging:
            charts = package_fleet(result.fleet, selection, tally=packaging.tally)
            packaging.count = len(charts)
        if committed_in is not None:
            from mpigen.continuity.committed import hold_back
            continuity = hold_back(charts, result.fleet)
            charts, result.held = continuity.charts, continuity.held
            result.notes += continuity.problems
        result.diagnostics += oversized_files(charts, result.paths)
        result.charts = charts if result.ok else []
    return result


def delivery_path_warnings(fleet: Fleet, output: Path) -> list[str]:
    """Clusters whose GitOps objects point at another folder of the repository than the one written.

    The Applications and HelmReleases name `<gitops.path>/<cluster>/...`; charts written elsewhere in the
    same repository would leave the GitOps tool with paths that do not exist.
    """
    top = git_top(output)
    if top is None:
        return []
    written = output.resolve().relative_to(top).as_posix()
    warnings = []
    for cluster in fleet.clusters:
        if cluster.gitops is None or cluster.gitops.path == written:
            continue
        fix = f"set `gitops.path: {written}`, or " if written != "." else ""
        warnings.append(
            f"cluster '{cluster.name}' ({cluster.source}): gitops.path is '{cluster.gitops.path}', but the charts "
            f"are written to '{written}' of the git repository {top}, so its {cluster.gitops.tool.value} objects "
            f"point at charts that are not there; {fix}render into {top / cluster.gitops.path}")
    return warnings
