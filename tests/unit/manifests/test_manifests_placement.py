"""The rankfile and mpirun's placement flags (generator/manifests/hostfile.py, build/mpijob.py), as built and as real
Helm 3 and 4 render them with other worker counts.

OpenMPI's rankfile line is `rank <n>=<host> slot=<socket>:<cores>` (logical numbering): `slot=1:0-19` is
every core of socket 1. Expected lines are written out by hand; the job uses `naming: stable`, so the MPIJob
and its hosts are named after the job.
"""

from __future__ import annotations

import pytest
import yaml
from conftest import PROFILES, TRAIN_JOB, run_helm

from mpigen.commands.pipeline import compile_profiles
from mpigen.manifests import build_job, job_chart_ref
from mpigen.model import Job
from mpigen.package import output_files
from mpigen.write import write_tree

TRAIN = TRAIN_JOB + "namespace: ml-training\nworkers: 2\nnaming: stable\n"
HOST = "train-worker-{}.train.ml-training.svc"


def _job(profiles_copy, extra: str = "") -> Job:
    result = compile_profiles([profiles_copy({"jobs/train.yaml": TRAIN + extra})])
    assert result.ok, [d.format() for d in result.diagnostics]
    return next(job for job in result.fleet.jobs if job.name == "train")


def _objects(job: Job) -> dict:
    return {m.obj["kind"]: m.obj for m in build_job(job, job_chart_ref(job))}


def _launcher(job: Job) -> dict:
    return _objects(job)["MPIJob"]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]


def _expected_rankfile(workers: int) -> list[str]:
    # GPUs 0-3 sit beside ib0/ib1 on socket 0, GPUs 4-7 beside ib2/ib3 on socket 1 (profiles/hardware/dgx-1.yaml);
    # local rank i drives GPU i, and worker w holds ranks 8w..8w+7.
    return [f"rank {8 * w + i}={HOST.format(w)} slot={0 if i < 4 else 1}:0-19" for w in range(workers) for i in range(8)]


def test_rankfile_binds_each_rank_to_its_gpus_nic_socket(profiles_copy):
    data = _objects(_job(profiles_copy))["ConfigMap"]["data"]
    assert data["rankfile"].splitlines()[:9] == [
        "rank 0=train-worker-0.train.ml-training.svc slot=0:0-19",
        "rank 1=train-worker-0.train.ml-training.svc slot=0:0-19",
        "rank 2=train-worker-0.train.ml-training.svc slot=0:0-19",
        "rank 3=train-worker-0.train.ml-training.svc slot=0:0-19",
        "rank 4=train-worker-0.train.ml-training.svc slot=1:0-19",
        "rank 5=train-worker-0.train.ml-training.svc slot=1:0-19",
        "rank 6=train-worker-0.train.ml-training.svc slot=1:0-19",
        "rank 7=train-worker-0.train.ml-training.svc slot=1:0-19",
        "rank 8=train-worker-1.train.ml-training.svc slot=0:0-19",
    ]
    assert data["rankfile"].splitlines() == _expected_rankfile(2)
    assert data["rankfile"].endswith("-19\n")
    # every host of the rankfile is a host of the hostfile: OpenMPI refuses a rankfile host it was not given
    hosts = {line.split()[0] for line in data["hostfile"].splitlines()}
    assert {line.split("=")[1].split()[0] for line in data["rankfile"].splitlines()} == hosts


def test_openmpi_4_takes_the_rankfile_with_rankfile(profiles_copy):
    spec = _launcher(_job(profiles_copy))
    command = spec["containers"][0]["command"]
    at = command.index("--rankfile")
    assert command[at + 1] == "/etc/mpigen/rankfile"
    assert "--bind-to" not in command and "--map-by" not in command
    items = next(v for v in spec["volumes"] if v["name"] == "mpigen-hostfile")["configMap"]["items"]
    assert items == [{"key": "hostfile", "path": "hostfile"}, {"key": "rankfile", "path": "rankfile"}]


def test_openmpi_5_takes_the_rankfile_through_map_by(profiles_copy):
    command = _launcher(_job(profiles_copy, "openMPIVersion: 5\n"))["containers"][0]["command"]
    assert command[command.index("--map-by") + 1] == "rankfile:file=/etc/mpigen/rankfile"
    assert "--rankfile" not in command, "deprecated in OpenMPI 5"


def test_without_a_rankfile_the_flags_are_the_placements(profiles_copy):
    job = _job(profiles_copy, "placement: {bindTo: socket, mapBy: numa}\n")
    spec = _launcher(job)
    command = spec["containers"][0]["command"]
    assert command[command.index("--bind-to") + 1] == "socket"
    assert command[command.index("--map-by") + 1] == "numa"
    assert "rankfile" not in _objects(job)["ConfigMap"]["data"]
    items = next(v for v in spec["volumes"] if v["name"] == "mpigen-hostfile")["configMap"]["items"]
    assert items == [{"key": "hostfile", "path": "hostfile"}]


def test_a_hardware_fact_that_moves_the_rankfile_renames_the_run(profiles_copy):
    """The NICs' sockets decide the rankfile: moving them is another run (its identity reads the hardware profile)."""
    from mpigen.manifests.run_name import run_digest
    hardware = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
    job = _job(profiles_copy)
    moved = compile_profiles([profiles_copy({"jobs/train.yaml": TRAIN, "hardware/dgx-1.yaml": hardware.replace(
        "numaNode: 1", "numaNode: 0")})])
    moved_job = next(j for j in moved.fleet.jobs if j.name == "train")
    assert moved_job.placement.rank_sockets != job.placement.rank_sockets
    assert run_digest(moved_job) != run_digest(job)


@pytest.mark.parametrize("workers", [1, 3])
def test_helm_regenerates_the_rankfile_for_other_worker_counts(helm, profiles_copy, tmp_path, workers):
    result = compile_profiles([profiles_copy({"jobs/train.yaml": TRAIN})])
    assert result.ok
    out = tmp_path / "charts"
    write_tree(out, output_files(result.charts))
    rendered = run_helm(helm, "template", "train", out / "dgx-lab" / "jobs" / "train", "--set", f"workers={workers}")
    docs = [d for d in yaml.safe_load_all(rendered.stdout) if d]
    configmap = next(d for d in docs if d["kind"] == "ConfigMap")
    assert configmap["data"]["rankfile"].splitlines() == _expected_rankfile(workers)
    mpijob = next(d for d in docs if d["kind"] == "MPIJob")
    command = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("-np") + 1] == str(8 * workers), "the rankfile and -np agree"
