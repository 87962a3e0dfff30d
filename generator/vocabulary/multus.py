"""Multus' NetworkAttachmentDefinition and its pod and NAD annotations (k8snetworkplumbingwg network-attachment-definition
spec v1.2; the CRD: tests/upstream/network/nad-client/artifacts__networks-crd.yaml): the networks a pod attaches, and
the device-plugin resource a NAD's attachments need."""

from __future__ import annotations

NAD_GROUP = "k8s.cni.cncf.io"
NAD_API_VERSION = f"{NAD_GROUP}/v1"
NAD_KIND = "NetworkAttachmentDefinition"

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
RESOURCE_NAME_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
DEFAULT_NETWORK_ANNOTATION = "v1.multus-cni.io/default-network"
"""On a pod: the attachment that replaces its cluster network (Multus' pkg/k8sclient `defaultNetAnnot`). mpigen
never writes it; profiles may not (generator/vocabulary/reserved.py) and `check` refuses it."""

CLUSTER_NETWORK_INTERFACE = "eth0"
"""The pod's interface on the cluster network, as the cluster's CNI plugin names it (the kubelet's CNI_IFNAME)."""
LOOPBACK_INTERFACE = "lo"
POD_OWN_INTERFACES = (CLUSTER_NETWORK_INTERFACE, LOOPBACK_INTERFACE)
"""A pod's own interfaces (the cluster network's and loopback): an attachment Multus or DRANET names so would clash, and
NCCL_SOCKET_IFNAME would pick the cluster network."""
