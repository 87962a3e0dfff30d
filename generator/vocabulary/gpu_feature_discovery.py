"""The node labels NVIDIA GPU Feature Discovery sets (tests/upstream/inventory/gpu-feature-discovery_README.md, its
labels table): what a live node says about its GPUs, read against the hardware profile."""

from __future__ import annotations

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
"""The GPU's product name with spaces as dashes (`A100-SXM4-40GB`): a hardware profile's `gpu.model`."""
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
"""How many GPUs the node has: a hardware profile's `gpu.count`."""
GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
"""Each GPU's memory in MiB (`39538`): a hardware profile's `gpu.memoryGiB`."""
GFD_TIMESTAMP_LABEL = "nvidia.com/gfd.timestamp"
"""When GFD last labelled the node (`1724632719`): one node's, and changed by every restart of GFD."""
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
"""`single` or `mixed` where the GPU operator partitions GPUs with MIG: under `single` GFD's product label gets the MIG
profile appended and its count is of MIG devices; under `mixed` the slices are other resources than whole GPUs."""
GPU_REPLICAS_LABEL = "nvidia.com/gpu.replicas"
"""How many pods share each GPU (time-slicing or MPS); above 1 the node advertises that many times its GPUs, and the
product label gets `-SHARED` appended."""
GPU_CLIQUE_LABEL = "nvidia.com/gpu.clique"
"""The node's multi-node NVLink domain (`<GPU fabric ClusterUUID>.<CliqueID>`): every node of a GB200 NVL72 rack's
NVLink domain carries the same value, so it serves as a topology level whose domain holds one NVLink domain."""
MIG_DISABLED = "all-disabled"
"""The `nvidia.com/mig.config` value (the MIG manager's label) that turns MIG off on a node."""
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_PRODUCT_INFIX = "-MIG-"
"""What GFD puts between the product and the MIG profile under the `single` strategy (`A100-SXM4-40GB-MIG-1g.5gb`)."""
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
"""The resources of MIG slices under the `mixed` strategy (`nvidia.com/mig-1g.5gb`)."""
