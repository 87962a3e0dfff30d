"""Intel MPI and MPICH (Hydra) launcher flags of an adopted MPIJob beside the ones mpigen's own mpirun line writes
(generator/manifests/mpijob.py): kept ones must not clash with mpigen's `-hostfile`, `-genv` and `-genvlist`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mpigen.adopt import adopt_jobs
from mpigen.adopt.mpirun import split_mpirun
from mpigen.commands.pipeline import compile_profiles
from mpigen.readback.documents import read_manifest_file

HYDRA_JOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {{name: hydra, namespace: mpi}}
spec:
  slotsPerWorker: 1
  mpiImplementation: {implementation}
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers:
          - name: l
            image: "img:1"
            env:
            - name: TOKEN
              valueFrom: {{secretKeyRef: {{name: creds, key: token}}}}
            command: [mpirun, -n, "2", {flags}, ./a.out]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - {{name: w, image: "img:1"}}
"""

ENV_POLICY = ("-genvall", "-genvnone", "-genvlist")
"""Hydra takes one of these once ('duplicate environment setting'); mpigen writes `-genvlist` for a Secret's value."""


def _compiled_command(tmp_path: Path, profiles_copy: Any, implementation: str, flags: str) -> tuple[list[str], list[str]]:
    (tmp_path / "job.yaml").write_text(HYDRA_JOB.format(implementation=implementation, flags=flags), encoding="utf-8")
    objects, _ = read_manifest_file(tmp_path / "job.yaml")
    root = profiles_copy()
    adoption = adopt_jobs(objects, "cpu-lab", "cpu", [root])
    (profile,) = adoption.profiles
    (root / "jobs" / "hydra.yaml").write_text(profile.text, encoding="utf-8")
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    (mpijob,) = [m.obj for c in result.charts if c.directory == "cpu-lab/jobs/hydra" for m in c.manifests
                 if m.obj["kind"] == "MPIJob"]
    (launcher,) = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
    return [str(part) for part in launcher["command"]], adoption.notes


@pytest.mark.parametrize("implementation", ["Intel", "MPICH"])
@pytest.mark.parametrize("flags", ["-genvlist, 'PATH,LD_LIBRARY_PATH'", "-genvall", "-genvnone"])
def test_env_propagation_flags_are_not_kept_beside_mpigens_genvlist(
        tmp_path: Path, profiles_copy: Any, implementation: str, flags: str) -> None:
    """A second `-genvlist` (or `-genvall`, `-genvnone`) beside the one mpigen writes for the Secret makes Hydra
    refuse to start: mpigen's line says how the env reaches the ranks, and the import says the flag is not kept."""
    command, notes = _compiled_command(tmp_path, profiles_copy, implementation, flags)
    assert [word for word in command if word in ENV_POLICY] == ["-genvlist"]
    assert command[command.index("-genvlist") + 1] == "TOKEN"
    assert command[-1] == "./a.out"
    flag = flags.split(",")[0]
    assert any(f": mpirun {flag}" in note and "not kept" in note for note in notes), notes


def test_genvlist_takes_a_value() -> None:
    line = split_mpirun(["mpiexec", "-genvlist", "A,B", "-genvall", "-ppn", "1", "./a.out"])
    assert line.unknown == () and line.program == ("./a.out",)


def test_hydra_flags_with_a_value_do_not_start_the_program() -> None:
    """Hydra's (Intel MPI's and MPICH's) flags that take a value: taken as standing alone, their value would start
    the program; `-ppn` and `-perhost` are kept (Hydra places that many ranks on each host of mpigen's hostfile)."""
    line = split_mpirun(["mpiexec", "-launcher", "ssh", "-launcher-exec", "/usr/bin/ssh", "-envlist", "A,B", "-envall",
                         "-envnone", "-rr", "-outfile-pattern", "out.%r", "-errfile-pattern", "err.%r", "-rmk", "user",
                         "-demux", "poll", "-configfile", "/c", "-gwdir", "/w", "-gpath", "/p", "-umask", "022",
                         "-ppn", "2", "-n", "4", "./a.out"])
    assert line.unknown == () and line.program == ("./a.out",)
    assert line.kept[-2:] == ("-ppn", "2")


def test_genv_name_equals_value_is_one_word() -> None:
    """Hydra reads `-genv NAME=VALUE` (and `-env NAME=VALUE`) as one word, as well as `-genv NAME VALUE`: taken as
    two, the program's first word became the variable's value."""
    line = split_mpirun(["mpiexec", "-n", "2", "-genv", "I_MPI_DEBUG=5", "-env", "FI_PROVIDER=tcp", "-genv", "A", "1",
                         "./a.out", "x"])
    assert [(e.name, e.value, e.flag) for e in line.exports] == [
        ("I_MPI_DEBUG", "5", "-genv"), ("FI_PROVIDER", "tcp", "-env"), ("A", "1", "-genv")]
    assert line.program == ("./a.out", "x")



def test_hostlist_is_mpigens_hostfile() -> None:
    """`-hostlist` beside mpigen's `-hostfile` makes Hydra refuse ('duplicate host file or host list setting')."""
    line = split_mpirun(["mpiexec", "-n", "2", "-hostlist", "a:1,b:1", "./a.out"])
    assert line.hosts == ("-hostlist", "a:1,b:1") and line.kept == () and line.program == ("./a.out",)
