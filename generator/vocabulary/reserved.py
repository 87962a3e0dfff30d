"""What belongs to Kubernetes and to the controllers around mpigen's jobs, and so never to a profile: the domains of
label and annotation keys they read as instructions, the annotations that change a pod's network, the namespaces
they run in, and the priority classes Kubernetes keeps for itself. Each is listed once, here, with why; validate
refuses them in profiles and `mpigen check` finds them in hand-written charts.

Sources: the upstream projects (Multus' and the network operators' manifests, the KAI scheduler's docs, Kueue's,
Volcano's and Trainer's CRDs and examples), Multus' pkg/k8sclient/k8sclient.go (`defaultNetAnnot`,
`tryLoadK8sPodDefaultNetwork`), the KAI scheduler's podgrouper (`runai/queue`), Calico's and Cilium's IPAM
documentation (Calico's "restrict a pod to use an IP address in a specific range", for firewalls that tell workloads
apart by pool), Kube-OVN's (a pod's fixed IP and MAC, `ovn.kubernetes.io/logical_switch`), Antrea's pkg/ipam
(`AntreaIPAMAnnotationKey` `ipam.antrea.io/ippools`, `AntreaIPAMPodIPAnnotationKey` `ipam.antrea.io/pod-ips`),
Spiderpool's (`ipam.spidernet.io/ippool`), the GPU operator's upgrade controller (`UpgradeSkipDrainLabelSelector`)
and the network operator's drain selector, the Tigera operator's install (`tigera-operator`, `calico-system`), and
kubernetes pkg/apis/scheduling (`SystemPriorityClassPrefix`).
"""

from __future__ import annotations

from mpigen.vocabulary.gitops import ARGOCD_NAMESPACE, FLUX_NAMESPACE
from mpigen.vocabulary.multus import DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION

# --- label and annotation keys ---------------------------------------------------------------------------------

RESERVED_KEY_DOMAINS: dict[str, str] = {
    "kubernetes.io": "Kubernetes reserves it for its core components, which read keys there "
                     "(`kubernetes.io/hostname`, `pod-security.kubernetes.io/enforce`), and the charts select a "
                     "job's objects by `app.kubernetes.io/*`",
    "k8s.io": "Kubernetes reserves it for its core components and SIG projects (`scheduling.k8s.io/group-name` "
              "puts a pod into a Volcano PodGroup)",
    "x-k8s.io": "Kubernetes SIG projects read it as instructions: Kueue admits a job through the queue "
                "`kueue.x-k8s.io/queue-name` names, at the priority `kueue.x-k8s.io/priority-class` names, and "
                "coscheduling gangs pods by `scheduling.x-k8s.io/pod-group`",
    "kubeflow.org": "mpi-operator and Trainer label a job's pods `training.kubeflow.org/*` and "
                    "`trainer.kubeflow.org/*` and select them by it",
    "volcano.sh": "Volcano runs a job in the queue `scheduling.volcano.sh/queue-name` names and selects its pods by "
                  "`volcano.sh/job-name`",
    "helm.sh": "Helm runs an object as a hook by `helm.sh/hook` and keeps it on uninstall by "
               "`helm.sh/resource-policy`",
    "argoproj.io": "Argo CD syncs an object as `argocd.argoproj.io/sync-options`, `sync-wave` and `hook` say, and "
                   "tracks what it owns by `argocd.argoproj.io/instance`",
    "fluxcd.io": "Flux reconciles an object as `kustomize.toolkit.fluxcd.io/reconcile`, `ssa` and `prune` say, and "
                 "tracks what it owns by `helm.toolkit.fluxcd.io/name`",
    "cncf.io": f"Multus attaches a pod to the networks `{NETWORKS_ANNOTATION}` names (mpigen writes it from the "
               "rails), and Whereabouts keeps its address pools under `whereabouts.cni.cncf.io`",
    "multus-cni.io": f"Multus replaces a pod's cluster network with the attachment `{DEFAULT_NETWORK_ANNOTATION}` "
                     "names, which it finds in its own namespace (kube-system) unless the value names another, "
                     "whatever its namespace isolation says",
    "openshift.io": "the SR-IOV network operator marks the networks it renders `sriovnetwork.openshift.io/*` and "
                    "names its devices `openshift.io/*`, and OpenShift runs a pod under the "
                    "SecurityContextConstraints `openshift.io/required-scc` names",
    "nvidia.com": "NVIDIA's GPU operator, device plugin, GPU feature discovery, network operator and DRA driver set "
                  "and read it (`nvidia.com/gpu.deploy.*` and `nvidia.com/mig.config` steer the GPU operator, "
                  "`network.nvidia.com/operator.mofed.wait` the network operator), and on pods: the driver "
                  "upgrades of the GPU and network operators leave a pod labelled "
                  "`nvidia.com/gpu-driver-upgrade-drain.skip=true` (or `nvidia.com/ofed-driver-upgrade-drain.skip`) out "
                  "of the node's drain",
    "kai.scheduler": "the KAI scheduler runs a workload in the queue `kai.scheduler/queue` names, gangs it by "
                     "`kai.scheduler/batch-min-member` and places it by `kai.scheduler/topology*`",
    "runai": "the KAI scheduler runs a workload in the queue `runai/queue` names (the older spelling of "
             "`kai.scheduler/queue`)",
    "projectcalico.org": "Calico gives a pod the addresses `cni.projectcalico.org/ipAddrs` lists (and "
                         "`ipAddrsNoIpam`, past its IPAM), from the pools `cni.projectcalico.org/ipv4pools` lists",
    "cilium.io": "Cilium gives a pod an address from the pool `ipam.cilium.io/ip-pool` names",
    "ovn.kubernetes.io": "Kube-OVN puts a pod on the subnet `ovn.kubernetes.io/logical_switch` names, at the address "
                         "and MAC `ovn.kubernetes.io/ip_address` and `mac_address` give",
    "k8s.ovn.org": "OVN-Kubernetes wires a pod as `k8s.ovn.org/pod-networks` says (its controller writes it) and "
                   "attaches it to the user-defined networks `k8s.ovn.org/*` keys name",
    "antrea.io": "Antrea gives a pod an address from the pools `ipam.antrea.io/ippools` names, or the addresses "
                 "`ipam.antrea.io/pod-ips` lists",
    "spidernet.io": "Spiderpool gives a pod addresses from the pools `ipam.spidernet.io/ippool` and `ippools` name "
                    "(common on RDMA clusters, for the rails' secondary networks)",
    "mpigen": "mpigen writes its own there (`mpigen/privileged-reason`, `mpigen/host-path-reason`), which reviewers "
              "read as mpigen's",
}
"""Domains whose keys Kubernetes, a controller mpigen's objects go to, the cluster's network or mpigen itself set
and read as instructions, with who reads them and what for. A key is in a domain when its prefix (before the
`/`) is the domain or a subdomain of it (`app.kubernetes.io`, `v1.multus-cni.io`)."""


def reserved_key_domain(key: str) -> str | None:
    """The reserved domain a label or annotation key's prefix is, or is a subdomain of (the most specific one);
    None for a key of one's own."""
    prefix = key.rpartition("/")[0]
    found = [domain for domain in RESERVED_KEY_DOMAINS if prefix == domain or prefix.endswith(f".{domain}")]
    return max(found, key=len, default=None)


NETWORK_INSTRUCTIONS: dict[str, str] = {
    DEFAULT_NETWORK_ANNOTATION: "Multus replaces the pod's cluster network (eth0) with that attachment, which it "
                                "finds in its own namespace (kube-system) unless the value names another, whatever "
                                "its namespace isolation says: the pod leaves the cluster network its NetworkPolicies "
                                "and Services are on",
    "cni.projectcalico.org/ipAddrsNoIpam": "Calico gives the pod these addresses past its IPAM: the pod can take "
                                           "another workload's address",
    **{key: f"{cni} gives the pod this fixed address, one that firewalls, NetworkPolicy ipBlocks or DNS may know as "
            "another workload's, taken while that workload is away"
       for cni, key in (("Calico", "cni.projectcalico.org/ipAddrs"), ("Kube-OVN", "ovn.kubernetes.io/ip_address"),
                        ("Antrea", "ipam.antrea.io/pod-ips"))},
    "ovn.kubernetes.io/mac_address": "Kube-OVN gives the pod this fixed MAC address: the pod can answer for another "
                                     "workload's",
    **{key: f"{cni} gives the pod an address from that {what} rather than its namespace's: one that firewalls and "
            "NetworkPolicy ipBlocks let through for the workloads that own it"
       for cni, what, key in (
           ("Calico", "pool", "cni.projectcalico.org/ipv4pools"), ("Calico", "pool", "cni.projectcalico.org/ipv6pools"),
           ("Cilium", "pool", "ipam.cilium.io/ip-pool"),
           ("Kube-OVN", "subnet (logical switch, perhaps another tenant's)", "ovn.kubernetes.io/logical_switch"),
           ("Antrea", "pool", "ipam.antrea.io/ippools"), ("Spiderpool", "pool", "ipam.spidernet.io/ippool"),
           ("Spiderpool", "pool", "ipam.spidernet.io/ippools"))},
}
"""Pod annotations that change a pod's network from outside what its namespace owns, with what they do: a fixed
address (or MAC), or an address pool or subnet other than the one the cluster gives the namespace. `check` refuses
them in hand-written charts (each key is in a reserved domain, so no profile can write one); a job chart attaches its
networks by `k8s.v1.cni.cncf.io/networks` and takes whatever addresses their IPAM gives."""

# --- namespaces ------------------------------------------------------------------------------------------------

SYSTEM_NAMESPACES: dict[str, str] = {
    "kube-system": "it holds the cluster's system pods, which a Pod Security label for jobs would refuse",
    "kube-public": "it is readable by every client, even unauthenticated ones, for what the whole cluster may read",
    "kube-node-lease": "it holds the nodes' heartbeats (a Lease per node)",
}
"""Kubernetes' own namespaces, which every cluster has, with what each is for (Kubernetes' documentation, Namespaces:
"Initial namespaces"). kube-system holds its system pods, Multus, the device plugins, and most CNIs (Calico's
manifests, Cilium, Kube-OVN, Antrea and Spiderpool install there by default)."""
SYSTEM_NAMESPACE_PREFIX = "kube-"
"""The prefix Kubernetes keeps for its system namespaces: its documentation (Namespaces, "Avoid creating namespaces
with the prefix `kube-`, since it is reserved for Kubernetes system namespaces") asks that none be created so, but the
API server does not refuse one, and other projects name theirs so (`kube-flannel`, `kube-ovn`, or a site's
`kube-openmpi`). Only `SYSTEM_NAMESPACES` and the controllers' below hold the cluster's system pods."""
OPENSHIFT_NAMESPACE_PREFIX = "openshift-"
"""OpenShift's own namespaces (`openshift-*`: its operators, its OVN-Kubernetes, `openshift-sriov-network-operator`):
OpenShift keeps the prefix for itself, as Kubernetes keeps `kube-`."""

CONTROLLER_NAMESPACES: dict[str, str] = {
    ARGOCD_NAMESPACE: "Argo CD",
    FLUX_NAMESPACE: "Flux",
    "kueue-system": "Kueue",
    "volcano-system": "Volcano",
    "volcano-monitoring": "Volcano's monitoring",
    "scheduler-plugins": "scheduler-plugins (coscheduling)",
    "kai-scheduler": "the KAI scheduler",
    "kai-resource-reservation": "the KAI scheduler's GPU-sharing reservations",
    "mpi-operator": "mpi-operator",
    "kubeflow": "Kubeflow (mpi-operator and Trainer as Kubeflow installs them)",
    "kubeflow-system": "Kubeflow Trainer",
    "sriov-network-operator": "the SR-IOV network operator",
    "openshift-sriov-network-operator": "the SR-IOV network operator (on OpenShift)",
    "nvidia-network-operator": "NVIDIA's network operator",
    "network-operator": "NVIDIA's network operator (as its older examples install it)",
    "gpu-operator": "NVIDIA's GPU operator",
    "nvidia-gpu-operator": "NVIDIA's GPU operator (on OpenShift)",
    "nvidia-device-plugin": "NVIDIA's device plugin",
    "gpu-feature-discovery": "NVIDIA's GPU feature discovery",
    "nvidia-dra-driver-gpu": "NVIDIA's DRA driver",
    "node-feature-discovery": "node feature discovery (which the GPU and network operators deploy)",
    "tigera-operator": "Calico's operator (Tigera)",
    "calico-system": "Calico (as its operator installs it)",
    "cert-manager": "cert-manager (its issuers' CA keys and the webhooks' certificates)",
    "kube-flannel": "Flannel (the cluster network's CNI)",
    "kube-ovn": "Kube-OVN (the cluster network's CNI, as its early releases install it)",
}
"""The namespaces the controllers around mpigen's jobs run in by default, and who runs there: their Secrets (Git and
registry credentials, webhook certificates, `argocd-secret`) are there, and their pods need what a job
namespace's Pod Security label would refuse. Refused as job namespaces whether or not a cluster profile names the
controller: a cluster runs operators no profile mentions, and another name for a job namespace costs nothing."""


def reserved_namespace_owner(namespace: str) -> str | None:
    """Who `namespace` belongs to ("Kubernetes", "Argo CD", ...), or None for a namespace of one's own."""
    if namespace in SYSTEM_NAMESPACES:
        return "Kubernetes"
    if namespace in CONTROLLER_NAMESPACES:
        return CONTROLLER_NAMESPACES[namespace]
    return "OpenShift" if namespace.startswith(OPENSHIFT_NAMESPACE_PREFIX) else None


# --- priority classes ------------------------------------------------------------------------------------------

SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
SYSTEM_PRIORITY_CLASS_REASON = (
    "Kubernetes keeps priority class names starting with `system-` for its built-in classes (system-cluster-critical "
    "and system-node-critical, which every cluster has and which rank above every workload): the API server refuses "
    "any other PriorityClass so named, and pods of a built-in class run above every workload and preempt it")
"""kubernetes pkg/apis/scheduling: `SystemPriorityClassPrefix`, and ValidatePriorityClass ("priority class names
with 'system-' prefix are reserved for system use only")."""


def is_system_priority_class(name: str) -> bool:
    return name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX)
