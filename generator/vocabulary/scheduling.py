"""The gang schedulers' and Kueue's APIs: kinds, API versions, labels and annotations mpigen writes or reads.

Sources: tests/upstream/scheduling/ (Volcano's Queue and PodGroup CRDs, scheduler-plugins' PodGroup),
tests/upstream/scheduling/kueue/ (Kueue's CRDs, served as v1beta1 and v1beta2, stored as v1beta2), Kueue's
MPIJob and topology-aware examples and mpi-operator's `--gang-scheduling` (pkg/controller/podgroup.go).
"""

from __future__ import annotations

from mpigen.vocabulary import kueue_releases, mpi_operator

# --- Kueue ---------------------------------------------------------------------------------------
KUEUE_GROUP = kueue_releases.KUEUE_GROUP
RESOURCE_FLAVOR = "ResourceFlavor"
CLUSTER_QUEUE = "ClusterQueue"
LOCAL_QUEUE = "LocalQueue"
WORKLOAD_PRIORITY_CLASS = "WorkloadPriorityClass"
TOPOLOGY = "Topology"

QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
"""On a job: the LocalQueue (in the job's namespace) Kueue admits it through."""
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
"""On a job: its WorkloadPriorityClass."""
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
"""On a pod template: the node label of the topology level all pods of the pod set must (should) share."""
SLICE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
"""On a pod template: the pod set is cut into slices of `SLICE_SIZE` pods, each placed within one domain of the
level whose node label `SLICE_REQUIRED_TOPOLOGY` names (Kueue apis/kueue/v1beta2/topology_types.go). Kueue refuses
the size without the level and the level without the size, a size above the pod count, a slice level above the
pod set's level, and `podset-group-name` beside either (pkg/controller/jobframework/tas_validation.go,
pkg/cache/scheduler/tas_flavor_snapshot.go)."""
PODSET_GROUP_NAME = "kueue.x-k8s.io/podset-group-name"
"""On two pod templates of one job (an MPIJob's launcher and workers): Kueue places both pod sets together, within one
domain of the topology level they both request (apis/kueue/v1beta2/topology_types.go `PodSetGroupName`)."""
HOSTNAME_LABEL = "kubernetes.io/hostname"
"""The only node label Kueue accepts as a Topology's lowest level and nowhere else."""
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
"""The cloud provider's machine type of a node (`p4d.24xlarge`); well-known, set by the kubelet or cloud provider."""
ZONE_LABEL = "topology.kubernetes.io/zone"
"""The failure zone a node is in: a place, not a kind of node."""
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Every namespace carries its own name under this label (a ClusterQueue's namespaceSelector matches it)."""

# --- Volcano -------------------------------------------------------------------------------------
VOLCANO_API_VERSION = "scheduling.volcano.sh/v1beta1"
VOLCANO_QUEUE = "Queue"
VOLCANO_OWN_QUEUES = ("default", "root")
"""Queues Volcano creates itself: jobs may name them, a chart must not."""

# --- built-in ------------------------------------------------------------------------------------
PRIORITY_CLASS_API_VERSION = "scheduling.k8s.io/v1"
PRIORITY_CLASS = "PriorityClass"

# --- what Kueue writes into a job it manages -----------------------------------------------------
# Kueue creates a job suspended and unsuspends it on admission (suspends it again on preemption), and on
# admission injects the admitting flavor's node labels and tolerations, and under topology-aware scheduling
# a scheduling gate, into the pod templates. A GitOps tool must leave these fields to Kueue.
KUEUE_OWNED_POINTERS = ("/" + "/".join(mpi_operator.SUSPEND_PATH),)
KUEUE_OWNED_TEMPLATE_FIELDS = ("nodeSelector", "tolerations", "schedulingGates")
