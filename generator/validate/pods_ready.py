"""Kueue's `waitForPodsReady.timeout`, as a cluster profile says its Kueue runs with it, against the jobs of the
cluster: one whose pods cannot all be ready within it on a first pull of their image is evicted before it runs,
and again after every requeue (generator/model/pods_ready.py). A warning, at the profile's `timeoutSeconds`: the
image and the pull rates are a stated model, not a measurement."""

from __future__ import annotations

from mpigen.load import to_plain
from mpigen.model import admission, defaults, derive, pods_ready
from mpigen.support.diagnostics import Diagnostic, Severity, raises
from mpigen.support.profile_rules import SCHEDULING
from mpigen.validate.index import Index
from mpigen.validate.network import one_worker_per_node
from mpigen.vocabulary import mpi_operator


@raises(SCHEDULING)
def check_pods_ready_timeouts(index: Index) -> list[Diagnostic]:
    """Each Kueue cluster that states its timeout, against the job of it that needs the longest."""
    found = []
    for name, document in index.clusters.items():
        cluster = index.cluster_data(name)
        timeout, pull = pods_ready.declared(cluster)
        if timeout is None or admission.scheduler_of(cluster) != admission.KUEUE:
            continue
        pools = {pool["name"]: pool for pool in cluster["nodePools"]}
        longest: tuple[int, str, int] | None = None
        for job_document in index.jobs:
            job = to_plain(job_document.data)
            pool = pools.get(job["pool"]) if job["cluster"] == name else None
            if pool is None or pool["hardware"] not in index.hardware:
                continue  # another cluster's, or reported at the job
            shape = derive.layout(job, index.hardware_data(pool["hardware"]), int(pool["nodes"]),
                                  one_per_node=one_worker_per_node(cluster, job, index.hardware_data(pool["hardware"])))
            waits = job.get("launcherCreationPolicy", defaults.LAUNCHER_CREATION_POLICY) == \
                mpi_operator.WAIT_FOR_WORKERS_READY
            seconds = pods_ready.pods_ready_seconds(pull, shape.worker_count, waits, int(pool["nodes"]))
            if longest is None or seconds > longest[0]:
                longest = (seconds, job["name"], shape.worker_count)
        if longest is None or longest[0] <= timeout:
            continue
        seconds, job_name, workers = longest
        found.append(Diagnostic(
            document.location("scheduling", "waitForPodsReady", "timeoutSeconds"),
            f"Kueue's waitForPodsReady timeout of {timeout} s is less than the {seconds} s that job '{job_name}' "
            f"({workers} workers) needs for every pod to be ready on {pull.words()}: Kueue evicts it before it runs, "
            "and again after each requeue",
            f"set waitForPodsReady.timeout in Kueue's Configuration to {pods_ready.timeout_text(seconds)} or more, "
            "and `timeoutSeconds` here; or state the image and the pull rates (`imageGB`, `nodePullMBps`, "
            "`registryMBps`)", severity=Severity.WARNING))
    return found
