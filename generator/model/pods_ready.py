"""How long a job's pods take to be ready on a first image pull: the floor of Kueue's `waitForPodsReady.timeout`.

Kueue evicts an admitted job whose pods are not all ready within `waitForPodsReady.timeout` and queues it again
(site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md). For an MPIJob, ready is mpi-operator's
`Running` condition (Kueue v0.20 pkg/controller/jobs/mpijob/mpijob_controller.go `PodsReady`), which the operator
sets once the launcher pod and every worker run (pkg/controller/mpi_job_controller.go `updateMPIJobStatus`). Under
`WaitForWorkersReady` the launcher is created only once every worker is ready, so its pull comes after theirs.
A timeout shorter than a first pull of the image on a new node evicts the job before it ever runs, again on each
requeue (nodes that got part of the image keep it, a new flavor assignment or node does not).

The image's size is not in any profile mpigen reads from the cluster, so the model is stated, each number once,
with what it stands for; a cluster profile sets its own (`scheduling.waitForPodsReady`):
- every node pulls the whole image (a first run on fresh nodes), at `node_mbps`, or its share of
  `registry_mbps` when the nodes pulling at once together ask the registry for more than it serves; a node pulls it
  once for all the workers it runs (the kubelet's image manager), and the workers are taken to be spread one a node
  as far as the pool has nodes (the default scheduler spreads pods), the most nodes that can pull at once;
- a worker is ready a readiness probe after it starts (`READY_AFTER_START_SECONDS`);
- the launcher (the same image) is pulled on a node of its own, after the workers under `WaitForWorkersReady`,
  with them under `AtStartup`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from mpigen.model import defaults
from mpigen.vocabulary import kubernetes

DEFAULT_IMAGE_GB = 20.0
"""Assumed size of the largest image a job pulls, in GB as the registry serves it: a CUDA framework image such as
the example fleet's nvcr.io/nvidia/pytorch (issue 32's case is 20 GB). Set `imageGB` to the cluster's own."""
DEFAULT_NODE_PULL_MBPS = 100
"""Assumed MB/s one node pulls an image at, when the registry is not the limit: containerd decompresses and unpacks
each gzip layer on one core, on the order of 100 MB/s, whatever the link. Set `nodePullMBps` to what you measure."""
DEFAULT_REGISTRY_MBPS = 1250
"""Assumed MB/s the registry (or the pull-through mirror) serves all nodes together: one 10 Gbit/s link. Set
`registryMBps` to the cluster's own."""
READY_AFTER_START_SECONDS = defaults.READINESS_PROBE_DELAY_SECONDS + kubernetes.PROBE_PERIOD_SECONDS
"""From a worker's start to its readiness, at the most: the sshd readiness probe's delay, then one probe period."""
MB_PER_GB = 1000


@dataclass(frozen=True)
class ImagePull:
    """The image a cluster's jobs pull and how fast its nodes get it (the model above)."""

    image_gb: float = DEFAULT_IMAGE_GB
    node_mbps: int = DEFAULT_NODE_PULL_MBPS
    registry_mbps: int = DEFAULT_REGISTRY_MBPS

    def seconds(self, nodes: int) -> float:
        """A first pull of the image on `nodes` nodes at once, each at its share of the registry."""
        rate = min(float(self.node_mbps), self.registry_mbps / max(nodes, 1))
        return self.image_gb * MB_PER_GB / rate

    def words(self) -> str:
        return (f"a first pull of a {self.image_gb:g} GB image, each node at {self.node_mbps} MB/s or its share of "
                f"the registry's {self.registry_mbps} MB/s")


def pods_ready_seconds(pull: ImagePull, workers: int, launcher_waits: bool, pool_nodes: int) -> int:
    """Whole seconds from admission until every pod of a job of `workers` workers on a pool of `pool_nodes` nodes is
    ready, on a first pull: the least `waitForPodsReady.timeout` that lets it run. `launcher_waits`: the launcher is
    created only once the workers are ready (`WaitForWorkersReady`)."""
    nodes = min(workers, pool_nodes)
    if launcher_waits:
        total = pull.seconds(nodes) + READY_AFTER_START_SECONDS + pull.seconds(1)
    else:
        total = pull.seconds(nodes + 1) + READY_AFTER_START_SECONDS
    return math.ceil(total)


def timeout_text(seconds: int) -> str:
    """A Kueue `timeout` (a Go duration) of at least `seconds`, in whole minutes: `7m`."""
    return f"{math.ceil(seconds / 60)}m"


def declared(cluster: dict[str, Any]) -> tuple[int | None, ImagePull]:
    """A cluster profile's `scheduling.waitForPodsReady` (already schema-valid): the timeout its Kueue runs with,
    where it says it, and its image pull, the defaults filled in."""
    given = cluster.get("scheduling", {}).get("waitForPodsReady", {})
    pull = ImagePull(float(given.get("imageGB", DEFAULT_IMAGE_GB)), int(given.get("nodePullMBps", DEFAULT_NODE_PULL_MBPS)),
                     int(given.get("registryMBps", DEFAULT_REGISTRY_MBPS)))
    timeout = given.get("timeoutSeconds")
    return (int(timeout) if timeout is not None else None), pull
