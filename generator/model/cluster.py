"""A cluster: its node pools and rails, the network provider, the scheduler and its queues, GitOps delivery."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from mpigen.model.hardware import Hardware, Nic
from mpigen.model.pods_ready import ImagePull
from mpigen.vocabulary import dra
from mpigen.vocabulary.kai import UNLIMITED
from mpigen.vocabulary.kueue_releases import NEWEST, KueueRelease


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
    CPUs (where the hardware says its cores), memory, GPUs and each rail's devices (under DRA: the devices pods claim,
    `claimed`); the unit of every quota."""
    taints: tuple[Taint, ...] = ()
    """The taints of the pool's nodes (`taints`): the pods placed there get the tolerations that match them."""
    claimed: tuple[str, ...] = ()
    """The resources of `offer` pods claim through DRA rather than request (model/claimed.py): Kueue counts them by
    its deviceClassMappings, Volcano's queues do not count them."""

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
    """How rails reach pods; each is described, beside its builders, by its module in generator/providers/
    (the registry `PROVIDERS` there)."""

    SRIOV_DEVICE_PLUGIN = "sriov-device-plugin"
    SRIOV_NETWORK_OPERATOR = "sriov-network-operator"
    RDMA_SHARED = "rdma-shared"
    HOST_NETWORK = "host-network"
    TCP = "tcp"
    DRANET = "dranet"


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


@dataclass(frozen=True)
class Dra:
    """The cluster allocates devices through Dynamic Resource Allocation (the cluster profile's `dra`): GPUs from
    `gpu_class`, and under the `dranet` provider RDMA NICs from `nic_class`, in one claim per worker."""

    gpu_class: str = dra.GPU_DEVICE_CLASS
    nic_class: str = dra.NIC_DEVICE_CLASS
    compute_domains: bool = True
    """Jobs on multi-node NVLink hardware join a ComputeDomain and claim its IMEX channel."""


class GitOpsTool(str, Enum):
    ARGOCD = "argocd"
    FLUX = "flux"


class GitOpsApplications(str, Enum):
    """How Argo CD gets one Application per chart (the cluster profile's `gitops.applications`)."""

    APP_OF_APPS = "app-of-apps"
    APPLICATIONSET = "applicationset"


@dataclass(frozen=True)
class SourceRef:
    """An existing Flux source the charts are taken from (`gitops.sourceRef`), such as `flux bootstrap`'s."""

    kind: str
    name: str
    namespace: str


@dataclass(frozen=True)
class GitOps:
    """How a GitOps tool pulls this cluster's charts from git (the cluster profile's `gitops` block)."""

    tool: GitOpsTool
    repo_url: str | None
    """None only for Flux with `source_ref`: that GitRepository names the repository."""
    revision: str
    path: str
    """Repository path of the charts folder, without leading or trailing `/` (`charts`)."""
    destination: str
    """Argo CD: API server URL of the cluster the charts are synced to."""
    project: str
    """Argo CD: the AppProject of every Application."""
    namespace: str
    """Where the Argo CD Applications, or the Flux GitRepository, Kustomization and HelmReleases, live."""
    source_ref: SourceRef | None = None
    """Flux: the GitRepository mpigen's Kustomization and HelmReleases read, instead of one it writes."""
    secret_ref: str | None = None
    """Flux: the Secret of the repository's credentials, for the GitRepository mpigen writes."""
    applications: GitOpsApplications = GitOpsApplications.APP_OF_APPS
    """Argo CD: an Application per chart, or one ApplicationSet that makes them."""
    values_path: str | None = None
    """Repository path of a folder of per-environment values files, `<release>.yaml` per chart, read where present."""


class Scheduler(str, Enum):
    """How a cluster admits multi-node jobs (the cluster profile's `scheduling.scheduler`)."""

    NONE = "none"
    VOLCANO = "volcano"
    COSCHEDULING = "coscheduling"
    KUEUE = "kueue"
    KAI = "kai"

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
class KaiResource:
    """One resource of a KAI Queue: its `quota` and `limit` (-1: none) in KAI's units."""

    resource: str
    quota: int
    limit: int

    @property
    def limited(self) -> bool:
        return self.limit != UNLIMITED


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
    priority: int | None = None
    """kai: the Queue's `spec.priority`; None: KAI's default."""
    kai: tuple[KaiResource, ...] = ()
    """kai: the Queue's cpu, memory and gpu `quota` and `limit`, in KAI's units (model/kai_quota.py)."""

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
    domain_nodes: int | None = None
    """Nodes one domain of the level holds, where the profile says (`domainNodes`); model/domains.py reads it."""


@dataclass(frozen=True)
class Scheduling:
    scheduler: Scheduler = Scheduler.NONE
    scheduler_name: str | None = None
    """coscheduling: the scheduler-plugins scheduler's name (mpi-operator's `--gang-scheduling` value); kai: the
    `schedulerName` of the pods KAI schedules."""
    schedule_timeout_seconds: int | None = None
    priority_classes: tuple[PriorityClass, ...] = ()
    topology: tuple[TopologyLevel, ...] = ()
    queues: tuple[Queue, ...] = ()
    pods_ready_timeout: int | None = None
    """kueue: the seconds of `waitForPodsReady.timeout` its Kueue runs with, where the profile says them."""
    image_pull: ImagePull = field(default_factory=ImagePull)
    """kueue: how its nodes get a job's image, for the least timeout that lets its jobs run (`pods_ready`)."""
    kueue_release: KueueRelease = NEWEST
    """kueue: the release the cluster runs (`kueueVersion`): the API versions its infra chart is written in, and
    which of Kueue's features its jobs may use (vocabulary/kueue_releases.py)."""


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
    dra: Dra | None = None
    """How the cluster allocates devices through DRA (`dra`); None: through device plugins only."""

    def pool(self, name: str) -> NodePool:
        return next(pool for pool in self.pools if pool.name == name)

    def rails_of(self, pool: NodePool) -> tuple[Rail, ...]:
        """Rails a pool carries: those whose NIC its hardware has (derive.pool_rails on profile data)."""
        return tuple(rail for rail in self.rails if pool.hardware.nic(rail.nic_name))

    def rail_nics(self, rail: Rail) -> tuple[tuple[NodePool, Nic], ...]:
        """Every (pool, NIC) a rail runs over: pools of different hardware may each carry it."""
        return tuple((pool, nic) for pool in self.pools if (nic := pool.hardware.nic(rail.nic_name)))
