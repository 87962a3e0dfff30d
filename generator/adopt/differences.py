"""What mpigen compiles differently from a hand-written MPIJob, read off the MPIJob it really compiles from the
adopted profile (generator/adopt/compiled.py), worded for a person moving the job over: one line each."""

from __future__ import annotations

from typing import Any

from mpigen.adopt.compiled import Compiled
from mpigen.adopt.job_fields import AdoptedJob
from mpigen.adopt.mpijob_input import mapping
from mpigen.model import Job
from mpigen.providers import PROVIDERS
from mpigen.support.diagnostics import Severity
from mpigen.validate.topology import MCA_FLAGS
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.mpi_operator import RunPolicyField, SchedulingPolicyField, SpecField
from mpigen.vocabulary.multus import NETWORKS_ANNOTATION

HCA = "NCCL_IB_HCA"


def differences(adopted: AdoptedJob, compiled: Compiled, path: str, bare: Compiled | None = None) -> list[str]:
    """The lines of what the compiled MPIJob does differently; where the profile does not compile, why. `bare`: the
    profile compiled without the MPIJob's variables, which says what mpigen derives where the MPIJob sets its own."""
    if compiled.job is None:
        return [f"the adopted profile does not compile yet: {d.format()}" for d in compiled.problems] or [
            f"the adopted profile does not compile yet ({path})"]
    said = [f"the adopted profile: {d.format()}" for d in compiled.problems if d.severity is not Severity.ERROR]
    job = compiled.job
    if compiled.mpijob is None:
        return [*said, f"cluster '{job.cluster.name}' runs its jobs as {job.backend.value}, not as an MPIJob: nothing "
                "to compare"]
    mpijob = compiled.mpijob
    replicas = mpijob["spec"][SpecField.MPI_REPLICA_SPECS]
    worker = replicas[mpi_operator.WORKER]["template"]["spec"]["containers"][0]
    launcher = replicas[mpi_operator.LAUNCHER]["template"]["spec"]["containers"][0]
    said += _network(adopted, job, worker)
    said += _overridden(adopted, bare)
    said += _rank_count(adopted, launcher)
    said += _slots(adopted, job)
    said += _gang(adopted, mpijob)
    said += _readiness(adopted, worker)
    said += _capabilities(adopted, worker)
    return said


def mpirun_mca(compiled: Compiled) -> dict[str, str]:
    """The MCA parameters mpigen's mpirun line sets itself (`--mca KEY VALUE`), by key."""
    if compiled.mpijob is None:
        return {}
    command = [str(part) for part in _launcher(compiled.mpijob).get("command", [])]
    return {command[i + 1]: command[i + 2] for i, part in enumerate(command[:-2]) if part in MCA_FLAGS}


def _launcher(mpijob: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = mpijob["spec"][SpecField.MPI_REPLICA_SPECS][mpi_operator.LAUNCHER]["template"]["spec"][
        "containers"][0]
    return container


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: str(e.get("value", "")) for e in container.get("env", []) if "value" in e}


def _network(adopted: AdoptedJob, job: Job, worker: dict[str, Any]) -> list[str]:
    """The rails mpigen attaches, and the variables it derives from them that the MPIJob set otherwise or not at
    all (NCCL_IB_HCA first: without it NCCL picks any HCA it finds, or none)."""
    said = []
    compiled_env = _env(worker)
    rails = ", ".join(r.rail.name for r in job.rails)
    from_rails = f"the rails {rails} of pool {job.pool.name}" if rails else f"pool {job.pool.name}, which has no rails"
    for name, value in adopted.left_to_mpigen.items():
        now = compiled_env.get(name)
        derived = f"mpigen derives '{now}' from {from_rails}" if now is not None else "mpigen sets none here"
        said.append(f"{name}='{value}' (the MPIJob's) is left out: {derived}")
    if HCA not in adopted.left_to_mpigen and HCA in compiled_env:
        said.append(f"missing {HCA}: the MPIJob does not set it; mpigen derives '{compiled_env[HCA]}' from {from_rails}")
    template = mapping(adopted.written.spec, SpecField.MPI_REPLICA_SPECS, mpi_operator.WORKER, "template")
    if job.rails and NETWORKS_ANNOTATION not in mapping(template, "metadata", "annotations"):
        how = ("on the nodes' own interfaces, the host network" if PROVIDERS[job.cluster.network.provider].host_network
               else "one device of each, through Multus")
        said.append(f"mpigen attaches {rails} to every worker ({how}) and requests their devices: the MPIJob "
                    "asked for none")
    return said


def _overridden(adopted: AdoptedJob, bare: Compiled | None) -> list[str]:
    """The MPIJob's variables kept in the profile that replace a value mpigen derives (`env` wins over it)."""
    if bare is None or bare.mpijob is None:
        return []
    worker = bare.mpijob["spec"][SpecField.MPI_REPLICA_SPECS][mpi_operator.WORKER]["template"]["spec"]["containers"][0]
    derived = _env(worker)
    return [f"{name}: the MPIJob's '{value}' is kept and replaces what mpigen derives here, '{derived[name]}'"
            for name, value in adopted.ranks_env.items()
            if name in derived and derived[name] != value and name not in adopted.left_to_mpigen]


def _rank_count(adopted: AdoptedJob, launcher: dict[str, Any]) -> list[str]:
    line = adopted.line
    command = [str(part) for part in launcher.get("command", [])]
    flag = next((i for i, part in enumerate(command[:-1]) if part in ("-np", "-n")), None)
    ranks = command[flag + 1] if flag is not None else None
    if line.rank_count is None or ranks is None or line.rank_count == ranks:
        return []
    return [f"mpirun {line.rank_flag} {line.rank_count}: mpigen runs {ranks} ranks, the workers times slotsPerWorker "
            "(it follows the chart's `workers` value)"]


def _slots(adopted: AdoptedJob, job: Job) -> list[str]:
    if not adopted.gpus or adopted.slots == adopted.gpus:
        return []
    return [f"slots vs GPUs: slotsPerWorker {adopted.slots} with {adopted.gpus} GPUs per worker: "
            f"{'one rank drives several GPUs' if adopted.slots < adopted.gpus else 'GPUs are shared by ranks'}; "
            f"mpigen's default is one rank per GPU ({job.gpus_per_worker}): leave slotsPerWorker out for it"]


def _gang(adopted: AdoptedJob, mpijob: dict[str, Any]) -> list[str]:
    """The #608 rule: under WaitForWorkersReady the launcher does not exist while the gang forms, so mpigen counts the
    workers alone; mpi-operator's own default counts them and the launcher."""
    run = adopted.written.spec.get(SpecField.RUN_POLICY) or {}
    given = (run.get(RunPolicyField.SCHEDULING_POLICY) or {}).get(SchedulingPolicyField.MIN_AVAILABLE)
    compiled = (mpijob["spec"][SpecField.RUN_POLICY].get(RunPolicyField.SCHEDULING_POLICY) or {}).get(
        SchedulingPolicyField.MIN_AVAILABLE)
    policy = mpijob["spec"][SpecField.LAUNCHER_CREATION_POLICY]
    workers = adopted.written.workers
    if compiled is None:
        if given is not None:
            return [f".spec.runPolicy.schedulingPolicy.minAvailable {given}: the cluster gangs no job through "
                    "mpi-operator, so mpigen writes no schedulingPolicy"]
        return []
    if given == compiled or (given is not None and not _kept(adopted, "scheduling", "minAvailable")):
        return []  # the same, or said already where the profile was filled (a gang that can never form)
    before = f"minAvailable {given}" if given is not None else f"no minAvailable (mpi-operator counts {workers + 1}: " \
        "the workers and the launcher)"
    return [f"minAvailable (mpi-operator #608): the MPIJob has {before}; mpigen's gang is {compiled} under "
            f"{policy}" + (", where the launcher is created only once the workers run" if compiled == workers else "")]


def _kept(adopted: AdoptedJob, key: str, inner: str) -> bool:
    """Whether the profile has `key.inner`."""
    return any(field.key == key and isinstance(field.value, tuple) and any(f.key == inner for f in field.value)
               for field in adopted.fields)


def _readiness(adopted: AdoptedJob, worker: dict[str, Any]) -> list[str]:
    before = adopted.written.worker.data.get("readinessProbe")
    after = worker.get("readinessProbe")
    if before == after:
        return []
    if after is None:
        return ["the workers' readinessProbe is not kept: mpigen's is a tcpSocket probe on sshd's port (`sshPort`), "
                "and with workerCommand it adds one only where `sshPort` says the port; without it a worker is Ready "
                "when it starts, before sshd listens"]
    if before is None:
        return [f"no readiness probe: mpigen adds one (tcpSocket port {after.get('tcpSocket', {}).get('port')}), so "
                "a worker is Ready once sshd listens and the launcher starts only then"]
    return [f"the workers' readinessProbe becomes mpigen's (tcpSocket port {after.get('tcpSocket', {}).get('port')})"]


def _capabilities(adopted: AdoptedJob, worker: dict[str, Any]) -> list[str]:
    context = {**(adopted.written.worker_pod.get("securityContext") or {}),
               **(adopted.written.worker.data.get("securityContext") or {})}
    added = (worker.get("securityContext", {}).get("capabilities") or {}).get("add") or []
    if context.get("privileged") and "IPC_LOCK" in added:
        return ["privileged workers become unprivileged ones with IPC_LOCK, all RDMA needs"]
    return []
