"""generator/model/pods_ready.py: the least Kueue `waitForPodsReady.timeout` that lets a job run on a first pull.

Kueue facts (kubernetes-sigs/kueue, read at the tags named): an admitted workload whose pods
are not all ready within `waitForPodsReady.timeout` is evicted and requeued
(site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md); the default timeout is 5m in Configuration
v1beta1 (v0.14.0 apis/config/v1beta1/defaults.go `defaultPodsReadyTimeout = 5 * time.Minute`); an MPIJob is ready
when mpi-operator says it runs (pkg/controller/jobs/mpijob/mpijob_controller.go `PodsReady`: the `Running`
condition), which mpi-operator sets once the launcher pod and every worker run (v0.8.x
pkg/controller/mpi_job_controller.go `updateMPIJobStatus`).
"""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from mpigen.model.pods_ready import ImagePull, declared, pods_ready_seconds, timeout_text

KUEUE_V1BETA1_DEFAULT_TIMEOUT = 300  # 5m


def test_issue_32_sixteen_nodes_pulling_20_gb_pass_kueues_five_minute_default() -> None:
    """16 workers at once ask the registry for 16 x 100 MB/s, more than its 1250: each gets 78.125 MB/s, so 256 s;
    12 s to the readiness probe; then the launcher's node pulls alone at 100 MB/s, 200 s. 468 s in all."""
    pull = ImagePull(20, 100, 1250)
    assert pull.seconds(16) == pytest.approx(256) and pull.seconds(1) == pytest.approx(200)
    seconds = pods_ready_seconds(pull, 16, launcher_waits=True, pool_nodes=16)
    assert seconds == 468 > KUEUE_V1BETA1_DEFAULT_TIMEOUT
    assert timeout_text(seconds) == "8m"


def test_at_startup_the_launcher_pulls_beside_the_workers() -> None:
    """17 nodes at once: 20,000 MB at 1250/17 MB/s = 272 s, plus the probe: 284 s, under the default."""
    assert pods_ready_seconds(ImagePull(20, 100, 1250), 16, launcher_waits=False, pool_nodes=16) == 284


def test_a_small_job_is_bound_by_the_node_not_the_registry() -> None:
    pull = ImagePull(20, 100, 1250)
    assert pull.seconds(2) == pull.seconds(12) == pytest.approx(200)  # 12 x 100 <= 1250
    assert pods_ready_seconds(pull, 2, launcher_waits=True, pool_nodes=2) == 412


def test_a_cluster_profile_states_its_timeout_and_its_own_pull() -> None:
    given = {"scheduling": {"waitForPodsReady": {"timeoutSeconds": 600, "imageGB": 8.5, "registryMBps": 500}}}
    assert declared(given) == (600, ImagePull(8.5, 100, 500))
    assert declared({"scheduling": {"scheduler": "kueue"}}) == (None, ImagePull())


def test_workers_that_share_a_node_pull_the_image_once_there() -> None:
    """64 one-GPU workers on a pool of 8 DGX nodes: the kubelet pulls an image once a node, so at most the pool's 8
    nodes pull (200 s each, under the registry's share), not 64 (1250/64 MB/s each: 1024 s)."""
    pull = ImagePull(20, 100, 1250)
    assert pods_ready_seconds(pull, 64, launcher_waits=True, pool_nodes=8) == 412
    assert pods_ready_seconds(pull, 64, launcher_waits=True, pool_nodes=64) == 1024 + 12 + 200


def test_the_floor_is_monotone_and_sane_from_one_node_to_a_thousand() -> None:
    """More workers, or a bigger pool they spread over, never need less; the launcher waiting for the workers never
    needs less than pulling beside them; 1,000 nodes share the registry's 1250 MB/s (16,000 s for 20 TB)."""
    pull = ImagePull(20, 100, 1250)
    for waits in (True, False):
        floors = [pods_ready_seconds(pull, workers, waits, pool_nodes=1000) for workers in range(1, 1001)]
        assert floors == sorted(floors)
    assert all(pods_ready_seconds(pull, w, True, n) >= pods_ready_seconds(pull, w, False, n)
               for w in (1, 7, 16, 500) for n in (1, 8, 1000))
    assert pods_ready_seconds(pull, 1, True, 1) == 412
    assert pods_ready_seconds(pull, 1000, True, 1000) == 16000 + 12 + 200


def test_the_cluster_schema_says_kueue_waits_by_default_from_v0_19() -> None:
    """Kueue v0.19.0 apis/config/v1beta2/defaults.go sets `WaitForPodsReady` where the Configuration leaves it out, with
    `DefaultWaitForPodsReadyTimeout = 30 * time.Minute` (kueue#11855); before, v1beta2 (v0.15-v0.18) waits only where
    the block is given and v1beta1 only with `enable: true`. Leaving the key out does not mean Kueue does not wait."""
    schema = json.loads((REPO / "schemas" / "cluster.schema.json").read_text(encoding="utf-8"))
    said = schema["properties"]["scheduling"]["properties"]["waitForPodsReady"]["description"]
    assert "Kueue v0.19 and later wait by default (Configuration v1beta2, timeout 30m)" in said
