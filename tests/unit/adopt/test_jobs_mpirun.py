"""A hand-written launcher command taken apart (generator/adopt/mpirun.py), and what the profile makes of the parts."""

from __future__ import annotations

from pathlib import Path

import yaml

from mpigen.adopt import adopt_jobs
from mpigen.adopt.mpirun import Export, Mca, split_mpirun
from mpigen.readback.documents import read_manifest_file


def test_flags_values_and_program() -> None:
    line = split_mpirun(["/opt/openmpi/bin/mpirun", "--allow-run-as-root", "-np", "16", "-H", "a:8,b:8", "-bind-to",
                         "core", "--map-by", "ppr:4:socket", "-x", "NCCL_DEBUG=INFO", "-x", "HOME", "-mca", "pml", "ucx",
                         "--oversubscribe", "--report-bindings", "python", "-u", "train.py", "-np", "3"])
    assert (line.launcher, line.rank_flag, line.rank_count, line.allow_root) == ("/opt/openmpi/bin/mpirun", "-np", "16",
                                                                                 True)
    assert line.hosts == ("-H", "a:8,b:8")
    assert (line.bind_to, line.map_by) == ("core", "ppr:4:socket")
    assert line.exports == (Export("NCCL_DEBUG", "INFO", "-x"), Export("HOME", None, "-x"))
    assert line.mca == (Mca("pml", "ucx"),)
    assert line.kept == ("--oversubscribe", "--report-bindings") and line.unknown == ()
    assert line.program == ("python", "-u", "train.py", "-np", "3")


def test_hydra_and_unknown_flags() -> None:
    line = split_mpirun(["mpiexec", "-n", "4", "-genv", "I_MPI_DEBUG", "5", "-ppn", "2", "--frobnicate", "./a.out"])
    assert line.exports == (Export("I_MPI_DEBUG", "5", "-genv"),)
    assert line.kept == ("-ppn", "2", "--frobnicate") and line.unknown == ("--frobnicate",)
    assert line.program == ("./a.out",)


def test_not_an_mpirun_line() -> None:
    assert split_mpirun(["bash", "-c", "mpirun a"]).launcher is None
    assert split_mpirun(["mpirun", "-np"]).program == ()


JOBS = """\
apiVersion: v1
kind: List
items:
- apiVersion: kubeflow.org/v2beta1
  kind: MPIJob
  metadata: {name: scripted, namespace: mpi}
  spec:
    slotsPerWorker: 2
    mpiReplicaSpecs:
      Launcher:
        template:
          spec:
            containers:
            - {name: l, image: "img:1", command: [bash, -c, "mpirun -np 4 ./a.out"]}
      Worker:
        replicas: 2
        template:
          spec:
            containers:
            - {name: w, image: "img:1"}
- apiVersion: kubeflow.org/v2beta1
  kind: MPIJob
  metadata: {name: intel, namespace: mpi}
  spec:
    mpiImplementation: Intel
    mpiReplicaSpecs:
      Launcher:
        template:
          spec:
            containers:
            - {name: l, image: "img:1", command: [mpirun, -n, "2", -bind-to, core, -mca, x, "y", ./a.out]}
      Worker:
        replicas: 2
        template:
          spec:
            containers:
            - {name: w, image: "img:1"}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: settings}
"""


def test_a_list_of_jobs(tmp_path: Path) -> None:
    """`kubectl get mpijobs -o yaml` writes a List: each MPIJob is adopted; anything else is skipped, and said."""
    (tmp_path / "jobs.yaml").write_text(JOBS, encoding="utf-8")
    objects, _ = read_manifest_file(tmp_path / "jobs.yaml")
    adoption = adopt_jobs(objects, "cpu-lab", "cpu", None)
    scripted, intel = (yaml.safe_load(p.text) for p in adoption.profiles)
    assert scripted["launcherCommand"] == ["bash", "-c", "mpirun -np 4 ./a.out"] and "program" not in scripted
    assert intel["program"] == ["./a.out"] and "placement" not in intel
    assert intel["mpirunArgs"] == ["-bind-to", "core", "-mca", "x", "y"]
    assert f"{tmp_path}/jobs.yaml: ConfigMap/settings: not an MPIJob: skipped" in adoption.notes
    assert any("the launcher runs `bash`, not mpirun: kept whole as launcherCommand" in n for n in adoption.notes)


def test_rank_placement_flags_are_not_kept_beside_mpigens_rankfile() -> None:
    """mpigen's OpenMPI line passes `--rankfile`; a `-npernode`, `-N` or rankfile of the MPIJob kept in mpirunArgs
    beside it makes mpirun refuse the conflicting mapping policies, so they go where `--hostfile` goes: said, not kept."""
    line = split_mpirun(["mpirun", "-np", "16", "-npernode", "8", "--rankfile", "/r", "-N", "8", "--npersocket", "4",
                         "./a.out"])
    assert line.hosts == ("-npernode", "8", "--rankfile", "/r", "-N", "8", "--npersocket", "4")
    assert line.kept == () and line.program == ("./a.out",)
