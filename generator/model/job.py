"""An MPI job as resolved: its size, placement, rails, environment, run policy, and the run it continues."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from mpigen.model import names
from mpigen.model.acceptance import Acceptance
from mpigen.model.cluster import Backend, Cluster, NodePool, Rail
from mpigen.model.devices import WorkerDevices
from mpigen.model.domains import DomainFit, Slices
from mpigen.model.hardware import Nic
from mpigen.model.names import rail_interface
from mpigen.model.pods_ready import pods_ready_seconds
from mpigen.vocabulary import kubernetes, mpi_operator


class Naming(str, Enum):
    """How an MPIJob is named: with a digest of its run (default) or plainly after the job."""

    CONTENT_HASH = "content-hash"
    STABLE = "stable"


@dataclass(frozen=True)
class CommittedRun:
    """What a committed job chart says of its run: its Chart.yaml annotations, the defaults of its values.yaml,
    and the text of its job object's template. A render keeps the run's name (and the spec it started with)
    while the profiles ask the same of it (`identity`)."""

    chart: str
    """The chart's folder under the output folder, `<cluster>/jobs/<job>`."""
    name: str
    naming: str | None
    identity: str | None
    """`mpigen/run-identity`; None in charts compiled before it was recorded (mpigen 0.1.0)."""
    run_release: str | None
    spec_digest: str | None
    template: str
    """The job object's template file (`mpijob.yaml`, `volcano-job.yaml`, `trainjob.yaml`)."""
    text: str
    image: str | None = None
    workers: int | None = None


class MpiImplementation(str, Enum):
    OPENMPI = mpi_operator.OPENMPI
    INTEL = mpi_operator.INTEL
    MPICH = mpi_operator.MPICH


@dataclass(frozen=True)
class RailAttachment:
    """A rail as one job's workers see it: the network, and the NIC it lands on."""

    rail: Rail
    nic: Nic

    @property
    def interface(self) -> str:
        return rail_interface(self.rail.name)


class BindTo(str, Enum):
    """How OpenMPI binds each rank (`--bind-to`), or to the socket of its GPU's NIC through a rankfile."""

    GPU_NIC_SOCKET = "gpu-nic-socket"
    NONE = "none"
    HWTHREAD = "hwthread"
    CORE = "core"
    NUMA = "numa"
    SOCKET = "socket"


class WorkerSpread(str, Enum):
    """How a job's workers share nodes (`workerSpread`), where several fit on one."""

    PACK = "pack"
    """Preferably on as few nodes as they fit: partial-node workers then talk over NVLink, not the rails."""
    ONE_PER_NODE = "one-per-node"
    """Never two on one node."""


@dataclass(frozen=True)
class Placement:
    """Where mpirun puts ranks on a worker and what it binds them to (OpenMPI)."""

    map_by: str | None
    bind_to: BindTo | None
    """None: OpenMPI's own default (CPU jobs that say nothing)."""
    rank_sockets: tuple[int, ...] = ()
    """With `gpu-nic-socket`: the socket of each local rank (= its GPU), written into the rankfile."""
    cores_per_socket: int = 0
    no_rankfile: str = ""
    """Why ranks are not bound to their GPU's NIC socket by a rankfile (`derive.nic_socket_problem`), for explain."""

    @property
    def rankfile(self) -> bool:
        return self.bind_to is BindTo.GPU_NIC_SOCKET


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str
    origin: str
    secret: SecretKey | None = None
    """Where the value comes from instead of `value` (then ''): a key of a Secret in the job's namespace."""
    run_ref: RunRef | None = None
    """Or a name of the run, which the builder fills in from the job object's name (then `value` is '')."""


class RunRef(str, Enum):
    """A name of the run that exists only once the job object's name, with its digest, is known."""

    FIRST_WORKER = "firstWorker"
    """The first worker's host name: rank 0's host (torch.distributed's MASTER_ADDR)."""
    NAME = "name"
    """The job object's name."""


@dataclass(frozen=True)
class SecretKey:
    name: str
    key: str


@dataclass(frozen=True)
class Volume:
    name: str
    claim: str | None
    mount_path: str
    read_only: bool
    host_path: str | None = None
    """A folder of the node, mounted instead of a claim: only where the profile asks."""
    host_path_reason: str | None = None
    """Why the job needs that folder (required for folders that give the node away), for the chart's reviewers."""


@dataclass(frozen=True)
class Resources:
    cpu: str | None
    memory: str | None


@dataclass(frozen=True)
class RunPolicy:
    clean_pod_policy: str
    backoff_limit: int | None
    active_deadline_seconds: int | None
    ttl_seconds_after_finished: int | None
    suspend: bool


@dataclass(frozen=True)
class JobScheduling:
    """The job's place in its cluster's gang scheduling; empty on a cluster without one."""

    queue: str | None = None
    """volcano, kueue: the queue (kueue: the LocalQueue in the job's namespace)."""
    priority_class: str | None = None
    min_available: int | None = None
    """volcano, coscheduling: pods that must fit at once, the profile's; None: derived from the workers."""
    topology_label: str | None = None
    """kueue: the node label of the topology level the workers must (or should) share."""
    topology_required: bool = True
    fit: DomainFit | None = None
    """kueue, with a topology level: how the workers sit against one domain of it, and their slices."""

    @property
    def slices(self) -> Slices | None:
        """kueue: the podset slices of workers larger than one domain of their slice level; None without."""
        return self.fit.slices if self.fit is not None else None


QUEUE_MAX_WORKERS = "queue_max_workers"
"""The origin key of a `workers` maximum the job's queue, or one domain of its required topology level, sets below
what its pool holds; absent where none does."""


@dataclass(frozen=True)
class Origin:
    """Where a chart value came from, said in the values.yaml comment above it: `<source>:<line>: <key>` for a
    profile's own key, else mpigen's words."""

    text: str

    def without_line(self, source: str) -> str:
        """The words with the profile path and key but not the line, for committed chart files: reordering a
        profile's keys changes nothing on the cluster, so it must change no chart file. Diagnostics and `mpigen
        explain`, which are not committed, keep the line."""
        rest = self.text.removeprefix(f"{source}:")
        line, colon, words = rest.partition(": ")
        return f"{source}: {words}" if rest != self.text and colon and line.isdigit() else self.text


@dataclass(frozen=True)
class Job:
    name: str
    """The profile's name: of the chart, the Helm release and the GitOps Application. Not the MPIJob's
    name, which the builder makes from it (`manifests.run_name.mpijob_name`)."""
    naming: Naming
    source: str
    cluster: Cluster
    pool: NodePool
    namespace: str
    image: str
    worker_count: int
    max_workers: int
    gpus_per_worker: int
    slots_per_worker: int
    mpi_implementation: MpiImplementation
    openmpi_version: int | None
    """Major version of the image's OpenMPI (4 or 5; None for Intel MPI and MPICH)."""
    placement: Placement
    program: tuple[str, ...]
    mpirun_args: tuple[str, ...]
    launcher_command: tuple[str, ...] | None
    worker_command: tuple[str, ...] | None
    rails: tuple[RailAttachment, ...]
    env: tuple[EnvVar, ...]
    volumes: tuple[Volume, ...]
    shm_size: str
    resources: Resources
    launcher_resources: Resources
    run_as_user: int | None
    privileged_reason: str | None
    """Why the workers run privileged; None (the default) keeps them unprivileged."""
    ssh_auth_mount_path: str | None
    launcher_creation_policy: str
    run_policy: RunPolicy
    origins: tuple[tuple[str, Origin], ...]
    scheduling: JobScheduling = JobScheduling()
    backend: Backend = Backend.MPIJOB
    workers_per_node: int = 1
    """Workers of this job a node can hold (derive.layout): by GPUs, CPU and memory requests, one under host
    networking or where a CPU worker asks for no CPUs (it is meant to have the node)."""
    openmpi_ucx: bool | None = True
    """The image's OpenMPI has the UCX component (`openMPIUcx`): MPI over UCX on the rails, else over TCP (None for
    Intel MPI and MPICH)."""
    worker_spread: WorkerSpread | None = None
    """`workerSpread`; None: wherever the scheduler puts them (one a node under host networking)."""
    estimated_hours: float | None = None
    """How long a run is expected to take (`estimatedHours`); only `mpigen plan` reads it."""
    image_pull_policy: str | None = None
    """`imagePullPolicy` of both containers; None: Kubernetes' own default (Always for `:latest`, else IfNotPresent)."""
    labels: tuple[tuple[str, str], ...] = ()
    """The profile's `labels`, on the job object and on every pod it makes."""
    annotations: tuple[tuple[str, str], ...] = ()
    """The profile's `annotations`, on the job object and on every pod it makes."""
    object_labels: tuple[tuple[str, str], ...] = ()
    """The profile's `objectLabels`: on the job object only."""
    object_annotations: tuple[tuple[str, str], ...] = ()
    """The profile's `objectAnnotations`: on the job object only."""
    identity: str = ""
    """What the profiles ask the run to do (generator/resolve/identity.py): its name carries a digest of it."""
    ssh_port: int | None = None
    """sshd's port in the workers where it is not 22: the profile's `sshPort`, else the cluster's `network.sshPort`
    on the nodes' network. mpirun's ssh connects to it, and sshd started by mpigen listens on it."""
    ssh_port_stated: bool = False
    """The profile says the port (`sshPort`): a `workerCommand` of its own keeps the readiness probe, on that port."""
    devices: WorkerDevices | None = None
    """What each worker claims through Dynamic Resource Allocation (model/devices.py), on a cluster with `dra`; None:
    its devices come from device plugins."""
    acceptance: Acceptance | None = None
    """What the job proves, where it is one of its cluster's fabric acceptance jobs (model/acceptance.py): compiled
    from the cluster's `acceptance`, not a profile of its own, into `<cluster>/acceptance/<job>`; None for a real job."""
    committed: CommittedRun | None = None
    """The committed run this one continues under the same name (same identity, or a chart compiled before
    identities were recorded that this render adopts); None for a new run, or under `naming: stable`."""

    @property
    def chart_dir(self) -> str:
        """The job's chart folder under the output folder: `<cluster>/jobs/<job>`, `<cluster>/acceptance/<job>`."""
        if self.acceptance is not None:
            return names.chart_dir_of_acceptance(self.cluster.name, self.name)
        return names.chart_dir_of_job(self.cluster.name, self.name)

    @property
    def uses_gpus(self) -> bool:
        return self.gpus_per_worker > 0

    @property
    def runs_as_root(self) -> bool:
        return not self.run_as_user

    @property
    def readiness_port(self) -> int | None:
        """The port of the workers' readiness probe: sshd's, where mpigen starts sshd or the profile says its port;
        None where it knows neither (a `workerCommand` without `sshPort`), or where sshd run as a user other than root
        cannot bind it (below 1024): a probe there would never pass (validate warns)."""
        if self.worker_command is not None and not self.ssh_port_stated:
            return None
        port = self.ssh_port or mpi_operator.SSHD_PORT
        return port if self.runs_as_root or port >= kubernetes.FIRST_UNPRIVILEGED_PORT else None

    def origin(self, key: str) -> str:
        return dict(self.origins)[key].text

    def chart_origin(self, key: str) -> str:
        """`origin` as a chart file says it: without the profile line (`Origin.without_line`)."""
        return dict(self.origins)[key].without_line(self.source)

    @property
    def pods_ready_seconds(self) -> int:
        """The least Kueue `waitForPodsReady.timeout` that lets the job run on a first pull of its image
        (model/pods_ready.py), on its cluster's image pull."""
        return pods_ready_seconds(self.cluster.scheduling.image_pull, self.worker_count,
                                  self.launcher_creation_policy == mpi_operator.WAIT_FOR_WORKERS_READY, self.pool.nodes)

    @property
    def queue_limit(self) -> str | None:
        """Why the job's queue or topology domain admits fewer workers than its pool holds (`max_workers`), if it does."""
        found = dict(self.origins).get(QUEUE_MAX_WORKERS)
        return found.text if found is not None else None
