"""A Hardware profile as the model's Hardware: GPUs, NICs and CPU, with what the profile leaves out unknown."""

from __future__ import annotations

from typing import Any

from mpigen.model import Cpu, Gpu, Hardware, LinkType, Nic, PciDistance, derive


def label_pairs(data: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((data or {}).items()))


def resolved_hardware(data: dict[str, Any]) -> Hardware:
    gpu = data.get("gpu")
    return Hardware(
        name=data["name"],
        description=data.get("description", ""),
        gpu=Gpu(count=gpu["count"], model=gpu.get("model", ""), memory_gib=gpu.get("memoryGiB"),
                resource=gpu.get("resource", derive.DEFAULT_GPU_RESOURCE),
                nic_distance=PciDistance(gpu["nicDistance"]) if "nicDistance" in gpu else None,
                nvlink_domain_gpus=gpu.get("nvlinkDomainGpus")) if gpu else None,
        nics=tuple(
            # Facts a profile leaves out are unknown (None); validation refuses whatever would need one.
            Nic(name=n["name"], hca=n.get("hca"), port=n.get("port", 1), pf_name=n.get("pfName"),
                vendor_id=n.get("vendorId"), device_id=n.get("deviceId"), vf_device_id=n.get("vfDeviceId"),
                driver=n.get("driver", "mlx5_core"), link_type=LinkType(n["linkType"]) if "linkType" in n else None,
                speed_gbps=n.get("speedGbps"), numa_node=n.get("numaNode"), gpus=tuple(n.get("gpus", ())))
            for n in data.get("nics", [])
        ),
        cpu=Cpu(model=data["cpu"].get("model", ""), sockets=data["cpu"]["sockets"],
                cores_per_socket=data["cpu"].get("coresPerSocket"), threads_per_core=data["cpu"].get("threadsPerCore", 1)),
        memory_gib=data["memoryGiB"],
        node_labels=label_pairs(data.get("nodeLabels")),
    )
