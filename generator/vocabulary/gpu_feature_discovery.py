"""The node labels NVIDIA GPU Feature Discovery sets (tests/upstream/inventory/gpu-feature-discovery_README.md, its
labels table): what a live node says about its GPUs, read against the hardware profile."""

from __future__ import annotations

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
"""The GPU's product name with spaces as dashes (`A100-SXM4-40GB`): a hardware profile's `gpu.model`."""
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
"""How many GPUs the node has: a hardware profile's `gpu.count`."""
