"""What an import says mpigen derives differently from a hand-written MPIJob, for seed-style jobs: mpirun lines with
`-mca` flags and `-x` exports, privileged workers, hand-set NCCL variables, gangs counting the launcher.

The NetApp job is built from the seed's own mpirun line (tests/acceptance/seeds/netapp-two-dgx1.txt, as
tests/acceptance/test_seed_netapp.py reads it), as a team moving its two-DGX-1 job to an MPIJob would write it; its
profile must come out as the example fleet's hand-made profiles/jobs/netapp-resnet50.yaml has it.
"""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PROFILES

from mpigen.adopt import AdoptionError, adopt_jobs
from mpigen.readback.findings import RenderedObject

SEED = Path(__file__).parents[2] / "acceptance" / "seeds" / "netapp-two-dgx1.txt"
NETAPP_IMAGE = "netapp/tensorflow-py2:19.03.0"


def mpijob(name: str, command: list[str], image: str = "mpioperator/tensorflow-benchmarks:latest", workers: int = 2,
           gpus: int = 0, spec: dict[str, Any] | None = None, worker: dict[str, Any] | None = None) -> dict[str, Any]:
    limits = {"nvidia.com/gpu": gpus} if gpus else {"cpu": "2", "memory": "4Gi"}
    return {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": name},
        "spec": {**(spec or {}), "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "launcher", "image": image, "command": command}]}}},
            "Worker": {"replicas": workers, "template": {"spec": {"containers": [
                {"name": "worker", "image": image, "resources": {"limits": limits}, **(worker or {})}]}}}}},
    }


def adopt(obj: dict[str, Any], cluster: str | None, pool: str | None) -> tuple[str, list[str]]:
    adoption = adopt_jobs([RenderedObject("job.yaml", obj)], cluster, pool, [PROFILES])
    (profile,) = adoption.profiles
    prefix = f"job.yaml: MPIJob/{obj['metadata']['name']}: "
    assert all(note.startswith(prefix) for note in adoption.notes), adoption.notes
    return profile.text, [note.removeprefix(prefix) for note in adoption.notes]


def seed_mpirun() -> list[str]:
    """The seed's training mpirun, as words, without its shell redirection."""
    text = SEED.read_text(encoding="utf-8")
    start = [m.start() for m in re.finditer(r"(?<![\w/.-])mpirun ", text)][-1]
    words = shlex.split(re.match(r"[^\n]*?(?= =+ |\n|$)", text[start:]).group(0))
    return words[:next(i for i, word in enumerate(words) if word.startswith(">"))]


@pytest.fixture(scope="module")
def netapp() -> tuple[str, list[str]]:
    privileged = {"securityContext": {"privileged": True}}
    obj = mpijob("netapp-resnet50", seed_mpirun(), NETAPP_IMAGE, gpus=8, worker=privileged,
                 spec={"slotsPerWorker": 8, "runPolicy": {"cleanPodPolicy": "Running"}})
    obj["metadata"]["namespace"] = "ai-training"
    for role in ("Launcher", "Worker"):
        obj["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["hostNetwork"] = True
    return adopt(obj, "netapp-lab", "dgx")


def test_seed_job_gets_the_env_of_the_hand_made_profile(netapp: tuple[str, list[str]]) -> None:
    """The seed's own choices stay; NCCL_IB_HCA, NCCL_SOCKET_IFNAME and NCCL_IB_GID_INDEX are left to mpigen, and
    `-mca plm_rsh_args` to the cluster's sshPort, exactly as profiles/jobs/netapp-resnet50.yaml was written."""
    adopted = yaml.safe_load(netapp[0])
    hand_made = yaml.safe_load((PROFILES / "jobs" / "netapp-resnet50.yaml").read_text(encoding="utf-8"))
    assert adopted["env"] == hand_made["env"]
    assert adopted["placement"] == hand_made["placement"]
    assert (adopted["workers"] * adopted["gpusPerWorker"], adopted["slotsPerWorker"]) == (hand_made["totalGpus"], 8)
    assert "mpirunArgs" not in adopted and "privileged" not in adopted


def test_seed_job_notes(netapp: tuple[str, list[str]]) -> None:
    notes = netapp[1]
    expected = [
        "NCCL_IB_HCA='mlx5' (the MPIJob's) is left out: mpigen derives '=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1' from "
        "the rails rail0, rail1, rail2, rail3 of pool dgx",
        "NCCL_SOCKET_IFNAME='enp5s0.3091,enp12s0.3092,enp132s0.3093,enp139s0.3094' (the MPIJob's) is left out: mpigen "
        "derives '=enp5s0.3091,enp12s0.3092,enp132s0.3093,enp139s0.3094' from the rails rail0, rail1, rail2, rail3 "
        "of pool dgx",
        "-mca plm_rsh_args '-p 22122' is left out: mpigen's mpirun passes --mca plm_rsh_args '-p 22122 -o "
        "ConnectionAttempts=10' itself (from the cluster profile)",
        "OMPI_MCA_pml: the MPIJob's 'ob1' is kept and replaces what mpigen derives here, 'ucx'",
        "mpirun -H 10.61.218.152:8,10.61.218.154:8: not kept; mpigen's hostfile (and OpenMPI rankfile) says where "
        "each rank of each run goes",
        ".spec.mpiReplicaSpecs.Worker.template.spec.containers[0].securityContext.privileged: privileged is not "
        "granted: mpigen gives RDMA workers IPC_LOCK alone; if the job truly needs it, write `privileged: {reason: "
        "\"...\"}`",
        "privileged workers become unprivileged ones with IPC_LOCK, all RDMA needs",
        ".spec.mpiReplicaSpecs.Worker.template.spec.hostNetwork: true not kept: the cluster's network provider "
        "`host-network` runs jobs on the node's network",
        "no readiness probe: mpigen adds one (tcpSocket port 22122), so a worker is Ready once sshd listens and the "
        "launcher starts only then",
    ]
    assert [note for note in expected if note not in notes] == []


def test_missing_nccl_ib_hca_and_slots_against_gpus() -> None:
    """Seed 000's tensorflow-benchmarks: two GPUs a worker, one slot (mpi-operator's default), no NCCL_IB_HCA."""
    command = ["mpirun", "--allow-run-as-root", "-np", "2", "-x", "NCCL_DEBUG=INFO", "python", "bench.py"]
    text, notes = adopt(mpijob("tensorflow-benchmarks", command, gpus=2), None, None)
    assert "cluster: dgx-lab  # guess: the first cluster with a GPU pool" in text
    assert "pool: dgx  # guess: a pool with GPUs" in text
    assert "missing NCCL_IB_HCA: the MPIJob does not set it; mpigen derives 'mlx5' from the rails rail0, rail1, " \
           "rail2, rail3 of pool dgx" in notes
    assert "slots vs GPUs: slotsPerWorker 1 with 2 GPUs per worker: one rank drives several GPUs; mpigen's default " \
           "is one rank per GPU (2): leave slotsPerWorker out for it" in notes
    assert "slotsPerWorker: 1  # .spec.slotsPerWorker left out: mpi-operator's default, 1" in text
    assert ("mpigen attaches rail0, rail1, rail2, rail3 to every worker (one device of each, through Multus) and "
            "requests their devices: the MPIJob asked for none") in notes


def test_duplicated_mca_parameters() -> None:
    command = ["mpirun", "-mca", "btl", "^openib", "-mca", "pml", "ob1", "-mca", "btl", "self,tcp", "python", "a.py"]
    worker = {"env": [{"name": "OMPI_MCA_pml", "value": "ucx"}]}
    text, notes = adopt(mpijob("dup", command, worker=worker), "cpu-lab", "cpu")
    assert yaml.safe_load(text)["env"] == {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,tcp"}
    assert ("duplicated MCA parameter: -mca btl is given twice ('^openib', then 'self,tcp'), which OpenMPI refuses "
            "('MCA parameters can only be listed once'); the profile keeps 'self,tcp' once") in notes
    assert ("duplicated MCA parameter: pml is set both as -mca ('ob1') and as OMPI_MCA_pml in "
            ".spec.mpiReplicaSpecs.Worker.template.spec.containers[0].env[0] ('ucx'): the command line wins; the "
            "profile keeps 'ob1' once") in notes


def test_min_available_counting_the_launcher_is_not_kept() -> None:
    """mpi-operator #608: under WaitForWorkersReady a gang of workers + 1 never forms; mpigen counts the workers."""
    spec = {"launcherCreationPolicy": "WaitForWorkersReady", "runPolicy": {"schedulingPolicy": {"minAvailable": 3}}}
    text, notes = adopt(mpijob("gang", ["mpirun", "python", "a.py"], spec=spec), "cpu-lab", "cpu")
    assert "minAvailable" not in text
    assert (".spec.runPolicy.schedulingPolicy.minAvailable 3 not kept: under WaitForWorkersReady the gang can hold at "
            "most 2 pods (the launcher is created once the 2 workers run: mpi-operator #608); mpigen counts 2") in notes
    assert len([note for note in notes if "minAvailable" in note]) == 1, notes


def test_gang_counting_the_launcher_by_default() -> None:
    """No minAvailable: mpi-operator's PodGroup counts the workers and the launcher; mpigen's, under its default
    WaitForWorkersReady, the workers."""
    _, notes = adopt(mpijob("gang", ["mpirun", "python", "a.py"]), "cpu-lab", "cpu")
    assert ("minAvailable (mpi-operator #608): the MPIJob has no minAvailable (mpi-operator counts 3: the workers and "
            "the launcher); mpigen's gang is 2 under WaitForWorkersReady, where the launcher is created only once the "
            "workers run") in notes


def test_min_available_mpigen_can_keep_is_kept() -> None:
    spec = {"launcherCreationPolicy": "AtStartup", "runPolicy": {"schedulingPolicy": {"minAvailable": 3}}}
    text, notes = adopt(mpijob("gang", ["mpirun", "python", "a.py"], spec=spec), "cpu-lab", "cpu")
    assert yaml.safe_load(text)["scheduling"] == {"minAvailable": 3}
    assert not [note for note in notes if "minAvailable" in note], notes


def test_readiness_probe_kept_or_added() -> None:
    # The probe's port is sshd's: adopted as `sshPort`, so a workerCommand of the job's own keeps its probe there.
    probe = {"readinessProbe": {"tcpSocket": {"port": 2222}}, "command": ["/usr/sbin/sshd", "-De"]}
    text, notes = adopt(mpijob("probed", ["mpirun", "a"], worker=probe), "cpu-lab", "cpu")
    assert yaml.safe_load(text)["sshPort"] == 2222
    assert "the workers' readinessProbe becomes mpigen's (tcpSocket port 2222)" in notes
    probe = {"readinessProbe": {"exec": {"command": ["true"]}}, "command": ["/usr/sbin/sshd", "-De"]}
    text, notes = adopt(mpijob("probed", ["mpirun", "a"], worker=probe), "cpu-lab", "cpu")
    assert "sshPort" not in yaml.safe_load(text)
    assert ("the workers' readinessProbe is not kept: mpigen's is a tcpSocket probe on sshd's port (`sshPort`), and "
            "with workerCommand it adds one only where `sshPort` says the port; without it a worker is Ready when it "
            "starts, before sshd listens") in notes
    _, notes = adopt(mpijob("plain", ["mpirun", "a"]), "cpu-lab", "cpu")
    assert ("no readiness probe: mpigen adds one (tcpSocket port 22), so a worker is Ready once sshd listens and the "
            "launcher starts only then") in notes


def test_what_a_profile_cannot_hold_is_said() -> None:
    obj = mpijob("extras", ["mpirun", "--oversubscribe", "-x", "FOO", "a"],
                 worker={"securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}})
    pod = obj["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    pod["initContainers"] = [{"name": "fetch", "image": "busybox"}]
    pod["containers"].append({"name": "logs", "image": "fluent-bit"})
    pod["tolerations"] = [{"operator": "Exists"}]
    obj["metadata"]["labels"] = {"team": "vision", "app.kubernetes.io/name": "extras"}
    text, notes = adopt(obj, "cpu-lab", "cpu")
    assert yaml.safe_load(text)["mpirunArgs"] == ["--oversubscribe", "-x", "FOO"]
    assert yaml.safe_load(text)["objectLabels"] == {"team": "vision"}
    assert (".metadata.labels: app.kubernetes.io/name not kept: keys of domains that Kubernetes, the controllers or the "
            "network read as instructions (mpigen writes its own)") in notes
    assert not [note for note in notes if "does not compile" in note], notes
    at = ".spec.mpiReplicaSpecs.Worker.template.spec"
    assert sorted([f"{at}.containers: logs (a sidecar) not kept: a profile holds the MPI container only",
            f"{at}.initContainers: fetch not kept: a profile has no init containers",
            f"{at}.tolerations not kept: mpigen derives it from the pool and the cluster's scheduling",
            f"{at}.containers[0].securityContext.capabilities.add: SYS_ADMIN not granted: mpigen adds IPC_LOCK to "
            "workers with RDMA rails, nothing else"]) == sorted(note for note in notes if note.startswith(at))


def test_a_secret_in_the_env_is_never_copied() -> None:
    token = "hf_" + "a1B2" * 10
    worker = {"env": [{"name": "HF_TOKEN", "value": token},
                      {"name": "WANDB_API_KEY", "valueFrom": {"secretKeyRef": {"name": "wandb", "key": "key"}}}]}
    obj = mpijob("secretive", ["mpirun", "a"], worker=worker)
    adoption = adopt_jobs([RenderedObject("job.yaml", copy.deepcopy(obj))], "cpu-lab", "cpu", [PROFILES])
    text = adoption.profiles[0].text
    assert token not in text and all(token not in note for note in adoption.notes)
    assert yaml.safe_load(text)["env"] == {"WANDB_API_KEY": {"secretKeyRef": {"name": "wandb", "key": "key"}}}
    assert "  # HF_TOKEN: {secretKeyRef: {name: <Secret>, key: <key>}}" in text
    assert not [note for note in adoption.notes if "does not compile" in note], adoption.notes


def test_a_profile_that_would_hold_a_secret_is_not_written() -> None:
    """A credential's shape anywhere (here an annotation) refuses the job: its value is never printed."""
    token = "ghp_" + "x" * 40
    obj = mpijob("leaky", ["mpirun", "a"])
    obj["metadata"]["annotations"] = {"example.com/ci": token}
    with pytest.raises(AdoptionError) as caught:
        adopt_jobs([RenderedObject("job.yaml", obj)], "cpu-lab", "cpu", None)
    assert str(caught.value) == (
        "job.yaml: MPIJob/leaky: the job profile would hold a secret: `objectAnnotations.example.com/ci` looks like a "
        "GitHub token; nothing is written: remove it; give the job a secret through `env` with `secretKeyRef`, or the "
        "cluster through a Secret your GitOps tool already has")
    assert token not in str(caught.value)


def test_rank_count_and_placement_mpigen_writes_itself() -> None:
    command = ["mpirun", "-np", "4", "--map-by", "ppr:1:socket", "--bind-to", "core", "a"]
    text, notes = adopt(mpijob("ranks", command), "cpu-lab", "cpu")
    assert yaml.safe_load(text)["placement"] == {"bindTo": "core"}
    assert "mpirunArgs" not in yaml.safe_load(text)
    assert ("mpirun --map-by ppr:1:socket not kept: `placement.mapBy` takes slot, hwthread, core, numa, socket, node; "
            "mpigen places the ranks itself (`mpigen explain` shows how)") in notes
    assert ("mpirun -np 4: mpigen runs 2 ranks, the workers times slotsPerWorker (it follows the chart's `workers` "
            "value)") in notes


def test_a_value_the_profile_does_not_take_is_left_out() -> None:
    spec = {"runPolicy": {"cleanPodPolicy": "Sometimes", "backoffLimit": 2}, "slotsPerWorker": 1}
    text, notes = adopt(mpijob("odd", ["mpirun", "a"], spec=spec), "cpu-lab", "cpu")
    assert yaml.safe_load(text)["runPolicy"] == {"backoffLimit": 2}
    assert ("runPolicy.cleanPodPolicy (.spec.runPolicy.cleanPodPolicy) not kept: the profile's field takes one of "
            "None, Running, All") in notes


def test_a_job_profile_of_the_same_name_is_named() -> None:
    _, notes = adopt(mpijob("pi", ["mpirun", "/home/mpiuser/pi"]), "cpu-lab", "cpu")
    assert f"{PROFILES}/jobs/pi.yaml is a job profile of this name already: the adopted one would take its place" in notes


def test_launcher_and_workers_env_differ() -> None:
    obj = mpijob("envs", ["mpirun", "a"], worker={"env": [{"name": "MODE", "value": "worker"}]})
    obj["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "MODE", "value": "launcher"}]
    text, notes = adopt(obj, "cpu-lab", "cpu")
    assert yaml.safe_load(text)["env"] == {"MODE": "launcher"}
    assert (".spec.mpiReplicaSpecs.Worker.template.spec.containers[0].env: MODE differs from the launcher's: a "
            "profile's env is both's, and the launcher's (what mpirun passes on) is kept") in notes
