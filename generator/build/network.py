"""Per-cluster network objects: rail NetworkAttachmentDefinitions and the SR-IOV device plugin config."""

from __future__ import annotations

import json
from typing import Any

from generator import names
from generator.build.labels import (
    ARGOCD_SYNC_OPTIONS,
    KEEP_IN_ARGOCD,
    SKIP_DRY_RUN_ON_MISSING_RESOURCE,
    ChartRef,
    metadata,
)
from generator.model import Cluster, LinkType, Rail

RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
LINK_TYPE_SELECTOR = {LinkType.INFINIBAND: "infiniband", LinkType.ETHERNET: "ether"}


def rail_link_type(cluster: Cluster, rail: Rail) -> LinkType:
    """A rail's link type; validation guarantees every pool carrying it agrees on the NIC's."""
    return cluster.rail_nics(rail)[0][1].link_type


def cni_config(cluster: Cluster, rail: Rail) -> dict[str, Any]:
    """`sriov` (`ib-sriov` for InfiniBand VFs) chained with `rdma`, addresses from whereabouts."""
    ipam: dict[str, Any] = {"type": "whereabouts", "range": rail.ipam.range}
    if rail.ipam.exclude:
        ipam["exclude"] = list(rail.ipam.exclude)
    main = "ib-sriov" if rail_link_type(cluster, rail) is LinkType.INFINIBAND else "sriov"
    return {
        "cniVersion": cluster.network.cni_version,
        "name": names.nad_name(rail.name),
        "plugins": [{"type": main, "ipam": ipam}, {"type": "rdma"}],
    }


def build_network_attachment(cluster: Cluster, rail: Rail, namespace: str, chart: ChartRef) -> dict[str, Any]:
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": metadata(names.nad_name(rail.name), chart, namespace,
                             annotations={RESOURCE_ANNOTATION: rail.resource,
                                          ARGOCD_SYNC_OPTIONS: SKIP_DRY_RUN_ON_MISSING_RESOURCE}),
        "spec": {"config": json.dumps(cni_config(cluster, rail), indent=2) + "\n"},
    }


def _union(values: list[str]) -> list[str]:
    return sorted(set(values))


def device_plugin_resource(cluster: Cluster, rail: Rail) -> dict[str, Any]:
    """One resource per rail: VFs of that PF only, so each pod gets one VF of every NIC."""
    nics = [nic for _, nic in cluster.rail_nics(rail)]
    return {
        "resourceName": rail.resource_name,
        "resourcePrefix": cluster.network.resource_prefix,
        "selectors": {
            "vendors": _union([n.vendor_id for n in nics]),
            "devices": _union([n.vf_device_id for n in nics]),
            "drivers": _union([n.driver for n in nics]),
            "pfNames": _union([n.pf_name for n in nics]),
            "linkTypes": _union([LINK_TYPE_SELECTOR[n.link_type] for n in nics]),
            "isRdma": True,
        },
    }


def build_device_plugin_configmap(cluster: Cluster, chart: ChartRef) -> dict[str, Any]:
    config = {"resourceList": [device_plugin_resource(cluster, rail) for rail in cluster.rails]}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(names.DEVICE_PLUGIN_CONFIGMAP, chart, cluster.network.device_plugin_namespace),
        "data": {"config.json": json.dumps(config, indent=2) + "\n"},
    }


def build_namespace(namespace: str, chart: ChartRef) -> dict[str, Any]:
    """A job namespace. Helm keeps it when the infra chart is uninstalled, and Argo CD never prunes or
    deletes it: deleting a namespace would delete the PVCs and running jobs in it."""
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": metadata(namespace, chart, annotations={"helm.sh/resource-policy": "keep",
                                                                ARGOCD_SYNC_OPTIONS: KEEP_IN_ARGOCD})}
