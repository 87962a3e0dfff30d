"""What mpigen really compiles from an adopted job profile, on the fleet it joins: the same stages a render runs
(load, validate, resolve, then the job's objects), in memory, so the import compares the hand-written MPIJob with
the MPIJob mpigen will write rather than with a guess of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpigen.load import ProfileFile, load_bytes, load_paths
from mpigen.load.catalogue import expand_hardware
from mpigen.manifests import build_job, job_chart_ref, job_object
from mpigen.model import Fleet, Job
from mpigen.resolve import resolve
from mpigen.support.diagnostics import Diagnostic, errors
from mpigen.validate import validate
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.repository import DEFAULT_PROFILES

JOBS_FOLDER = "jobs"
"""Where `mpigen init` puts job profiles under the profiles folder, as `jobs/<name>.yaml`."""


@dataclass(frozen=True)
class TargetFleet:
    """The hardware and cluster profiles an adopted job joins (its jobs left out: each adopted job is compiled on
    its own beside them), and the fleet they resolve to, where they are sound."""

    folder: str
    documents: tuple[ProfileFile, ...]
    problems: tuple[Diagnostic, ...]
    fleet: Fleet | None
    jobs: dict[str, str] = field(default_factory=dict)
    """The fleet's own job profiles, by name: where each is."""


@dataclass(frozen=True)
class Compiled:
    """An adopted profile as mpigen compiles it: the model's job and its MPIJob (None under another backend, the
    cluster's `jobBackend`); or why it does not compile."""

    problems: tuple[Diagnostic, ...]
    job: Job | None = None
    mpijob: dict[str, Any] | None = None


def read_fleet(paths: Sequence[Path]) -> TargetFleet:
    """The hardware and cluster profiles under `paths` (the profiles folder first): loaded and validated as a render
    does, without the jobs."""
    loaded = load_paths(paths)
    documents = tuple(d for d in loaded.documents if d.kind != "Job")
    folder = str(paths[0]) if paths else "profiles"
    compiled = _compile(list(documents))
    jobs = {str(d.data.get("name")): d.path for d in loaded.documents if d.kind == "Job"}
    return TargetFleet(folder, documents, tuple(loaded.diagnostics) + compiled.problems,
                       None if errors(list(compiled.problems)) else compiled.fleet, jobs)


@dataclass(frozen=True)
class _Resolved:
    problems: tuple[Diagnostic, ...]
    fleet: Fleet | None


def _compile(documents: list[ProfileFile]) -> _Resolved:
    expanded = expand_hardware(documents)
    problems = [*expanded.diagnostics, *validate(expanded.documents, expanded.unresolved)]
    if errors(problems):
        return _Resolved(tuple(problems), None)
    return _Resolved(tuple(problems), resolve(expanded.documents))


def profile_path(target: TargetFleet | None, name: str) -> str:
    """Where the adopted profile of job `name` goes: `<profiles>/jobs/<name>.yaml`."""
    return f"{target.folder if target else DEFAULT_PROFILES}/{JOBS_FOLDER}/{name}.yaml"


def compile_job(target: TargetFleet, name: str, text: str) -> Compiled:
    """The job profile `text` compiled beside the target fleet's profiles, as it would be once written."""
    path = profile_path(target, name)
    document, problems = load_bytes(text.encode("utf-8"), path, path)
    if document is None:
        return Compiled(tuple(problems))
    resolved = _compile([*target.documents, document])
    found = tuple(problems) + tuple(d for d in resolved.problems if d.location.path == path)
    if resolved.fleet is None:
        return Compiled(found or resolved.problems)
    job = next(job for job in resolved.fleet.jobs if job.name == name)
    built = job_object(build_job(job, job_chart_ref(job))).obj
    return Compiled(found, job, built if built.get("kind") == mpi_operator.KIND else None)

