"""NCCL settings that follow from the rails a job's workers attach.

Under the SR-IOV device plugin with the `rdma` CNI in exclusive mode, a pod sees only the RDMA
devices of the VFs it was given, and those VFs carry their own `mlx5_N` names, not the PF's
`mlx5_0`. An exact `NCCL_IB_HCA==mlx5_0:1` list would therefore match nothing and NCCL would fall
back to sockets without a word; the device-family prefix (`mlx5`) matches exactly the attached VFs.
Bootstrap and socket traffic go over the rails' own interfaces, which mpigen names explicitly.
"""

from __future__ import annotations

import re

from generator.model import LinkType, RailAttachment

ROCE_GID_INDEX = "3"  # RoCEv2 over IPv4 (DOMAIN: 3 is usual); never set on InfiniBand.


def hca_family(hca: str) -> str:
    """`mlx5_0` -> `mlx5`: the prefix NCCL matches against the device names it finds."""
    return re.sub(r"_?[0-9]+$", "", hca) or hca


def derived_nccl_env(rails: tuple[RailAttachment, ...], uses_gpus: bool) -> list[tuple[str, str, str]]:
    """(name, value, why) for each NCCL variable, in a fixed order."""
    if not uses_gpus:
        return []
    if not rails:
        return [
            ("NCCL_IB_DISABLE", "1", "no RDMA rails attached: NCCL uses sockets"),
            ("NCCL_SOCKET_IFNAME", "eth0", "no rails: the cluster network (eth0) carries NCCL"),
        ]
    families = sorted({hca_family(r.nic.hca) for r in rails})
    interfaces = ",".join(r.interface for r in rails)
    env = [
        ("NCCL_IB_HCA", ",".join(families),
         "the attached rails' HCA family: only their VFs are visible in the pod"),
        ("NCCL_SOCKET_IFNAME", f"={interfaces}", "the rails' interfaces in the pod, exactly"),
    ]
    if any(r.nic.link_type is LinkType.ETHERNET for r in rails):
        env.append(("NCCL_IB_GID_INDEX", ROCE_GID_INDEX, "RoCEv2 over IPv4"))
    return env
