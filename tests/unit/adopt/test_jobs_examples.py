"""Issue 31's done-when for adoption: each upstream mpi-operator example MPIJob (tests/upstream/mpi-operator/examples),
adopted, written into a copy of the example fleet on a cluster and pool that fit, and compiled in-process, gives an
MPIJob that keeps the example's image, command (program and arguments, rank count), size (workers, slots) and MPI
implementation.

The expected programs and rank counts are written out by hand from the examples, not taken apart by mpigen's code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import UPSTREAM

from mpigen.adopt import adopt_jobs
from mpigen.commands.pipeline import compile_profiles
from mpigen.readback.documents import read_manifest_file

EXAMPLES = UPSTREAM / "mpi-operator" / "examples"

# A CPU cluster like cpu-lab without GitOps: `pi`'s ttlSecondsAfterFinished would have Flux run it again.
CPU_CLUSTER = """\
apiVersion: mpigen/v1alpha1
kind: Cluster
name: adopt-cpu
kubernetesVersion: "1.31"
namespaces: [mpi]
nodePools:
  - name: cpu
    hardware: cpu-node
    nodes: 4
"""

# file -> (cluster, pool, the program after mpirun's flags, rank count flag and value)
CASES = {
    "pi__pi.yaml": ("adopt-cpu", "cpu", ["/home/mpiuser/pi"], ("-np", "2")),
    "pi__pi-intel.yaml": ("adopt-cpu", "cpu", ["/home/mpiuser/pi"], ("-n", "2")),
    "pi__pi-mpich.yaml": ("adopt-cpu", "cpu", ["/home/mpiuser/pi"], ("-n", "2")),
    "horovod__tensorflow-mnist.yaml": ("adopt-cpu", "cpu", ["python", "/examples/tensorflow_mnist.py"], ("-np", "2")),
    "tensorflow-benchmarks__tensorflow-benchmarks.yaml": (
        "dgx-lab", "dgx", ["python", "scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py", "--model=resnet101",
                           "--batch_size=64", "--variable_update=horovod"], ("-np", "2")),
}


def test_every_example_is_covered() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.yaml")) == sorted(CASES)


def _container(obj: dict[str, Any], role: str) -> dict[str, Any]:
    (container,) = obj["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"]
    return container


@pytest.mark.parametrize("example", sorted(CASES))
def test_adopted_example_compiles_to_the_same_job(example: str, profiles_copy: Any) -> None:
    cluster, pool, program, (rank_flag, ranks) = CASES[example]
    written = yaml.safe_load((EXAMPLES / example).read_text(encoding="utf-8"))
    root = profiles_copy({"clusters/adopt-cpu.yaml": CPU_CLUSTER})
    objects, findings = read_manifest_file(EXAMPLES / example)
    assert findings == []

    adoption = adopt_jobs(objects, cluster, pool, [root])

    (profile,) = adoption.profiles
    assert (profile.kind, profile.name) == ("Job", written["metadata"]["name"])
    assert not [note for note in adoption.notes if "does not compile" in note], adoption.notes
    (root / "jobs" / f"{profile.name}.yaml").write_text(profile.text, encoding="utf-8")
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    (mpijob,) = [m.obj for c in result.charts if c.directory == f"{cluster}/jobs/{profile.name}"
                 for m in c.manifests if m.obj["kind"] == "MPIJob"]

    spec, before = mpijob["spec"], written["spec"]
    image = _container(written, "Launcher")["image"]
    assert _container(mpijob, "Launcher")["image"] == image
    assert _container(mpijob, "Worker")["image"] == image
    assert spec["mpiReplicaSpecs"]["Worker"]["replicas"] == before["mpiReplicaSpecs"]["Worker"]["replicas"]
    assert spec["slotsPerWorker"] == before["slotsPerWorker"]
    assert spec["mpiImplementation"] == before.get("mpiImplementation", "OpenMPI")
    command = [str(part) for part in _container(mpijob, "Launcher")["command"]]
    assert command[2 if command[0] == "env" else 0] == "mpirun"  # `env <Hydra's ssh options>=-p <port> ...` first
    if _container(written, "Worker").get("args") or _container(written, "Worker").get("command"):
        # A worker command of the example's own keeps its readiness probe (pi-intel's and pi-mpich's on sshd's 2222;
        # pi's has none), on the same port, and Hydra's mpirun connects there.
        before_probe = _container(written, "Worker").get("readinessProbe")
        after_probe = _container(mpijob, "Worker").get("readinessProbe")
        assert after_probe == before_probe, (after_probe, before_probe)
        if before_probe is not None and before.get("mpiImplementation", "OpenMPI") != "OpenMPI":
            assert command[1].endswith(f"=-p {before_probe['tcpSocket']['port']} -o ConnectionAttempts=10")
    assert command[-len(program):] == program
    assert command[command.index(rank_flag) + 1] == ranks


@pytest.mark.parametrize("example", sorted(CASES))
def test_every_value_names_where_it_came_from(example: str) -> None:
    """Each value line of the profile carries a comment: the MPIJob field, the option, or a marked guess."""
    objects, _ = read_manifest_file(EXAMPLES / example)
    (profile,) = adopt_jobs(objects, None, None, None).profiles
    lines = [line for line in profile.text.splitlines() if not line.lstrip().startswith(("#", "- "))]
    valued = [line for line in lines if not line.rstrip().endswith(":") and ": " in line
              and line.split(":")[0] not in ("apiVersion", "kind")]
    assert valued and all("  # " in line for line in valued), [line for line in valued if "  # " not in line]
    assert "cluster: my-cluster  # guess: " in profile.text and "pool: pool  # guess: " in profile.text


def test_without_a_fleet_nothing_is_compared(tmp_path: Path) -> None:
    objects, _ = read_manifest_file(EXAMPLES / "tensorflow-benchmarks__tensorflow-benchmarks.yaml")
    adoption = adopt_jobs(objects, "dgx-lab", "dgx", None)
    assert not [note for note in adoption.notes if "NCCL_IB_HCA" in note]
    assert "cluster: dgx-lab  # mpigen import --cluster" in adoption.profiles[0].text
