"""NCCL settings derived from the attached rails (generator/resolve/nccl.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.model import LinkType
from generator.resolve.nccl import derived_nccl_env, hca_family


@pytest.mark.parametrize(("hca", "family"), [("mlx5_0", "mlx5"), ("mlx5_17", "mlx5"), ("bnxt_re0", None),
                                             ("rocep12s0f0", None), ("mlx5", None), ("irdma1", None)])
def test_hca_family_only_for_kernel_numbered_names(hca, family):
    # VFs get their own kernel-numbered names (mlx5_N); a persistent PF name says nothing about them.
    assert hca_family(hca) == family


def _rails(example, job_name="resnet50-dgx"):
    return next(j for j in example.fleet.jobs if j.name == job_name).rails


def test_infiniband_rails(example):
    env = {name: value for name, value, _ in derived_nccl_env(_rails(example), uses_gpus=True)}
    assert env == {"NCCL_IB_HCA": "mlx5", "NCCL_SOCKET_IFNAME": "=rail0,rail1,rail2,rail3"}


def test_roce_adds_the_gid_index(example):
    rails = tuple(replace(r, nic=replace(r.nic, link_type=LinkType.ETHERNET)) for r in _rails(example))
    env = dict((name, value) for name, value, _ in derived_nccl_env(rails, uses_gpus=True))
    assert env["NCCL_IB_GID_INDEX"] == "3"


def test_persistent_hca_names_leave_nccl_ib_hca_unset(example):
    rails = tuple(replace(r, nic=replace(r.nic, hca=f"ibp{i}s0")) for i, r in enumerate(_rails(example)))
    names = [name for name, _, _ in derived_nccl_env(rails, uses_gpus=True)]
    assert names == ["NCCL_SOCKET_IFNAME"]


def test_gpu_job_without_rails_uses_sockets_and_cpu_job_gets_nothing(example):
    assert dict((n, v) for n, v, _ in derived_nccl_env((), uses_gpus=True)) == {
        "NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0"}
    assert derived_nccl_env(_rails(example), uses_gpus=False) == []
