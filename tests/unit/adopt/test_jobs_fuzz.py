"""Whatever an exported MPIJob holds, adoption gives a profile that loads and passes the job schema and the secrets
check, or refuses with AdoptionError in one line naming the file; never another exception. Random edits of the
upstream examples (a value replaced, removed, or given another type), a few examples from a fixed seed in CI,
MPIGEN_FUZZ_EXAMPLES from its seed under `make fuzz`."""

from __future__ import annotations

import copy
import os
from typing import Any

import yaml
from conftest import PROFILES, UPSTREAM
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mpigen.adopt import AdoptionError, adopt_jobs
from mpigen.load import load_bytes
from mpigen.readback.findings import RenderedObject
from mpigen.support.diagnostics import errors
from mpigen.validate.schema import check_schema
from mpigen.validate.secrets import check_secrets

EXAMPLES = int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) if "MPIGEN_FUZZ_EXAMPLES" in os.environ else 40
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_126)
TOKEN = "ghp_" + "a" * 40
JOBS = tuple(yaml.safe_load(p.read_text(encoding="utf-8"))
             for p in sorted((UPSTREAM / "mpi-operator" / "examples").glob("*.yaml")))
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 70), st.text(max_size=12),
    st.sampled_from(["mpirun", "-np", "-x", "A=b", "-mca", "pml", "--", TOKEN, "DB_PASSWORD=x1y2z3",
                     "/dev/shm", "nvidia.com/gpu", "Intel", "WaitForWorkersReady", "a.b", "x" * 70, "\x1b[2J"]),
    st.lists(st.sampled_from(["mpirun", "-np", "2", "-x", "PATH", "-mca", "btl", "a", "python", "--bind-to"]),
             max_size=8),
    st.dictionaries(st.sampled_from(["name", "image", "command", "args", "env", "resources", "limits", "value"]),
                    st.text(max_size=6), max_size=3))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


@st.composite
def edited_jobs(draw: st.DrawFn) -> dict[str, Any]:
    job = copy.deepcopy(draw(st.sampled_from(JOBS)))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_paths(job)[1:]))
        parent = job
        for part in path[:-1]:
            parent = parent[part]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(VALUES)
    return job


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=edited_jobs())
def test_any_mpijob_adopts_or_is_refused_in_one_line(job: dict[str, Any]) -> None:
    try:
        adoption = adopt_jobs([RenderedObject("job.yaml", job)], None, None, None)
    except AdoptionError as exc:
        assert str(exc).startswith("job.yaml") and "\n" not in str(exc), str(exc)
        assert TOKEN not in str(exc)  # a credential an export holds is never printed
        return
    for profile in adoption.profiles:
        document, problems = load_bytes(profile.text.encode("utf-8"), "jobs/x.yaml", "profiles/jobs/x.yaml")
        assert document is not None and not errors(problems), (profile.text, [p.format() for p in problems])
        schema, _ = check_schema(document)
        assert not errors(schema), (profile.text, [p.format() for p in schema])
        assert not check_secrets(document), profile.text
    assert all("\n" not in note and TOKEN not in note for note in adoption.notes)


@seed(SEED)
@settings(max_examples=max(1, EXAMPLES // 4), deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(job=edited_jobs())
def test_any_mpijob_compared_on_a_fleet(job: dict[str, Any]) -> None:
    """Compiled beside the example fleet (a few, each compile costs a fleet's validation): notes, never a crash."""
    try:
        adoption = adopt_jobs([RenderedObject("job.yaml", job)], None, None, [PROFILES])
    except AdoptionError as exc:
        assert str(exc).startswith("job.yaml") and "\n" not in str(exc), str(exc)
        return
    assert all(note.startswith("job.yaml: ") and "\n" not in note for note in adoption.notes)
