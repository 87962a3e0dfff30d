"""generator/vocabulary/reserved.py: what belongs to Kubernetes and the controllers, listed once, against the lists
written out here (so that dropping an entry fails a test) and the profile schemas that name the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO

from mpigen.vocabulary import reserved
from mpigen.vocabulary.multus import DEFAULT_NETWORK_ANNOTATION

# Written out by hand from the upstream sources the module cites.
DOMAINS = ("kubernetes.io", "k8s.io", "x-k8s.io", "kubeflow.org", "volcano.sh", "helm.sh", "argoproj.io", "fluxcd.io",
           "cncf.io", "multus-cni.io", "openshift.io", "nvidia.com", "kai.scheduler", "runai", "projectcalico.org",
           "cilium.io", "ovn.kubernetes.io", "k8s.ovn.org", "antrea.io", "spidernet.io", "mpigen")
NAMESPACES = ("argocd", "flux-system", "kueue-system", "volcano-system", "volcano-monitoring", "scheduler-plugins",
              "kai-scheduler", "kai-resource-reservation", "mpi-operator", "kubeflow", "kubeflow-system",
              "sriov-network-operator", "openshift-sriov-network-operator", "nvidia-network-operator", "network-operator",
              "gpu-operator", "nvidia-gpu-operator", "nvidia-device-plugin", "gpu-feature-discovery",
              "nvidia-dra-driver-gpu", "node-feature-discovery", "tigera-operator", "calico-system", "cert-manager",
              "kube-flannel", "kube-ovn")


def _schema(kind: str) -> dict:
    return json.loads((REPO / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8"))


def test_the_reserved_domains_are_the_ones_written_here_each_with_its_reason():
    assert tuple(reserved.RESERVED_KEY_DOMAINS) == DOMAINS
    for domain, reason in reserved.RESERVED_KEY_DOMAINS.items():
        # The reason names a key of the domain (or the domain itself), as its reader spells it.
        assert re.search(rf"`([-a-z0-9.]+\.)?{re.escape(domain)}[/`]", reason), (domain, reason)
        assert ";" not in reason  # a diagnostic's hint follows the first `; `


@pytest.mark.parametrize(("key", "domain"), [
    ("v1.multus-cni.io/default-network", "multus-cni.io"), ("k8s.v1.cni.cncf.io/networks", "cncf.io"),
    ("kueue.x-k8s.io/queue-name", "x-k8s.io"), ("scheduling.k8s.io/group-name", "k8s.io"),
    ("app.kubernetes.io/name", "kubernetes.io"), ("sriovnetwork.openshift.io/owner-ref", "openshift.io"),
    ("network.nvidia.com/operator.mofed.wait", "nvidia.com"), ("resource.nvidia.com/x", "nvidia.com"),
    ("runai/queue", "runai"), ("kai.scheduler/queue", "kai.scheduler"), ("mpigen/privileged-reason", "mpigen"),
    ("cni.projectcalico.org/ipAddrsNoIpam", "projectcalico.org"), ("ipam.cilium.io/ip-pool", "cilium.io"),
    ("ovn.kubernetes.io/logical_switch", "ovn.kubernetes.io"), ("k8s.ovn.org/pod-networks", "k8s.ovn.org"),
    ("ipam.antrea.io/ippools", "antrea.io"), ("ipam.spidernet.io/ippool", "spidernet.io"),
    # Look-alikes that are domains of their own: not reserved.
    ("team", None), ("example.com/team", None), ("notkubernetes.io/x", None), ("kubernetes.io.example.com/x", None),
    ("nvidia.company/x", None), ("runai.example.com/queue", None), ("my-runai/queue", None), ("k8s.io-x/y", None),
])
def test_a_key_is_in_a_domain_when_its_prefix_is_it_or_a_subdomain_of_it(key, domain):
    assert reserved.reserved_key_domain(key) == domain


def test_the_most_specific_domain_is_the_one_named(monkeypatch):
    """Where a domain and a subdomain of it both have their reason, a key gets the subdomain's."""
    monkeypatch.setitem(reserved.RESERVED_KEY_DOMAINS, "sriovnetwork.openshift.io", "the operator's own")
    assert reserved.reserved_key_domain("sriovnetwork.openshift.io/owner-ref") == "sriovnetwork.openshift.io"
    assert reserved.reserved_key_domain("openshift.io/required-scc") == "openshift.io"


def test_the_job_schema_names_every_reserved_domain_for_labels_and_annotations():
    for field in ("labels", "annotations"):
        description = _schema("job")["properties"][field]["description"]
        assert set(re.findall(r"`([-a-z0-9.]+)`", description)) >= set(DOMAINS), field


def test_every_network_instruction_is_in_a_reserved_domain():
    """So no profile can write one, and `check` refusing them never refuses a chart mpigen compiled."""
    assert DEFAULT_NETWORK_ANNOTATION == "v1.multus-cni.io/default-network"
    assert set(reserved.NETWORK_INSTRUCTIONS) == {
        DEFAULT_NETWORK_ANNOTATION, "cni.projectcalico.org/ipAddrsNoIpam", "cni.projectcalico.org/ipAddrs",
        "cni.projectcalico.org/ipv4pools", "cni.projectcalico.org/ipv6pools", "ipam.cilium.io/ip-pool",
        "ovn.kubernetes.io/logical_switch", "ovn.kubernetes.io/ip_address", "ovn.kubernetes.io/mac_address",
        "ipam.antrea.io/ippools", "ipam.antrea.io/pod-ips", "ipam.spidernet.io/ippool", "ipam.spidernet.io/ippools"}
    assert all(reserved.reserved_key_domain(key) for key in reserved.NETWORK_INSTRUCTIONS)


def test_the_controller_namespaces_are_the_ones_written_here_and_in_the_cluster_schema():
    assert tuple(reserved.CONTROLLER_NAMESPACES) == NAMESPACES
    description = _schema("cluster")["properties"]["namespaces"]["description"]
    assert set(NAMESPACES) <= set(re.findall(r"`([-a-z0-9]+)`", description))


def test_upstream_installs_use_the_namespaces_listed(upstream: Path):
    """The namespaces the upstream manifests and docs at hand install into are listed."""
    seen = {"sriov-network-operator": "network/sriov-network-operator/examples/doc__pool-config-api.yaml",
            "nvidia-network-operator": "network/network-operator/example__crs__nvidia.com_v1alpha1_nv_ipam_ippool_cr.yaml",
            "network-operator": "network/network-operator/example__sriov-network__sriov-network.yaml",
            "nvidia-dra-driver-gpu": "dra/dranet/user_nvidia-dranet.md",
            "kueue-system": "scheduling/kueue/docs_setup_dra.md",
            "gpu-feature-discovery": "inventory/gpu-feature-discovery_README.md"}
    for namespace, path in seen.items():
        assert namespace in (upstream / path).read_text(encoding="utf-8"), (namespace, path)
        assert reserved.reserved_namespace_owner(namespace) is not None


@pytest.mark.parametrize(("namespace", "owner"), [
    ("kube-system", "Kubernetes"), ("kube-node-lease", "Kubernetes"), ("argocd", "Argo CD"),
    ("gpu-operator", "NVIDIA's GPU operator"), ("default", None), ("ml-training", None), ("argocd-jobs", None),
    ("openshift-ovn-kubernetes", "OpenShift"), ("openshift-monitoring", "OpenShift"),
    ("openshift-sriov-network-operator", "the SR-IOV network operator (on OpenShift)"), ("openshift", None),
    ("my-openshift-jobs", None), ("calico-system", "Calico (as its operator installs it)"),
    ("tigera-operator", "Calico's operator (Tigera)"), ("kube-public", "Kubernetes"),
    ("kube-ovn", "Kube-OVN (the cluster network's CNI, as its early releases install it)"), ("kube-openmpi", None),
    ("kube-flannel", "Flannel (the cluster network's CNI)"),
    ("cert-manager", "cert-manager (its issuers' CA keys and the webhooks' certificates)"),
])
def test_who_a_namespace_belongs_to(namespace, owner):
    assert reserved.reserved_namespace_owner(namespace) == owner


@pytest.mark.parametrize(("name", "reserved_name"), [
    ("system-node-critical", True), ("system-cluster-critical", True), ("system-x", True), ("systems", False),
    ("high-system-", False), ("critical", False)])
def test_system_priority_classes(name, reserved_name):
    assert reserved.is_system_priority_class(name) is reserved_name


def test_the_cluster_schema_refuses_only_kubernetes_own_kube_namespaces_as_existing():
    """Issue 32 point 10: `existingNamespaces: [kube-openmpi]` is accepted, so its description may not say that
    every `kube-*` namespace is refused; it names Kubernetes' own."""
    description = _schema("cluster")["properties"]["existingNamespaces"]["description"]
    assert "`kube-*` and the controllers' namespaces are never accepted" not in description
    assert set(reserved.SYSTEM_NAMESPACES) <= set(re.findall(r"`([-a-z0-9]+)`", description))
