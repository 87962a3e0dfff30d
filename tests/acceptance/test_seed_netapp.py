"""NetApp's two-DGX-1 TensorFlow/Horovod job (seed 002), written as mpigen profiles, against the seed itself.

The seed (seeds/002_e493630a1ed00baa.txt of the project's reference material; the lines this module reads are
tests/acceptance/seeds/netapp-two-dgx1.txt, verbatim) runs a worker Deployment and a master Job with
`hostNetwork: true`; the master's log shows the mpirun it ran. Its last mpirun is the training run (`-np 16`).
profiles/hardware/dgx-1-roce.yaml, profiles/clusters/netapp-lab.yaml and profiles/jobs/netapp-resnet50.yaml
write that job down; the job profile sets only the seed's own choices, and the NCCL settings that follow from
the hardware and cluster (NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX) are left to mpigen. Every value
compared with the seed is parsed from the seed's text here, never copied by hand.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PROFILES

from mpigen.commands.pipeline import CompileResult
from mpigen.model import Job

SEED = Path(__file__).parent / "seeds" / "netapp-two-dgx1.txt"
JOB_PROFILE = PROFILES / "jobs" / "netapp-resnet50.yaml"
CHART = "netapp-lab/jobs/netapp-resnet50"

# NCCL variables mpigen may set that the seed's line does not have, each with why it is right to.
ALLOWED_EXTRA_NCCL = {
    "NCCL_NET_GDR_LEVEL": "the hardware states the GPU-NIC distance",
}

# Variables mpigen must derive from the hardware and cluster: the job profile must not write them.
DERIVED = ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX")

# Under host networking a pod sees every RDMA device of its node, so mpigen names the attached rails' HCAs
# and ports exactly. A DGX-1's only mlx5 devices are its four ConnectX-4 ports (the 10 GbE ports are not
# Mellanox), and the job attaches all four rails, so this list selects the same devices as the seed's prefix.
EXPECTED_IB_HCA = "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"


# --- the seed ---------------------------------------------------------------------------------------

# Options of the seed's mpirun lines, with how many arguments each takes.
MPIRUN_OPTIONS = {"-allow-run-as-root": 0, "-np": 1, "-H": 1, "-bind-to": 1, "-map-by": 1, "-x": 1, "-mca": 2}


@dataclass
class SeedRun:
    """One mpirun line of the seed, parsed."""

    np: int
    hosts: list[tuple[str, int]]
    exported: dict[str, str | None] = field(default_factory=dict)
    """`-x NAME=VALUE` (value) and `-x NAME` (None), in order."""
    mca: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)
    """Other one-argument options (`-bind-to`, `-map-by`)."""
    program: list[str] = field(default_factory=list)
    redirection: list[str] = field(default_factory=list)
    """The shell redirection after the program (`> file 2>&1`), which is not an argument of it."""


def parse_mpirun(line: str) -> SeedRun:
    words = shlex.split(line)
    assert words[0] == "mpirun", words[:1]
    run = SeedRun(np=0, hosts=[])
    i = 1
    while i < len(words) and words[i].startswith("-"):
        option = words[i]
        assert option in MPIRUN_OPTIONS, f"an mpirun option this test does not know: {option}"
        args = words[i + 1:i + 1 + MPIRUN_OPTIONS[option]]
        if option == "-np":
            run.np = int(args[0])
        elif option == "-H":
            run.hosts = [(host, int(slots)) for host, slots in (h.rsplit(":", 1) for h in args[0].split(","))]
        elif option == "-x":
            name, equals, value = args[0].partition("=")
            run.exported[name] = value if equals else None
        elif option == "-mca":
            run.mca[args[0]] = args[1]
        elif MPIRUN_OPTIONS[option] == 1:
            run.options[option] = args[0]
        i += 1 + MPIRUN_OPTIONS[option]
    rest = words[i:]
    cut = next((j for j, w in enumerate(rest) if w.startswith(">") or re.fullmatch(r"[0-9]*>.*", w)), len(rest))
    run.program, run.redirection = rest[:cut], rest[cut:]
    return run


@pytest.fixture(scope="module")
def seed_text() -> str:
    return SEED.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def seed(seed_text: str) -> SeedRun:
    """The seed's last mpirun: the training run. The master's log shows two, on one line, separated by a row
    of `=`; a command ends there or at the end of its line."""
    starts = [m.start() for m in re.finditer(r"(?<![\w/.-])mpirun ", seed_text)]
    assert len(starts) >= 2, starts
    return parse_mpirun(re.match(r"[^\n]*?(?= =+ |\n|$)", seed_text[starts[-1]:]).group(0))


@pytest.fixture(scope="module")
def seed_nccl(seed: SeedRun) -> dict[str, str]:
    nccl = {name: value for name, value in seed.exported.items() if name.startswith("NCCL_") and value is not None}
    assert nccl, seed.exported
    return nccl


@pytest.fixture(scope="module")
def seed_mounts(seed_text: str) -> dict[str, str]:
    """Mount path of each PersistentVolumeClaim of the seed's pods (its YAML is flattened onto one line)."""
    claims = dict(re.findall(r"- name: (\S+) persistentVolumeClaim: claimName: (\S+)", seed_text))
    mounts = set(re.findall(r"- mountPath: (\S+) name: (\S+)", seed_text))
    by_volume = {volume: path for path, volume in mounts}
    assert len(by_volume) == len(mounts), f"a volume of the seed is mounted at two paths: {mounts}"
    assert claims and set(claims) <= set(by_volume), (claims, by_volume)
    return {claim: by_volume[volume] for volume, claim in claims.items()}


# --- the compiled job ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def job(example: CompileResult) -> Job:
    (found,) = [j for j in example.fleet.jobs if j.name == "netapp-resnet50"]
    return found


@pytest.fixture(scope="module")
def mpijob(example: CompileResult) -> dict[str, Any]:
    (found,) = [m.obj for c in example.charts if c.directory == CHART for m in c.manifests if m.obj["kind"] == "MPIJob"]
    return found


def _pod(mpijob: dict[str, Any], role: str) -> dict[str, Any]:
    return mpijob["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]


def _container(mpijob: dict[str, Any], role: str) -> dict[str, Any]:
    (container,) = _pod(mpijob, role)["containers"]
    return container


def _env(container: dict[str, Any]) -> dict[str, str]:
    pairs = [(e["name"], e["value"]) for e in container.get("env", [])]
    env = dict(pairs)
    assert len(env) == len(pairs), f"a variable is set twice: {pairs}"
    return env


@pytest.fixture(scope="module")
def worker_env(mpijob: dict[str, Any]) -> dict[str, str]:
    return _env(_container(mpijob, "Worker"))


@pytest.fixture(scope="module")
def mpirun(mpijob: dict[str, Any]) -> list[str]:
    return _container(mpijob, "Launcher")["command"]


def _option(command: list[str], flag: str, width: int = 1) -> list[list[str]]:
    """The arguments of every occurrence of `flag` in `command`."""
    return [command[i + 1:i + 1 + width] for i, word in enumerate(command) if word == flag]


# --- NCCL ----------------------------------------------------------------------------------------------


def test_the_parsed_seed_line_is_the_16_rank_training_run(seed: SeedRun) -> None:
    assert seed.np == 16
    assert sum(slots for _, slots in seed.hosts) == seed.np
    assert seed.program[:2] == ["python", seed.program[1]] and seed.program[1].endswith("tf_cnn_benchmarks.py")


def test_every_nccl_setting_of_the_seed_is_in_the_workers_env(seed_nccl: dict[str, str],
                                                              worker_env: dict[str, str]) -> None:
    for name, value in seed_nccl.items():
        assert name in worker_env, f"{name} of the seed is not set"
        if name == "NCCL_IB_HCA":
            # The seed names the device family (`mlx5`: every device whose name starts with it); mpigen names
            # the attached rails' devices exactly, because a host-network pod sees every HCA of the node.
            assert worker_env[name] == EXPECTED_IB_HCA
            devices = [entry.split(":")[0] for entry in worker_env[name].removeprefix("=").split(",")]
            assert all(device.startswith(value) for device in devices), (value, devices)
        elif name == "NCCL_SOCKET_IFNAME":
            # A leading `=` makes NCCL match each name exactly instead of as a prefix; the seed's names are whole
            # interface names, so both pick the same interfaces (unless some other interface's name starts with
            # one of them, e.g. `enp5s0.30910`, which only the seed's form would also take).
            assert worker_env[name] == f"={value}"
        else:
            assert worker_env[name] == value, name


def test_nccl_settings_the_hardware_implies_are_derived_not_written(job: Job, worker_env: dict[str, str]) -> None:
    written = yaml.safe_load(JOB_PROFILE.read_text(encoding="utf-8")).get("env", {})
    origins = {var.name: var.origin for var in job.env}
    for name in DERIVED:
        assert name not in written, f"{JOB_PROFILE.name} sets {name}: leave it to mpigen"
        assert name in worker_env, f"mpigen did not derive {name}"
        assert not origins[name].startswith(job.source), origins[name]


def test_no_nccl_setting_the_seed_lacks_unless_allowed(seed_nccl: dict[str, str], worker_env: dict[str, str]) -> None:
    extra = {name for name in worker_env if name.startswith("NCCL_")} - set(seed_nccl)
    assert extra <= set(ALLOWED_EXTRA_NCCL), sorted(extra - set(ALLOWED_EXTRA_NCCL))


def test_roce_gid_index_of_the_seed_follows_from_the_ethernet_nics(job: Job, seed_nccl: dict[str, str]) -> None:
    # The hardware says Ethernet, and that alone gives the seed's GID index.
    assert {r.nic.link_type.value for r in job.rails} == {"Ethernet"}
    assert dict((v.name, v.value) for v in job.env)["NCCL_IB_GID_INDEX"] == seed_nccl["NCCL_IB_GID_INDEX"]


# --- MPI ------------------------------------------------------------------------------------------------


def test_the_seeds_mca_settings_are_in_the_env(seed: SeedRun, worker_env: dict[str, str],
                                               mpijob: dict[str, Any]) -> None:
    settings = {name: value for name, value in seed.mca.items() if name != "plm_rsh_args"}
    assert settings, seed.mca
    launcher_env = _env(_container(mpijob, "Launcher"))
    for name, value in settings.items():
        assert worker_env.get(f"OMPI_MCA_{name}") == value, name
        assert launcher_env.get(f"OMPI_MCA_{name}") == value, name


def test_mpirun_connects_to_the_seeds_ssh_port(seed: SeedRun, mpirun: list[str], mpijob: dict[str, Any]) -> None:
    rsh_args = seed.mca["plm_rsh_args"]
    port = re.fullmatch(r"-p ([0-9]+)", rsh_args)
    assert port, rsh_args
    (given,) = _option(mpirun, "--mca", 2)
    assert given[0] == "plm_rsh_args"
    assert given[1] == rsh_args or given[1].startswith(rsh_args + " "), given
    command = _container(mpijob, "Worker")["command"]
    assert command[0] == "/usr/sbin/sshd" and _option(command, "-p") == [[port.group(1)]], command


def test_ranks_workers_and_gpus_are_the_seeds(seed: SeedRun, mpirun: list[str], mpijob: dict[str, Any]) -> None:
    assert _option(mpirun, "-np") == [[str(seed.np)]]
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == len(seed.hosts)
    (slots,) = {slots for _, slots in seed.hosts}
    assert mpijob["spec"]["slotsPerWorker"] == slots
    assert _container(mpijob, "Worker")["resources"]["limits"]["nvidia.com/gpu"] == slots


def test_rank_placement_is_the_seeds(seed: SeedRun, mpirun: list[str]) -> None:
    # The job's `placement` keeps the seed's mapping and binding (mpigen would otherwise bind by rankfile).
    for option in ("-bind-to", "-map-by"):
        assert mpirun[mpirun.index(f"-{option}") + 1] == seed.options[option], option
    assert "--rankfile" not in mpirun


def test_every_variable_reaches_the_ranks(seed: SeedRun, mpirun: list[str], mpijob: dict[str, Any],
                                          worker_env: dict[str, str]) -> None:
    exported = {args[0] for args in _option(mpirun, "-x")}
    assert set(worker_env) <= exported, sorted(set(worker_env) - exported)
    # `-x NAME` sends the launcher's value, so the launcher must hold the same ones.
    assert _env(_container(mpijob, "Launcher")) == worker_env
    passed_through = {name for name, value in seed.exported.items() if value is None}
    assert passed_through and passed_through <= exported, (passed_through, exported)


def test_the_program_is_the_seeds_without_its_redirection(seed: SeedRun, mpirun: list[str]) -> None:
    assert seed.redirection and seed.redirection[0] == ">"
    # The seed writes `-- datasets_use_prefetch=True`: with the space, `--` would end flag parsing and
    # tf_cnn_benchmarks refuses the rest as positional arguments; the profile joins the two (and says so).
    program: list[str] = []
    joined = 0
    for word in seed.program:
        if program and program[-1] == "--" and not word.startswith("-"):
            program[-1] += word
            joined += 1
        else:
            program.append(word)
    assert joined == 1, seed.program
    assert mpirun[-len(program):] == program
    assert not any(word.startswith(">") or word.endswith(">&1") for word in mpirun), mpirun


# --- pods ------------------------------------------------------------------------------------------------


def test_workers_use_the_host_network(seed_text: str, mpijob: dict[str, Any]) -> None:
    assert "hostNetwork: true" in seed_text
    worker = _pod(mpijob, "Worker")
    assert worker["hostNetwork"] is True
    assert worker["dnsPolicy"] == "ClusterFirstWithHostNet"


def test_one_rdma_device_per_rail(job: Job, seed_nccl: dict[str, str], mpijob: dict[str, Any]) -> None:
    limits = _container(mpijob, "Worker")["resources"]["limits"]
    rdma = {name: count for name, count in limits.items() if name.startswith("rdma/")}
    assert rdma == {f"rdma/rdma_{r.rail.name}": 1 for r in job.rails}
    # The seed's NCCL_SOCKET_IFNAME names one interface per rail.
    assert len(rdma) == len(seed_nccl["NCCL_SOCKET_IFNAME"].split(","))


def test_ipc_lock_and_never_privileged(seed_text: str, mpijob: dict[str, Any]) -> None:
    assert "privileged: true" in seed_text  # what the seed asked for, and mpigen does not
    worker = _container(mpijob, "Worker")
    assert worker["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    for role in ("Worker", "Launcher"):
        assert "privileged" not in _container(mpijob, role).get("securityContext", {}), role


def test_the_seeds_volumes_at_its_mount_paths(seed_mounts: dict[str, str], mpijob: dict[str, Any]) -> None:
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in _pod(mpijob, "Worker")["volumes"]
              if "persistentVolumeClaim" in v}
    for role in ("Worker", "Launcher"):
        mounts = {m["name"]: m["mountPath"] for m in _container(mpijob, role)["volumeMounts"]}
        assert {claims[name]: path for name, path in mounts.items() if name in claims} == seed_mounts, role


def test_dev_shm_is_a_memory_emptydir(seed_text: str, mpijob: dict[str, Any]) -> None:
    (seed_shm,) = set(re.findall(r"- name: (\S+) emptyDir: medium: Memory", seed_text))
    assert ("/dev/shm", seed_shm) in set(re.findall(r"- mountPath: (\S+) name: (\S+)", seed_text))
    pod = _pod(mpijob, "Worker")
    (mount,) = [m for m in _container(mpijob, "Worker")["volumeMounts"] if m["mountPath"] == "/dev/shm"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["emptyDir"]["medium"] == "Memory"
