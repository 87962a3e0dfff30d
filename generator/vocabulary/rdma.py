"""RDMA facts the derived settings of a job and its acceptance tests share."""

from __future__ import annotations

ROCE_GID_INDEX = "3"
"""RoCEv2 over IPv4 (the usual GID index for it): NCCL_IB_GID_INDEX of a job, perftest's `-x`; never set on
InfiniBand."""
