"""Dynamic Resource Allocation (`resource.k8s.io/v1`): the API, the standard device attributes, and what the two
drivers mpigen writes claims for publish: NVIDIA's GPU DRA driver (`gpu.nvidia.com`, with its ComputeDomains for
multi-node NVLink) and DRANET (`dra.net`, RDMA NICs).

Sources (tests/upstream/dra/, SOURCES.yaml):
- NVIDIA/k8s-dra-driver-gpu @ 22407113785e78c7763b4637689a201eb39c6199: cmd/gpu-kubelet-plugin/deviceinfo.go (a GPU's
  attributes: type, uuid, productName, brand, architecture, cudaComputeCapability, driverVersion, cudaDriverVersion,
  addressingMode, and the standard pciBusID and pcieRoot; no NUMA node on a whole GPU), the DeviceClass templates
  (gpu.nvidia.com with `extendedResourceName: nvidia.com/gpu` under resource.k8s.io/v1; mig.nvidia.com;
  compute-domain-default-channel.nvidia.com; compute-domain-daemon.nvidia.com) and the ComputeDomain CRD
  (`resource.nvidia.com/v1beta1`; `spec.numNodes` best left 0; `spec.channel.resourceClaimTemplate.name` names the
  ResourceClaimTemplate its controller makes, which every pod of the workload claims).
- google/dranet @ 7b7661a153a6815194e957bd33147b538675e56e: pkg/apis/attributes.go (`dra.net/ifName`, `rdma`,
  `numaNode`, `pciAddress`, ...), pkg/inventory/db.go (it publishes the standard pcieRoot), pkg/apis (its opaque
  config: `interface.name` is the interface's name inside the pod), examples/mpi_operator/dra_resources.yaml (the
  RDMA NIC DeviceClass: `device.driver == "dra.net"` and `device.attributes["dra.net"].rdma == true`).
- Kubernetes, "Standard Device Attributes for Dynamic Resource Allocation": `resource.kubernetes.io/pcieRoot` (the PCIe
  root complex, `pci<domain>:<bus>`: devices under one root share a PCIe switch hierarchy) and
  `resource.kubernetes.io/numaNode` (KEP-6072); DRA is GA in 1.34.
"""

from __future__ import annotations

from dataclasses import dataclass

API_VERSION = "resource.k8s.io/v1"
"""The DRA API mpigen writes: GA (and on by default) since Kubernetes 1.34."""
FIRST_KUBERNETES = (1, 34)
"""The first Kubernetes release that serves `resource.k8s.io/v1`."""
GROUP = API_VERSION.split("/")[0]
RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate"
RESOURCE_CLAIM = "ResourceClaim"
DEVICE_CLASS = "DeviceClass"

STANDARD_PREFIX = "resource.kubernetes.io"
PCIE_ROOT = f"{STANDARD_PREFIX}/pcieRoot"
"""Devices with the same value sit under one PCIe root complex: what GPUDirect RDMA between a GPU and a NIC needs."""
NUMA_NODE = f"{STANDARD_PREFIX}/numaNode"
"""Devices with the same value sit on one NUMA node (KEP-6072)."""
PCI_BUS_ID = f"{STANDARD_PREFIX}/pciBusID"

GPU_DRIVER = "gpu.nvidia.com"
GPU_DEVICE_CLASS = "gpu.nvidia.com"
"""The DeviceClass NVIDIA's GPU DRA driver installs for whole GPUs."""
GPU_EXTENDED_RESOURCE = "nvidia.com/gpu"
"""The extended resource of the GPU DeviceClass (`spec.extendedResourceName`): a pod that also asks for it by name
is given GPUs twice."""
MIG_DEVICE_CLASS = "mig.nvidia.com"

NIC_DRIVER = "dra.net"
NIC_DEVICE_CLASS = "dranet-rdma"
"""The RDMA NIC DeviceClass mpigen's infra chart writes where the cluster names no other (DRANET installs none)."""
NIC_SELECTORS = ('device.driver == "dra.net"', 'device.attributes["dra.net"].rdma == true')
"""The RDMA NIC DeviceClass's CEL selectors, as DRANET's MPI example (examples/mpi_operator/dra_resources.yaml)."""
NIC_INTERFACE_ATTRIBUTE = "ifName"
"""The DRANET attribute naming the NIC's interface on the node: a claim selects one NIC by it."""

COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
CHANNEL_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
"""The DeviceClass of the IMEX channel a ComputeDomain's ResourceClaimTemplate asks for."""
COMPUTE_DOMAIN_API_VERSION = "resource.nvidia.com/v1beta1"
COMPUTE_DOMAIN_KIND = "ComputeDomain"
COMPUTE_DOMAIN_GROUP = COMPUTE_DOMAIN_API_VERSION.split("/")[0]
COMPUTE_DOMAIN_CHANNEL_TEMPLATE = ("spec", "channel", "resourceClaimTemplate", "name")
"""Where a ComputeDomain names the ResourceClaimTemplate (of the channel's DeviceClass) its controller makes in the
ComputeDomain's namespace: the template the pods of its workload claim (the ComputeDomain CRD)."""


@dataclass(frozen=True)
class Driver:
    """A DRA driver: the attributes it publishes on its devices, fully qualified (`<domain>/<name>`)."""

    name: str
    attributes: frozenset[str]
    source: str


def _qualified(driver: str, *names: str) -> frozenset[str]:
    return frozenset(f"{driver}/{name}" for name in names)


DRIVERS: dict[str, Driver] = {
    GPU_DRIVER: Driver(GPU_DRIVER, _qualified(GPU_DRIVER, "type", "uuid", "productName", "brand", "architecture",
                                               "cudaComputeCapability", "driverVersion", "cudaDriverVersion",
                                               "addressingMode") | {PCIE_ROOT, PCI_BUS_ID},
                       "NVIDIA/k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/deviceinfo.go (GpuInfo.Attributes)"),
    NIC_DRIVER: Driver(NIC_DRIVER, _qualified(NIC_DRIVER, "ifName", "pciAddress", "mac", "pciVendor", "pciDevice",
                                               "pciSubsystem", "numaNode", "mtu", "encapsulation", "alias", "state",
                                               "type", "ipv4", "ipv6", "tcFilterNames", "tcxProgramNames", "ebpf",
                                               "sriov", "sriovVfs", "virtual", "rdma") | {PCIE_ROOT},
                       "google/dranet pkg/apis/attributes.go, pkg/inventory/db.go"),
    COMPUTE_DOMAIN_DRIVER: Driver(COMPUTE_DOMAIN_DRIVER, _qualified(COMPUTE_DOMAIN_DRIVER, "type", "id"),
                                  "NVIDIA/k8s-dra-driver-gpu deviceclass-compute-domain-default-channel.yaml"),
}


@dataclass(frozen=True)
class KnownClass:
    """A DeviceClass a driver's own installation creates: its driver, and the extended resource it stands for."""

    name: str
    driver: str
    extended_resource: str | None = None


DRIVER_CLASSES: dict[str, KnownClass] = {
    GPU_DEVICE_CLASS: KnownClass(GPU_DEVICE_CLASS, GPU_DRIVER, GPU_EXTENDED_RESOURCE),
    MIG_DEVICE_CLASS: KnownClass(MIG_DEVICE_CLASS, GPU_DRIVER),
    CHANNEL_DEVICE_CLASS: KnownClass(CHANNEL_DEVICE_CLASS, COMPUTE_DOMAIN_DRIVER),
    "compute-domain-daemon.nvidia.com": KnownClass("compute-domain-daemon.nvidia.com", COMPUTE_DOMAIN_DRIVER),
}
"""DeviceClasses that NVIDIA's GPU DRA driver's Helm chart installs (deployments/helm/.../templates/deviceclass-*.yaml)."""

KUEUE_FIRST_MINOR = 18
"""Kueue counts devices claimed through a ResourceClaimTemplate by default from v0.18, by its Configuration's
`resources.deviceClassMappings` (site/content/en/docs/tasks/manage/setup_dra.md; pkg/features/kube_features.go at
v0.18.0: KueueDRAIntegration beta, on; before, from v0.14 (#5873), the alpha gate DynamicResourceAllocation, off)."""
KUEUE_CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
KUEUE_GPU_RESOURCE = GPU_EXTENDED_RESOURCE
"""The name a cluster's ClusterQueues count claimed GPUs under (deviceClassMappings `name`): the same as the device
plugin's, so quotas read as before."""
KUEUE_NIC_RESOURCE = "dra.net/rdma-nic"
"""The name ClusterQueues count claimed RDMA NICs under."""
KUEUE_CHANNEL_RESOURCE = "compute-domain.nvidia.com/channel"
"""The name ClusterQueues count ComputeDomain channels under: Kueue admits no workload whose claim names a
DeviceClass its mappings lack."""
KUEUE_CONFIG_KIND = "Configuration"
KUEUE_MAPPINGS_PATH = ("resources", "deviceClassMappings")
"""Where Kueue's Configuration holds the mappings: each entry a logical resource's `name` and the
`deviceClassNames` it counts."""
KUEUE_MAPPING_NAME = "name"
KUEUE_MAPPING_CLASSES = "deviceClassNames"
KUEUE_RESTART = "kubectl -n kueue-system rollout restart deployment/kueue-controller-manager"
"""Kueue reads its Configuration once, at startup: a changed mapping takes effect only once the controller restarts
(setup_dra.md)."""

VOLCANO_DRA_FEATURE_GATE = "DynamicResourceAllocation"
"""The feature gate Volcano's scheduler allocates claims under, from v1.12 (volcano-sh/volcano
docs/user-guide/how_to_enable_dra.md)."""
VOLCANO_DRA_QUOTA_PREFIX = "deviceclass/"
"""Volcano's capacity plugin (v1.15, with its `capacity.DynamicResourceAllocationEnable` argument) counts claimed
devices in a queue's `capability`, `deserved` and `guarantee` under `deviceclass/<DeviceClass>`
(pkg/scheduler/plugins/capacity/capacity.go, docs/design/capacity-dra-support.md); its proportion plugin and earlier
releases count a pod's requests only, which a claim is not (volcano-sh/volcano #4400)."""
