"""generator/model/acceptance.py: what a cluster's `acceptance` turns into, as Job profile data."""

from __future__ import annotations

import shlex
import subprocess

from mpigen.model.acceptance import (
    PERFTEST_SERVER_VARIABLE,
    CollectiveTest,
    RailTest,
    Scope,
    acceptance_profiles,
    perftest_script,
)

HARDWARE = {"box": {"gpu": {"count": 8}, "nics": [
    {"name": "ib0", "hca": "mlx5_0", "port": 1, "linkType": "InfiniBand", "gpus": [0, 1, 2, 3]},
    {"name": "eth1", "hca": "mlx5_1", "port": 2, "linkType": "Ethernet"}]}}
CLUSTER = {"name": "c", "namespaces": ["ns", "other"], "jobBackend": "mpijob",
           "nodePools": [{"name": "p", "hardware": "box", "nodes": 3}],
           "rails": [{"name": "r0", "nic": "ib0"}, {"name": "r1", "nic": "eth1"}],
           "acceptance": {"image": "img:1", "maxBytes": "1G", "iterations": 7}}


def test_nccl_tests_arguments_are_the_settings():
    test = CollectiveTest("all_gather", Scope.POOL, "/opt/b/all_gather_perf", "8", "1G", 2, 7, 5)
    assert test.program == ("/opt/b/all_gather_perf", "-b", "8", "-e", "1G", "-f", "2", "-g", "1", "-n", "7", "-w",
                            "5", "-c", "1")


def test_a_pool_of_three_nodes_gets_a_pair_a_pool_run_and_a_run_per_rail():
    found = {profile.data["name"]: profile for profile in acceptance_profiles(CLUSTER, HARDWARE, False, False)}
    assert sorted(found) == ["accept-p-all-reduce-pair", "accept-p-all-reduce-pool", "accept-p-perftest-r0",
                             "accept-p-perftest-r1"]
    pair, pool = found["accept-p-all-reduce-pair"].data, found["accept-p-all-reduce-pool"].data
    assert (pair["workers"], pool["workers"], pair["gpusPerWorker"]) == (2, 3, 8)
    assert pair["naming"] == "stable" and pair["namespace"] == "ns" and pair["image"] == "img:1"
    assert pair["program"][:5] == ["/usr/local/bin/all_reduce_perf", "-b", "8", "-e", "1G"]
    assert "rails" not in pair  # every rail of the pool, as a real job that leaves `rails` out
    rail = found["accept-p-perftest-r1"]
    assert rail.data["rails"] == ["r1"] and rail.data["workerSpread"] == "one-per-node"
    assert rail.data["env"] == {PERFTEST_SERVER_VARIABLE: "accept-p-perftest-r1-worker-0.accept-p-perftest-r1.ns.svc"}
    test = rail.acceptance.rail_test
    assert test is not None and (test.device, test.port, test.gid_index) == ("mlx5_1", 2, "3")  # RoCE: GID index 3
    ib = found["accept-p-perftest-r0"].acceptance.rail_test
    assert ib is not None and ib.gid_index is None
    # Exclusive VFs: the pod sees its one device; DRA claims: the rail's NIC with the GPUs beside it.
    claimed = {p.data["name"]: p for p in acceptance_profiles(CLUSTER, HARDWARE, True, True)}
    assert claimed["accept-p-perftest-r0"].acceptance.rail_test.device is None
    assert claimed["accept-p-perftest-r0"].data["gpusPerWorker"] == 4  # ib0's `gpus`
    assert claimed["accept-p-perftest-r1"].data["gpusPerWorker"] == 4  # none stated: an even split over two rails


def test_pools_without_gpus_or_a_second_node_get_none_and_false_turns_a_pool_off():
    small = {**CLUSTER, "nodePools": [{"name": "p", "hardware": "box", "nodes": 1}]}
    assert acceptance_profiles(small, HARDWARE, False, False) == []
    cpu = {**CLUSTER, "nodePools": [{"name": "p", "hardware": "cpu", "nodes": 4}]}
    assert acceptance_profiles(cpu, {"cpu": {"nics": []}}, False, False) == []
    off = {**CLUSTER, "nodePools": [{"name": "p", "hardware": "box", "nodes": 3, "acceptance": False}]}
    assert acceptance_profiles(off, HARDWARE, False, False) == []


def test_the_perftest_script_is_valid_shell_and_serves_on_rank_0():
    script = perftest_script(RailTest("r0", "mlx5_0", 1, None, 10, 1048576, 4))
    assert subprocess.run(["bash", "-n", "-c", script], check=False).returncode == 0
    assert "ib_write_bw -d mlx5_0 -i 1 -F --report_gbits -D 10 -s 1048576 -q 4 || exit 1" in script
    assert 'ib_read_lat -d mlx5_0 -i 1 -F "$PERFTEST_SERVER" && break' in script
    assert "ib_write_bw" in script.split("else")[0]  # rank 0 is the server: no host argument
    odd = perftest_script(RailTest("r0", "mlx5 0;x", 1, None, 10, 1, 1))
    assert shlex.quote("mlx5 0;x") in odd  # quoted, though no schema lets such a name through
