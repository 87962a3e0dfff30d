"""Network objects and pieces the providers share: namespaces, NADs, whereabouts IPAM, link types."""

from __future__ import annotations

import json
from typing import Any

from mpigen.model import Cluster, InfinibandGuids, LinkType, Rail, stated
from mpigen.objects.labels import ChartRef, metadata
from mpigen.vocabulary import helm
from mpigen.vocabulary.gitops import ARGOCD_SYNC_OPTIONS, KEEP_IN_ARGOCD, SKIP_DRY_RUN_ON_MISSING_RESOURCE
from mpigen.vocabulary.multus import NAD_API_VERSION, NAD_KIND, RESOURCE_NAME_ANNOTATION
from mpigen.vocabulary.podsecurity import ENFORCE_LABEL, ENFORCE_VERSION_LABEL, POD_SECURITY_REASON, PodSecurity

LINK_TYPE_SELECTOR = {LinkType.INFINIBAND: "infiniband", LinkType.ETHERNET: "ether"}
# ib-sriov-cni's capability for a GUID per pod (its README, "Supported Capabilities"); also SriovIBNetwork's.
INFINIBAND_GUID_CAPABILITY = {"infinibandGUID": True}


def rail_link_type(cluster: Cluster, rail: Rail) -> LinkType:
    """A rail's link type; validation guarantees every pool carrying it agrees on the NIC's."""
    return stated(cluster.rail_nics(rail)[0][1].link_type)


def vf_vlan(rail: Rail) -> dict[str, int]:
    """The rail's VLAN id and 802.1p priority for its VFs, under the names both sriov-cni's config and the
    operator's SriovNetwork give them (`vlan`, `vlanQoS`); empty where the rail is untagged."""
    if rail.vlan is None:
        return {}
    return {"vlan": rail.vlan, **({"vlanQoS": rail.vlan_qos} if rail.vlan_qos is not None else {})}


def infiniband_rails(cluster: Cluster) -> tuple[Rail, ...]:
    return tuple(rail for rail in cluster.rails if rail_link_type(cluster, rail) is LinkType.INFINIBAND)


def guid_from_ib_kubernetes(cluster: Cluster, rail: Rail) -> bool:
    """Whether the rail's VFs get their GUID per pod from ib-kubernetes: its CNI config must then declare the
    `infinibandGUID` capability, or Multus does not pass the GUID on (CNI's capabilities convention)."""
    return (cluster.network.infiniband_guids is InfinibandGuids.IB_KUBERNETES
            and rail_link_type(cluster, rail) is LinkType.INFINIBAND)


def guid_note(cluster: Cluster, from_node: str) -> str:
    """NOTES' words on where the InfiniBand VFs' GUIDs come from ('' without InfiniBand rails): `from_node` says how
    the provider's nodes give them, where ib-kubernetes does not."""
    if not infiniband_rails(cluster):
        return ""
    if cluster.network.infiniband_guids is InfinibandGuids.NODE:
        return " " + from_node
    return (" InfiniBand VFs get their GUIDs from ib-kubernetes, which must run with its subnet manager plugin (UFM): "
            "it allocates one per pod and Multus hands it to the CNI (capability infinibandGUID).")


def whereabouts(rail: Rail) -> dict[str, Any]:
    """Cluster-wide addresses of a rail (host-local would hand the same address out on every node)."""
    assert rail.ipam is not None, "validation requires ipam of every rail a Multus provider attaches"
    ipam: dict[str, Any] = {"type": "whereabouts", "range": rail.ipam.range}
    if rail.ipam.exclude:
        ipam["exclude"] = list(rail.ipam.exclude)
    return ipam


def build_network_attachment(cluster: Cluster, name: str, namespace: str, config: dict[str, Any], chart: ChartRef,
                             resource: str | None = None) -> dict[str, Any]:
    """A NetworkAttachmentDefinition holding `config`; `resource` ties it to a device-plugin resource."""
    annotations = {RESOURCE_NAME_ANNOTATION: resource} if resource else {}
    annotations[ARGOCD_SYNC_OPTIONS] = SKIP_DRY_RUN_ON_MISSING_RESOURCE
    return {
        "apiVersion": NAD_API_VERSION,
        "kind": NAD_KIND,
        "metadata": metadata(name, chart, namespace, annotations=annotations),
        "spec": {"config": json.dumps({"cniVersion": cluster.network.cni_version, "name": name, **config},
                                      indent=2) + "\n"},
    }


def union(values: list[str]) -> list[str]:
    return sorted(set(values))


def build_namespace(namespace: str, chart: ChartRef, security: PodSecurity,
                    kubernetes_version: str) -> dict[str, Any]:
    """A job namespace. Helm keeps it when the infra chart is uninstalled, and Argo CD never prunes or
    deletes it: deleting a namespace would delete the PVCs and running jobs in it.

    Pod Security admission enforces the least level its jobs need, under the rules of the cluster's own
    Kubernetes version (pinned, so a cluster upgrade cannot tighten them under running jobs).
    """
    annotations = {helm.RESOURCE_POLICY: helm.KEEP, ARGOCD_SYNC_OPTIONS: KEEP_IN_ARGOCD}
    if security.reasons:
        annotations[POD_SECURITY_REASON] = "; ".join(security.reasons)
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace",
                           "metadata": metadata(namespace, chart, annotations=annotations)}
    obj["metadata"]["labels"] = {**obj["metadata"]["labels"], ENFORCE_LABEL: security.level.label,
                                 ENFORCE_VERSION_LABEL: f"v{kubernetes_version}"}
    return obj
