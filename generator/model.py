"""The resolved fleet: typed, frozen, with every default and derived value filled in.

Builders read only this; they never look at profile dictionaries or apply defaults themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from generator.names import rail_interface


class LinkType(str, Enum):
    INFINIBAND = "InfiniBand"
    ETHERNET = "Ethernet"


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
    OPENMPI = "OpenMPI"
    INTEL = "Intel"
    MPICH = "MPICH"


class PciDistance(str, Enum):
    """How far apart two PCIe devices are, in `nvidia-smi topo -m`'s words and NCCL's, nearest first."""

    PIX = "PIX"  # at most one PCIe switch between them
    PXB = "PXB"  # several PCIe switches, no host bridge
    PHB = "PHB"  # through the CPU's PCIe host bridge
    NODE = "NODE"  # across host bridges within one NUMA node
    SYS = "SYS"  # across the CPU interconnect (another socket)


@dataclass(frozen=True)
class Gpu:
    count: int
    model: str
    memory_gib: int | None
    resource: str
    nic_distance: PciDistance | None = None
    """Distance from each GPU to the RDMA NIC nearest it, where the profile states it."""


@dataclass(frozen=True)
class Nic:
    name: str
    hca: str | None
    port: int
    pf_name: str | None
    vendor_id: str | None
    device_id: str | None
    vf_device_id: str | None
    driver: str
    link_type: LinkType | None
    speed_gbps: int | None
    numa_node: int | None
    gpus: tuple[int, ...]


@dataclass(frozen=True)
class Cpu:
    model: str
    sockets: int
    cores_per_socket: int | None
    threads_per_core: int


@dataclass(frozen=True)
class Hardware:
    name: str
    description: str
    gpu: Gpu | None
    nics: tuple[Nic, ...]
    cpu: Cpu
    memory_gib: int
    node_labels: tuple[tuple[str, str], ...]

    def nic(self, name: str) -> Nic | None:
        return next((nic for nic in self.nics if nic.name == name), None)


@dataclass(frozen=True)
class Ipam:
    range: str
    exclude: tuple[str, ...]


@dataclass(frozen=True)
class Rail:
    name: str
    nic_name: str
    resource_name: str
    resource: str
    ipam: Ipam | None
    host_interface: str | None = None
    """The node's interface of the rail, where the profile names one (else the NIC's PF name is used)."""
    vlan: int | None = None
    """Ethernet (RoCE) rails under SR-IOV: the 802.1Q VLAN id set on each VF, where the profile gives one."""
    vlan_qos: int | None = None
    """With `vlan`: the 802.1p priority (0-7) of the VF's tagged frames, where the profile gives one."""

    @property
    def tagging(self) -> str:
        """The rail's VLAN and priority in words ('' where untagged), for NOTES and explain."""
        if self.vlan is None:
            return ""
        return f"VLAN {self.vlan}" + (f" (802.1p priority {self.vlan_qos})" if self.vlan_qos is not None else "")


@dataclass(frozen=True)
class Taint:
    """A taint every node of a pool carries (Kubernetes' Taint): pods that do not tolerate it are kept off."""

    key: str
    effect: str
    """NoSchedule, PreferNoSchedule or NoExecute."""
    value: str | None = None


@dataclass(frozen=True)
class NodePool:
    name: str
    hardware: Hardware
    nodes: int
    node_labels: tuple[tuple[str, str], ...]
    offer: tuple[tuple[str, int, str], ...] = ()
    """What one node offers pods, as `admission.node_offer` counts it: (resource, amount, unit '' or 'Gi') for its
    CPUs (where the hardware says its cores), memory, GPUs and each rail's devices; the unit of every quota."""
    taints: tuple[Taint, ...] = ()
    """The taints of the pool's nodes (`taints`): the pods placed there get the tolerations that match them."""

    @property
    def node_selector(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(dict(self.hardware.node_labels + self.node_labels).items()))


class Backend(str, Enum):
    """The controller that runs a job: mpi-operator's MPIJob, Volcano's own Job (`batch.volcano.sh`), or Kubeflow
    Trainer v2's TrainJob on a TrainingRuntime whose `mlPolicy.mpi` makes the launcher, hostfile and ssh keys."""

    MPIJOB = "mpijob"
    VOLCANO_JOB = "volcano-job"
    TRAINJOB = "trainjob"

    @property
    def noun(self) -> str:
        """What the job's object is called."""
        return _BACKEND_NOUNS[self]

    @property
    def controller(self) -> str:
        """Who runs, and may reject, the job's object."""
        return _BACKEND_CONTROLLERS[self]

    @property
    def sets_openmpi_hostfile_variables(self) -> bool:
        """The controller gives the launcher OpenMPI 4's ORTE variables (hostfile, FQDN names, slots, ssh retries):
        mpi-operator for an MPIJob, Trainer's MPI plugin for a TrainJob; nobody for a Volcano Job."""
        return self is not Backend.VOLCANO_JOB


_BACKEND_NOUNS = {Backend.MPIJOB: "MPIJob", Backend.VOLCANO_JOB: "Volcano Job", Backend.TRAINJOB: "TrainJob"}
_BACKEND_CONTROLLERS = {Backend.MPIJOB: "mpi-operator", Backend.VOLCANO_JOB: "Volcano",
                        Backend.TRAINJOB: "Kubeflow Trainer"}


class NetworkProvider(str, Enum):
    """How rails reach pods; each is described, beside its builders, by its module in generator/manifests/providers/
    (the registry `PROVIDERS` there)."""

    SRIOV_DEVICE_PLUGIN = "sriov-device-plugin"
    SRIOV_NETWORK_OPERATOR = "sriov-network-operator"
    RDMA_SHARED = "rdma-shared"
    HOST_NETWORK = "host-network"
    TCP = "tcp"


class InfinibandGuids(str, Enum):
    """Who gives InfiniBand VFs the GUIDs the subnet manager knows (the cluster profile's `network.infinibandGuids`)."""

    NODE = "node"
    """The node: the VFs keep the GUIDs they are given there (by the administrator, or the operator's config daemon)."""
    IB_KUBERNETES = "ib-kubernetes"
    """Mellanox ib-kubernetes allocates one per pod and hands it to the CNI through Multus' runtimeConfig."""


@dataclass(frozen=True)
class Network:
    provider: NetworkProvider
    resource_prefix: str
    device_plugin_namespace: str
    cni_version: str
    operator_namespace: str
    num_vfs: int | None
    ssh_port: int
    infiniband_guids: InfinibandGuids = InfinibandGuids.NODE


class GitOpsTool(str, Enum):
    ARGOCD = "argocd"
    FLUX = "flux"


@dataclass(frozen=True)
class GitOps:
    """How a GitOps tool pulls this cluster's charts from git (the cluster profile's `gitops` block)."""

    tool: GitOpsTool
    repo_url: str
    revision: str
    path: str
    """Repository path of the charts folder, without leading or trailing `/` (`charts`)."""
    destination: str
    """Argo CD: API server URL of the cluster the charts are synced to."""
    project: str
    """Argo CD: the AppProject of every Application."""
    namespace: str
    """Where the Argo CD Applications, or the Flux GitRepository, Kustomization and HelmReleases, live."""


class Scheduler(str, Enum):
    """How a cluster admits multi-node jobs (the cluster profile's `scheduling.scheduler`)."""

    NONE = "none"
    VOLCANO = "volcano"
    COSCHEDULING = "coscheduling"
    KUEUE = "kueue"

    @property
    def gangs_through_operator(self) -> bool:
        """mpi-operator creates a PodGroup per MPIJob (`--gang-scheduling`) from `runPolicy.schedulingPolicy`."""
        return self in (Scheduler.VOLCANO, Scheduler.COSCHEDULING)


@dataclass(frozen=True)
class Quota:
    """One resource of a queue's share of one pool, in whole units of `unit` ('' or 'Gi')."""

    resource: str
    count: int
    reach: int
    """The most of it the queue can ever use on the pool: its own, plus what the other queues of its cohort hold
    there, within its borrowing limit (Kueue; admission.ClusterQueues.borrowable_nodes)."""
    unit: str = ""
    borrowing_limit: int | None = None

    @property
    def nominal(self) -> int | str:
        return quantity_text(self.count, self.unit)

    @property
    def borrowing(self) -> int | str | None:
        return None if self.borrowing_limit is None else quantity_text(self.borrowing_limit, self.unit)


def quantity_text(count: int, unit: str) -> int | str:
    """A quota as Kubernetes writes it: a plain count, or `<n>Gi`."""
    return f"{count}{unit}" if unit else count


@dataclass(frozen=True)
class QueueShare:
    """A queue's share of one node pool: how many of its nodes, and the quota of every resource that gives."""

    pool: NodePool
    nodes: int
    borrow_nodes: int | None
    quotas: tuple[Quota, ...]


@dataclass(frozen=True)
class Queue:
    """A Volcano Queue, or a Kueue ClusterQueue with a LocalQueue of the same name in each namespace it serves."""

    name: str
    namespaces: tuple[str, ...]
    shares: tuple[QueueShare, ...]
    cohort: str | None = None
    weight: int | None = None

    def capability(self) -> dict[str, tuple[int, str]]:
        """A Volcano queue's capability: its share of every pool, summed per resource, as (count, unit)."""
        totals: dict[str, tuple[int, str]] = {}
        for share in self.shares:
            for quota in share.quotas:
                totals[quota.resource] = (totals.get(quota.resource, (0, quota.unit))[0] + quota.count, quota.unit)
        return totals


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    description: str | None = None


@dataclass(frozen=True)
class TopologyLevel:
    name: str
    node_label: str


@dataclass(frozen=True)
class Scheduling:
    scheduler: Scheduler = Scheduler.NONE
    scheduler_name: str | None = None
    """coscheduling: the scheduler-plugins scheduler's name (mpi-operator's `--gang-scheduling` value)."""
    schedule_timeout_seconds: int | None = None
    priority_classes: tuple[PriorityClass, ...] = ()
    topology: tuple[TopologyLevel, ...] = ()
    queues: tuple[Queue, ...] = ()


@dataclass(frozen=True)
class Cluster:
    name: str
    source: str
    kubernetes_version: str
    namespaces: tuple[str, ...]
    network: Network
    pools: tuple[NodePool, ...]
    rails: tuple[Rail, ...]
    gitops: GitOps | None = None
    cpu_manager_policy: str | None = None
    """The kubelets' CPU manager policy, where the profile says it: `static` confines a Guaranteed pod to the
    cores it was given."""
    pod_security: tuple[tuple[str, str], ...] = ()
    """(namespace, least Pod Security level) the profile asks for beyond what the jobs need."""
    scheduling: Scheduling = Scheduling()
    job_backend: Backend = Backend.MPIJOB
    """The backend of its jobs that choose none (`jobBackend`)."""
    existing_namespaces: tuple[str, ...] = ()
    """Namespaces of `namespaces` created outside mpigen: the infra chart does not create (own) them."""
    launcher_pool: str | None = None
    """The pool every launcher of the cluster runs on (`launcherPool`); None: wherever the scheduler puts it."""

    def pool(self, name: str) -> NodePool:
        return next(pool for pool in self.pools if pool.name == name)

    def rails_of(self, pool: NodePool) -> tuple[Rail, ...]:
        """Rails a pool carries: those whose NIC its hardware has (derive.pool_rails on profile data)."""
        return tuple(rail for rail in self.rails if pool.hardware.nic(rail.nic_name))

    def rail_nics(self, rail: Rail) -> tuple[tuple[NodePool, Nic], ...]:
        """Every (pool, NIC) a rail runs over: pools of different hardware may each carry it."""
        return tuple((pool, nic) for pool in self.pools if (nic := pool.hardware.nic(rail.nic_name)))


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
    committed: CommittedRun | None = None
    """The committed run this one continues under the same name (same identity, or a chart compiled before
    identities were recorded that this render adopts); None for a new run, or under `naming: stable`."""

    @property
    def uses_gpus(self) -> bool:
        return self.gpus_per_worker > 0

    @property
    def runs_as_root(self) -> bool:
        return not self.run_as_user

    def origin(self, key: str) -> str:
        return dict(self.origins)[key].text

    def chart_origin(self, key: str) -> str:
        """`origin` as a chart file says it: without the profile line (`Origin.without_line`)."""
        return dict(self.origins)[key].without_line(self.source)


@dataclass(frozen=True)
class Fleet:
    hardware: tuple[Hardware, ...]
    clusters: tuple[Cluster, ...]
    jobs: tuple[Job, ...]

    def jobs_of(self, cluster: Cluster) -> tuple[Job, ...]:
        return tuple(job for job in self.jobs if job.cluster.name == cluster.name)
