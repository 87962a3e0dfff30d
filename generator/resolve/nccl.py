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


_NUMBERED_HCA = re.compile(r"^([a-z][a-z0-9]*)_[0-9]+$")


def hca_family(hca: str) -> str | None:
    """`mlx5_0` -> `mlx5`: the prefix NCCL matches against the device names it finds.

    Only kernel-numbered names (`<driver>_<n>`) have a family that VFs share; a persistent name
    such as `rocep12s0f0` says nothing about its VFs' names, so no prefix is guessed from it.
    """
    match = _NUMBERED_HCA.match(hca)
    return match.group(1) if match else None


def derived_nccl_env(rails: tuple[RailAttachment, ...], uses_gpus: bool) -> list[tuple[str, str, str]]:
    """(name, value, why) for each NCCL variable, in a fixed order."""
    if not uses_gpus:
        return []
    if not rails:
        return [
            ("NCCL_IB_DISABLE", "1", "no RDMA rails attached: NCCL uses sockets"),
            ("NCCL_SOCKET_IFNAME", "eth0", "no rails: the cluster network (eth0) carries NCCL"),
        ]
    families = {hca_family(r.nic.hca) for r in rails}
    interfaces = ",".join(r.interface for r in rails)
    env = []
    if None not in families:
        env.append(("NCCL_IB_HCA", ",".join(sorted(families)),
                    "the attached rails' HCA family: only their VFs are visible in the pod"))
    env.append(("NCCL_SOCKET_IFNAME", f"={interfaces}", "the rails' interfaces in the pod, exactly"))
    if any(r.nic.link_type is LinkType.ETHERNET for r in rails):
        env.append(("NCCL_IB_GID_INDEX", ROCE_GID_INDEX, "RoCEv2 over IPv4"))
    return env
