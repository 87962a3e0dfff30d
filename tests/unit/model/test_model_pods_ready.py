"""generator/model/pods_ready.py: the least Kueue `waitForPodsReady.timeout` that lets a job run on a first pull.

Kueue facts (the mirror at /work/shared/upstream's source, kubernetes-sigs/kueue): an admitted workload whose pods
are not all ready within `waitForPodsReady.timeout` is evicted and requeued
(site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md); the default timeout is 5m in Configuration
v1beta1 (v0.14.0 apis/config/v1beta1/defaults.go `defaultPodsReadyTimeout = 5 * time.Minute`); an MPIJob is ready
when mpi-operator says it runs (pkg/controller/jobs/mpijob/mpijob_controller.go `PodsReady`: the `Running`
condition), which mpi-operator sets once the launcher pod and every worker run (v0.8.x
pkg/controller/mpi_job_controller.go `updateMPIJobStatus`).
"""

from __future__ import annotations

import pytest

from mpigen.model.pods_ready import ImagePull, declared, pods_ready_seconds, timeout_text

KUEUE_V1BETA1_DEFAULT_TIMEOUT = 300  # 5m


def test_issue_32_sixteen_nodes_pulling_20_gb_pass_kueues_five_minute_default() -> None:
    """16 workers at once ask the registry for 16 x 100 MB/s, more than its 1250: each gets 78.125 MB/s, so 256 s;
    12 s to the readiness probe; then the launcher's node pulls alone at 100 MB/s, 200 s. 468 s in all."""
    pull = ImagePull(20, 100, 1250)
    assert pull.seconds(16) == pytest.approx(256) and pull.seconds(1) == pytest.approx(200)
    seconds = pods_ready_seconds(pull, 16, launcher_waits=True)
    assert seconds == 468 > KUEUE_V1BETA1_DEFAULT_TIMEOUT
    assert timeout_text(seconds) == "8m"


def test_at_startup_the_launcher_pulls_beside_the_workers() -> None:
    """17 nodes at once: 20,000 MB at 1250/17 MB/s = 272 s, plus the probe: 284 s, under the default."""
    assert pods_ready_seconds(ImagePull(20, 100, 1250), 16, launcher_waits=False) == 284


def test_a_small_job_is_bound_by_the_node_not_the_registry() -> None:
    pull = ImagePull(20, 100, 1250)
    assert pull.seconds(2) == pull.seconds(12) == pytest.approx(200)  # 12 x 100 <= 1250
    assert pods_ready_seconds(pull, 2, launcher_waits=True) == 412


def test_a_cluster_profile_states_its_timeout_and_its_own_pull() -> None:
    given = {"scheduling": {"waitForPodsReady": {"timeoutSeconds": 600, "imageGB": 8.5, "registryMBps": 500}}}
    assert declared(given) == (600, ImagePull(8.5, 100, 500))
    assert declared({"scheduling": {"scheduler": "kueue"}}) == (None, ImagePull())
