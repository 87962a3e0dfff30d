"""`host-network`: the NetApp way. Workers use the node's own network stack (`hostNetwork: true`), so
there are no NADs and NCCL names the nodes' rail interfaces. Two workers on a node would both bind sshd's
port, so there is one worker per node (required anti-affinity) and sshd listens on `sshPort`, not 22,
which the node's own sshd has. The RDMA devices come from rdma-shared-dev-plugin (`rdma/<resource>`): a
host-network pod without a device plugin could reach /dev/infiniband only if privileged."""

from __future__ import annotations

from mpigen.model import Cluster, Job, NetworkProvider
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest
from mpigen.providers.base import PodNetwork, Provider, one_per_rail
from mpigen.providers.rdma_shared import CONFIGMAP, DEVICE_PLUGIN, build_rdma_devices_configmap


def notes(cluster: Cluster) -> str:
    network = cluster.network
    return (f"pods on the nodes' network, one worker per node, sshd on port {network.ssh_port}; "
            f"rdma-shared-dev-plugin config: ConfigMap {CONFIGMAP} in {network.device_plugin_namespace}.")


def infra(cluster: Cluster, chart: ChartRef) -> list[Manifest]:
    if not cluster.rails:
        return []
    return [Manifest("rdma-devices-configmap.yaml", build_rdma_devices_configmap(cluster, chart))]


def pod_network(job: Job, mpijob: str) -> PodNetwork:
    return PodNetwork(limits=one_per_rail(job), host_network=True, ssh_port=job.cluster.network.ssh_port)


PROVIDER = Provider(
    NetworkProvider.HOST_NETWORK, infra, pod_network, notes,
    resource_prefix="rdma",  # rdma-shared-dev-plugin's fixed prefix
    # NCCL_IB_HCA and UCX_NET_DEVICES from `hca`, the network type from `linkType`; rdma-shared-dev-plugin selects
    # the PF by vendor, device id and interface name.
    nic_facts=("hca", "pfName", "vendorId", "deviceId", "linkType"),
    settings={"devicePluginNamespace": "kube-system", "sshPort": 2222},
    multus=False,
    host_network=True,
    host_interface=True,
    device_plugin=DEVICE_PLUGIN,
)
