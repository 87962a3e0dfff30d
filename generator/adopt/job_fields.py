"""A hand-written MPIJob's values in the job profile's fields, each with the MPIJob field it came from, and a note for
each value the profile cannot hold as it was written."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mpigen.adopt.mpijob_input import Container, HandWrittenJob, listed, mapping, no_program, secret_in_command
from mpigen.adopt.mpirun import MpirunLine, split_mpirun
from mpigen.adopt.pods import metadata_fields, pod_notes, security_fields
from mpigen.adopt.profile_text import Field, schema_checked
from mpigen.model import BindTo, admission, defaults
from mpigen.resolve.nccl import RAIL_FACTS
from mpigen.validate.secrets import harmless, secret_name, secret_shape, written_secret
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.kubernetes import json_path
from mpigen.vocabulary.mpi_operator import RunPolicyField, SchedulingPolicyField, SpecField

API_VERSION = "mpigen/v1alpha1"
EXPORTED_BY_MPIGEN = ("PATH", "LD_LIBRARY_PATH")
"""What mpigen's mpirun always passes on to the ranks (`-x PATH -x LD_LIBRARY_PATH`)."""
MAP_BY = ("slot", "hwthread", "core", "numa", "socket", "node")
SHM = "/dev/shm"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A name a profile's `env` takes (and a shell exports)."""


@dataclass(frozen=True)
class AdoptedJob:
    """The profile's fields for one MPIJob, what was said while filling them, and what the comparison with the
    compiled MPIJob needs."""

    written: HandWrittenJob
    line: MpirunLine
    fields: list[Field]
    notes: tuple[str, ...]
    ranks_env: dict[str, str] = field(default_factory=dict)
    """The literal variables the MPIJob gave its ranks, by name."""
    left_to_mpigen: dict[str, str] = field(default_factory=dict)
    """Facts of the nodes' network the MPIJob stated, left out for mpigen to derive, with the MPIJob's values."""
    gpus: int = 0
    slots: int = 1


def gpus_of(container: Container) -> tuple[str, int]:
    """The GPU resource the container asks for (a `<vendor>/gpu` limit, else request) and how many; ('', 0)."""
    for kind in ("limits", "requests"):
        for resource, amount in mapping(container.data, "resources", kind).items():
            if str(resource).endswith("/gpu") and str(amount).isdigit():
                return str(resource), int(str(amount))
    return "", 0


def without_env(adopted: AdoptedJob) -> list[Field]:
    """The profile's fields but its `env` and `mpirunArgs`: what mpigen derives on its own, compiled for comparison."""
    return [field for field in adopted.fields if field.key not in ("env", "mpirunArgs")]


def adopted_fields(written: HandWrittenJob, cluster: tuple[str, str], pool: tuple[str, str],
                   mpigen_mca: dict[str, str] | None = None) -> AdoptedJob:
    """`mpigen_mca`: the MCA parameters mpigen's own mpirun line sets for this job (`--mca KEY VALUE`), by key: the
    MPIJob's are left out for them (OpenMPI aborts on a parameter listed twice)."""
    return _Adoption(written, mpigen_mca or {}).build(cluster, pool)


class _Adoption:
    def __init__(self, written: HandWrittenJob, mpigen_mca: dict[str, str]) -> None:
        self.written = written
        self.mpigen_mca = mpigen_mca
        self.command_mca: list[str] = []
        self.notes: list[str] = []
        self.fields: list[Field] = []
        self.line = split_mpirun(written.launcher.command)
        self.spec = written.spec
        self.implementation = str(self.spec.get(SpecField.MPI_IMPLEMENTATION) or mpi_operator.DEFAULT_MPI_IMPLEMENTATION)

    def spec_field(self, *keys: str) -> str:
        return json_path(("spec", *keys))

    def build(self, cluster: tuple[str, str], pool: tuple[str, str]) -> AdoptedJob:
        w, launcher, worker = self.written, self.written.launcher, self.written.worker
        self.fields += [Field("apiVersion", API_VERSION), Field("kind", "Job"), Field("name", w.name, ".metadata.name"),
                        Field("cluster", cluster[0], cluster[1]), Field("pool", pool[0], pool[1])]
        if w.namespace:
            self.fields.append(Field("namespace", w.namespace, ".metadata.namespace"))
        else:
            self.notes.append(".metadata.namespace: none (kubectl put it in the current context's namespace); mpigen "
                              "puts the job in its cluster's first namespace (`namespace:` chooses another)")
        self.fields.append(Field("image", launcher.data["image"], launcher.field("image")))
        self._pull_policy()
        gpu_resource, gpus = gpus_of(worker)
        self.fields.append(Field("workers", w.workers, f".spec.mpiReplicaSpecs.{mpi_operator.WORKER}.replicas"))
        if gpus:
            self.fields.append(Field("gpusPerWorker", gpus, worker.field("resources", "limits", gpu_resource)))
        slots = self.spec.get(SpecField.SLOTS_PER_WORKER)
        slots = slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None
        self.fields.append(Field("slotsPerWorker", slots or 1, self.spec_field(SpecField.SLOTS_PER_WORKER) if slots
                                 else ".spec.slotsPerWorker left out: mpi-operator's default, 1"))
        if SpecField.MPI_IMPLEMENTATION in self.spec:
            self.fields.append(Field("mpiImplementation", self.implementation,
                                     self.spec_field(SpecField.MPI_IMPLEMENTATION)))
        env, left = self._env()
        self._command()
        self._env_field(env)
        self._volumes()
        self._resources(gpu_resource)
        self.fields += security_fields(w, self.notes)
        self._operator_fields()
        self.fields += metadata_fields(w, self.notes)
        pod_notes(w, self.notes)
        if worker.command:
            self.fields.append(Field("workerCommand", list(worker.command), worker.field("command") + " and args"))
        probe = worker.data.get("readinessProbe")
        socket = probe.get("tcpSocket") if isinstance(probe, dict) else None
        port = socket.get("port") if isinstance(socket, dict) else None
        if isinstance(port, int) and not isinstance(port, bool):  # sshd's, as the workers' probe says (not a name)
            self.fields.append(Field("sshPort", port, worker.field("readinessProbe", "tcpSocket", "port")))
        self.fields = schema_checked(self.fields, self.notes)
        return AdoptedJob(w, self.line, self.fields, tuple(self.notes), {k: v for k, v in env.items() if
                          isinstance(v, str)} | left, left, gpus, slots or 1)

    # --- the launcher's command ------------------------------------------------------------------------------
    def _command(self) -> None:
        launcher, line = self.written.launcher, self.line
        where = launcher.field("command") if launcher.data.get("command") else launcher.field("args")
        if "command" not in launcher.data or launcher.data.get("command") is None:
            self.notes.append(f"{launcher.field('args')} without a command ran after the image's ENTRYPOINT; mpigen "
                              "writes it as the launcher's command")
        secret = written_secret(list(launcher.command))
        if secret:
            raise secret_in_command(self.written, secret[0][1])
        if line.launcher is None:
            self.fields.append(Field("launcherCommand", list(line.program), f"{where}: not an mpirun line, kept whole"))
            self.notes.append(f"the launcher runs `{line.program[0] if line.program else ''}`, not mpirun: kept whole "
                              "as launcherCommand, so mpigen's mpirun flags, hostfile (/etc/mpigen/hostfile) and "
                              "exports are not used; write the program as `program` to have them")
            return
        if not line.program:
            raise no_program(self.written)
        openmpi = self.implementation == mpi_operator.OPENMPI
        kept = list(line.kept)
        placement: list[Field] = []
        for flag, value, key, allowed in ((line.bind_flag, line.bind_to, "bindTo", [b.value for b in BindTo]),
                                          (line.map_flag, line.map_by, "mapBy", list(MAP_BY))):
            if value is None:
                continue
            if openmpi and value in allowed and value != BindTo.GPU_NIC_SOCKET.value:
                placement.append(Field(key, value, f"{where}: {flag} {value}"))
            elif openmpi:  # mpigen writes OpenMPI's placement flags itself: a second one in mpirunArgs would clash
                self.notes.append(f"mpirun {flag} {value} not kept: `placement.{key}` takes {', '.join(allowed)}; "
                                  "mpigen places the ranks itself (`mpigen explain` shows how)")
            else:
                kept += [flag, value]
        if placement:
            self.fields.append(Field("placement", tuple(placement)))
        if line.hosts:
            self.notes.append(f"mpirun {' '.join(line.hosts)}: not kept; mpigen's hostfile (and OpenMPI "
                              "rankfile) says where each rank of each run goes")
        if line.env_policy:
            self.notes.append(f"mpirun {' '.join(line.env_policy)}: not kept; mpigen's mpirun passes the job's env "
                              "itself (-genv, and -genvlist for a Secret's value), and Hydra takes one -genvlist, "
                              "-genvall or -genvnone; a launcher variable the ranks need belongs in `env`")
        if line.unknown:
            self.notes.append(f"mpirun {', '.join(line.unknown)}: taken as flags without a value; the program starts "
                              f"at `{line.program[0]}`: check the split of mpirunArgs and program")
        for export in line.exports:
            if export.value is None and export.name not in EXPORTED_BY_MPIGEN and export.name not in self._container_env():
                kept += [export.flag, export.name]
        if not openmpi:
            kept += [word for mca in line.mca for word in ("-mca", mca.key, mca.value)]
        kept += self.command_mca
        self.fields.append(Field("program", list(line.program), f"{where}: after mpirun and its flags"))
        if kept:
            self.fields.append(Field("mpirunArgs", kept, f"{where}: mpirun flags a profile has no field for"))

    # --- environment -------------------------------------------------------------------------------------------
    def _container_env(self) -> dict[str, Any]:
        """The containers' env by name, the worker's then the launcher's (whose values mpirun passes on)."""
        found: dict[str, Any] = {}
        for container in (self.written.worker, self.written.launcher):
            for index, item in enumerate(listed(container.data, "env")):
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    found[item["name"]] = (container.field("env", index), item)
        return found

    def _differing_env(self) -> None:
        """A variable the launcher and the workers set to different values: the profile has one `env` for both."""
        worker = {i.get("name"): i for i in listed(self.written.worker.data, "env") if isinstance(i, dict)}
        for item in listed(self.written.launcher.data, "env"):
            if isinstance(item, dict) and item.get("name") in worker and worker[item["name"]] != item:
                self.notes.append(f"{self.written.worker.field('env')}: {item['name']} differs from the launcher's: "
                                  "a profile's env is both's, and the launcher's (what mpirun passes on) is kept")

    def _env(self) -> tuple[dict[str, Any], dict[str, str]]:
        """Every variable the ranks get, with the field it came from: the containers' env, then mpirun's `-x`
        (`-genv`) and `-mca` (as OMPI_MCA_*), which win over it."""
        env: dict[str, Any] = {}
        where: dict[str, str] = {}
        for name, (path, item) in self._container_env().items():
            if isinstance(item.get("valueFrom"), dict):
                ref = item["valueFrom"].get("secretKeyRef")
                if isinstance(ref, dict) and isinstance(ref.get("name"), str) and isinstance(ref.get("key"), str):
                    env[name] = {"secretKeyRef": {"name": ref["name"], "key": ref["key"]}}
                else:
                    self.notes.append(f"{path}: {name} takes its value from "
                                      f"{', '.join(item['valueFrom']) or 'nothing'}, which a profile cannot say: not kept")
                    continue
            else:
                env[name] = str(item.get("value", ""))
            where[name] = path
        self._differing_env()
        mpirun = self.written.launcher.field("command")
        for export in self.line.exports:
            if export.value is not None:
                env[export.name], where[export.name] = export.value, f"{mpirun}: {export.flag} {export.name}=..."
            elif export.name in EXPORTED_BY_MPIGEN:
                self.notes.append(f"mpirun {export.flag} {export.name}: mpigen's mpirun passes {export.name} on "
                                  "itself")
        if self.implementation == mpi_operator.OPENMPI:
            self._mca(env, where)
        left = {name: value for name, value in env.items() if name in RAIL_FACTS and isinstance(value, str)}
        for name in left:
            env.pop(name)
        self.where = where
        return env, left

    def _mca(self, env: dict[str, Any], where: dict[str, str]) -> None:
        """`-mca KEY VALUE` as OMPI_MCA_KEY in `env`; on the command line still where mpi-operator sets the variable
        on the launcher (it would override the profile's); left out where mpigen's mpirun line sets it."""
        mpirun = self.written.launcher.field("command")
        given: dict[str, str] = {}
        for mca in self.line.mca:
            name = f"OMPI_MCA_{mca.key}"
            if mca.key in given:
                self.notes.append(f"duplicated MCA parameter: -mca {mca.key} is given twice ('{given[mca.key]}', then "
                                  f"'{mca.value}'), which OpenMPI refuses ('MCA parameters can only be listed once'); "
                                  f"the profile keeps '{mca.value}' once")
            elif name in env and isinstance(env[name], str):
                self.notes.append(f"duplicated MCA parameter: {mca.key} is set both as -mca ('{mca.value}') and as "
                                  f"{name} in {where[name]} ('{env[name]}'): the command line wins; the profile keeps "
                                  f"'{mca.value}' once")
            given[mca.key] = mca.value
        for key, value in given.items():
            if key in self.mpigen_mca:
                env.pop(f"OMPI_MCA_{key}", None)
                self.notes.append(f"-mca {key} '{value}' is left out: mpigen's mpirun passes --mca {key} "
                                  f"'{self.mpigen_mca[key]}' itself (from the cluster profile)")
            elif key in mpi_operator.LAUNCHER_MCA:
                env.pop(f"OMPI_MCA_{key}", None)
                self.command_mca += ["-mca", key, value]
            else:
                env[f"OMPI_MCA_{key}"], where[f"OMPI_MCA_{key}"] = value, f"{mpirun}: -mca {key}"

    def _env_field(self, env: dict[str, Any]) -> None:
        entries: list[Field] = []
        for name, value in env.items():
            path = self.where[name]
            if not ENV_NAME.fullmatch(name):
                self.notes.append(f"{path}: the variable '{name}' is no name a shell can export: not kept")
            elif isinstance(value, dict):
                ref = value["secretKeyRef"]
                entries.append(Field(name, (Field("secretKeyRef", (Field("name", ref["name"]), Field("key", ref["key"]))),),
                                     path))
            elif secret_shape(value) or (secret_name(name) and not harmless(value)):
                entries.append(Field(name, "{secretKeyRef: {name: <Secret>, key: <key>}}",
                                     f"{path}: its value is not copied (a secret): put it in a Secret", left_out=True))
                self.notes.append(f"{path}: {name} holds a secret: its value is not copied into the profile; put it "
                                  f"in a Secret and write `{name}: {{secretKeyRef: {{name: <Secret>, key: <key>}}}}`")
            else:
                entries.append(Field(name, value, path))
        if entries:
            self.fields.append(Field("env", tuple(entries)))

    # --- pods ------------------------------------------------------------------------------------------------
    def _pull_policy(self) -> None:
        launcher, worker = self.written.launcher, self.written.worker
        policy = launcher.data.get("imagePullPolicy")
        if policy in ("Always", "IfNotPresent", "Never"):
            self.fields.append(Field("imagePullPolicy", policy, launcher.field("imagePullPolicy")))
        if worker.data.get("imagePullPolicy") != policy:
            self.notes.append(f"{worker.field('imagePullPolicy')} ('{worker.data.get('imagePullPolicy')}') is not the "
                              f"launcher's ('{policy}'): a profile has one for both, the launcher's")

    def _volumes(self) -> None:
        worker, pod = self.written.worker, self.written.worker_pod
        mounts = {m.get("name"): (i, m) for i, m in enumerate(listed(worker.data, "volumeMounts")) if isinstance(m, dict)}
        volumes: list[dict[str, Any]] = []
        where = f".spec.mpiReplicaSpecs.{mpi_operator.WORKER}.template.spec.volumes"
        for volume in listed(pod, "volumes"):
            if not isinstance(volume, dict) or volume.get("name") not in mounts:
                continue
            name, (_, mount) = volume["name"], mounts[volume["name"]]
            claim, host, empty = volume.get("persistentVolumeClaim"), volume.get("hostPath"), volume.get("emptyDir")
            if mount.get("mountPath") == SHM and isinstance(empty, dict):
                if empty.get("sizeLimit"):
                    self.fields.append(Field("shmSize", str(empty["sizeLimit"]), f"{where}: {name} (emptyDir at {SHM})"))
                continue
            entry: dict[str, Any] = {"name": name}
            if isinstance(claim, dict) and claim.get("claimName"):
                entry["claim"] = claim["claimName"]
            elif isinstance(host, dict) and host.get("path"):
                entry["hostPath"] = host["path"]
            else:
                kinds = ", ".join(k for k in volume if k != "name")
                self.notes.append(f"{where}: volume {name} ({kinds}) is no claim or host folder, which a profile "
                                  "mounts: not kept")
                continue
            entry["mountPath"] = mount.get("mountPath", "")
            if mount.get("readOnly") or (isinstance(claim, dict) and claim.get("readOnly")):
                entry["readOnly"] = True
            volumes.append(entry)
        if volumes:
            self.fields.append(Field("volumes", volumes, f"{where} and the worker's volumeMounts"))

    def _resources(self, gpu_resource: str) -> None:
        for key, container in (("resources", self.written.worker), ("launcher", self.written.launcher)):
            limits = mapping(container.data, "resources", "limits")
            requests = mapping(container.data, "resources", "requests")
            entries = []
            for name in ("cpu", "memory"):
                value = limits.get(name, requests.get(name))
                if value is not None:
                    entries.append(Field(name, str(value), container.field("resources", "limits" if name in limits
                                                                            else "requests", name)))
                if name in limits and name in requests and str(limits[name]) != str(requests[name]):
                    self.notes.append(f"{container.field('resources')}: {name} requests {requests[name]} and limits "
                                      f"{limits[name]}; mpigen requests what it limits: {limits[name]}")
            others = sorted({str(r) for r in (*limits, *requests)} - {"cpu", "memory", gpu_resource})
            if others:
                self.notes.append(f"{container.field('resources')}: {', '.join(others)} not kept: mpigen requests the "
                                  "GPUs and each rail's own device resource from the pool's hardware and cluster")
            if entries:
                value = tuple(entries) if key == "resources" else (Field("resources", tuple(entries)),)
                self.fields.append(Field(key, value))

    # --- operator fields -----------------------------------------------------------------------------------------
    def _operator_fields(self) -> None:
        spec, written = self.spec, self.written
        path = spec.get(SpecField.SSH_AUTH_MOUNT_PATH)
        if isinstance(path, str) and path.startswith("/"):
            self.fields.append(Field("sshAuthMountPath", path, self.spec_field(SpecField.SSH_AUTH_MOUNT_PATH)))
        policy = spec.get(SpecField.LAUNCHER_CREATION_POLICY)
        if policy in mpi_operator.LAUNCHER_CREATION_POLICIES:
            self.fields.append(Field("launcherCreationPolicy", policy, self.spec_field(SpecField.LAUNCHER_CREATION_POLICY)))
        else:
            self.notes.append(f".spec.launcherCreationPolicy left out: mpi-operator creates the launcher at once "
                              f"({mpi_operator.AT_STARTUP}); mpigen's default {defaults.LAUNCHER_CREATION_POLICY} "
                              "creates it once every worker is Ready (no hostname races, mpi-operator #481)")
        policy = policy if policy in mpi_operator.LAUNCHER_CREATION_POLICIES else defaults.LAUNCHER_CREATION_POLICY
        run = mapping(spec, SpecField.RUN_POLICY)
        entries = [Field(key, run[key], self.spec_field(SpecField.RUN_POLICY, key)) for key in (
            RunPolicyField.CLEAN_POD_POLICY, RunPolicyField.BACKOFF_LIMIT, RunPolicyField.ACTIVE_DEADLINE_SECONDS,
            RunPolicyField.TTL_SECONDS_AFTER_FINISHED, RunPolicyField.SUSPEND) if run.get(key) is not None]
        if RunPolicyField.CLEAN_POD_POLICY not in run:
            self.notes.append(f".spec.runPolicy.cleanPodPolicy left out: mpi-operator keeps the pods "
                              f"({mpi_operator.DEFAULT_CLEAN_POD_POLICY}); mpigen's default {defaults.CLEAN_POD_POLICY} "
                              "deletes the running ones when the job ends")
        if run.get(RunPolicyField.MANAGED_BY):
            self.notes.append(f".spec.runPolicy.managedBy ({run[RunPolicyField.MANAGED_BY]}) not kept: a profile has "
                              "no field for it")
        if entries:
            self.fields.append(Field("runPolicy", tuple(entries)))
        gang = mapping(run, RunPolicyField.SCHEDULING_POLICY)
        scheduling = [Field(key, gang[key], self.spec_field(SpecField.RUN_POLICY, RunPolicyField.SCHEDULING_POLICY, key))
                      for key in (SchedulingPolicyField.QUEUE, SchedulingPolicyField.PRIORITY_CLASS) if gang.get(key)]
        given = gang.get(SchedulingPolicyField.MIN_AVAILABLE)
        if isinstance(given, int) and given > 0:
            limit = admission.min_available_limit(written.workers, str(policy))
            if given <= limit:
                scheduling.append(Field("minAvailable", given, self.spec_field(
                    SpecField.RUN_POLICY, RunPolicyField.SCHEDULING_POLICY, SchedulingPolicyField.MIN_AVAILABLE)))
            else:
                self.notes.append(f".spec.runPolicy.schedulingPolicy.minAvailable {given} not kept: under "
                                  f"{policy} the gang can hold at most {limit} pods (the launcher is created once the "
                                  f"{written.workers} workers run: mpi-operator #608); mpigen counts {limit}")
        if gang.get(SchedulingPolicyField.SCHEDULE_TIMEOUT_SECONDS) is not None:
            self.notes.append(".spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds not kept: the cluster profile's "
                              "scheduling.scheduleTimeoutSeconds says it for every job")
        if scheduling:
            self.fields.append(Field("scheduling", tuple(scheduling)))
        if spec.get("runLauncherAsWorker"):
            self.notes.append(".spec.runLauncherAsWorker not kept: mpigen's launcher runs no rank")


