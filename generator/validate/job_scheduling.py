"""Gang scheduling, a job's side: the settings it gives are read by its cluster's scheduler, name what the
cluster declares, and let the gang complete (generator/validate/scheduling.py says why it matters)."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import WorkerSpread, admission, defaults, derive
from mpigen.support.diagnostics import Diagnostic, Severity, did_you_mean, raises
from mpigen.support.profile_rules import SCHEDULING
from mpigen.validate.domain_fit import check_domain_fit, check_slice_level
from mpigen.validate.network import one_worker_per_node
from mpigen.validate.quota import check_admission
from mpigen.validate.scheduling import JOB_SETTINGS, check_priority_class_name, readers_text
from mpigen.vocabulary import kai, reserved


@raises(SCHEDULING)
def check_job_scheduling(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any],
                         queues: admission.ClusterQueues, pool: dict[str, Any], pool_hardware: dict[str, dict[str, Any]],
                         sized: bool) -> list[Diagnostic]:
    """`queues`: the cluster's (`admission.cluster_queues`); `pool_hardware`: the hardware of each pool of the cluster
    (those whose hardware is known), by pool name; `sized`: the job's size on its pool is valid, so its demand can be
    weighed against its queue."""
    hardware = pool_hardware[pool["name"]]
    scheduler = admission.scheduler_of(cluster)
    given = job.get("scheduling", {})
    classes = [c["name"] for c in cluster.get("scheduling", {}).get("priorityClasses", [])]
    if "scheduling" in job and scheduler == admission.NONE and not classes:
        return [Diagnostic(document.location("scheduling", at_key=True),
                           f"cluster '{cluster['name']}' has no gang scheduler, so `scheduling` has no effect",
                           "remove it, or give the cluster a `scheduling` section (`priorityClasses` alone, with "
                           "`scheduler: none`, for pod priority)")]
    found: list[Diagnostic] = []
    for key, readers in JOB_SETTINGS.items():
        if key in given and scheduler not in readers:
            hint = ("Kueue admits a job whole: every pod or none" if key == "minAvailable" else "remove it")
            found.append(Diagnostic(document.location("scheduling", key, at_key=True),
                                    f"`scheduling.{key}` has no effect with cluster '{cluster['name']}''s scheduler "
                                    f"`{scheduler}`: only {readers_text(readers)} read it", hint))
    if scheduler == admission.KUEUE and job.get("runPolicy", {}).get("suspend") is False:
        found.append(Diagnostic(document.location("runPolicy", "suspend"),
                                f"cluster '{cluster['name']}' admits jobs through Kueue, which creates them suspended "
                                "and unsuspends them on admission; `suspend: false` would start the job without it",
                                "remove runPolicy.suspend"))
    if scheduler == admission.KAI:
        classes += [name for name, _ in kai.DEFAULT_PRIORITY_CLASSES]  # KAI's chart installs them
    if "priorityClass" in given and given["priorityClass"] not in classes and \
            reserved.is_system_priority_class(given["priorityClass"]):
        found += check_priority_class_name(document.location("scheduling", "priorityClass"), given["priorityClass"])
    elif "priorityClass" in given and given["priorityClass"] not in classes:
        found.append(Diagnostic(document.location("scheduling", "priorityClass"),
                                f"cluster '{cluster['name']}' declares no priority class '{given['priorityClass']}'",
                                did_you_mean(given["priorityClass"], classes) if classes else
                                "declare it in the cluster's `scheduling.priorityClasses`"))
    levels = [level["name"] for level in cluster.get("scheduling", {}).get("topology", [])]
    topology = given.get("topology")
    topology_aware = scheduler in (admission.KUEUE, admission.KAI)
    if topology is not None and topology_aware and topology["level"] not in levels:
        found.append(Diagnostic(document.location("scheduling", "topology", "level"),
                                f"cluster '{cluster['name']}' declares no topology level '{topology['level']}'",
                                did_you_mean(topology["level"], levels) if levels else
                                "declare the levels in the cluster's `scheduling.topology`"))
    elif topology is not None and scheduler == admission.KUEUE:
        found += check_slice_level(document, cluster, topology, hardware)
    elif topology is not None and "sliceLevel" in topology:
        found.append(Diagnostic(document.location("scheduling", "topology", "sliceLevel", at_key=True),
                                f"`scheduling.topology.sliceLevel` has no effect with cluster '{cluster['name']}''s "
                                f"scheduler `{scheduler}`: only `kueue` reads it", "remove it"))
    if found or not sized:
        return found
    shape = derive.layout(job, hardware, pool["nodes"], one_per_node=one_worker_per_node(cluster, job, hardware))
    policy = job.get("launcherCreationPolicy", defaults.LAUNCHER_CREATION_POLICY)
    if scheduler in admission.MIN_AVAILABLE_READERS:
        found += _check_min_available(document, job, shape.worker_count, policy)
    if topology is not None and topology_aware:
        found += check_domain_fit(document, cluster, topology, hardware, shape)
    if scheduler == admission.KUEUE and levels and job.get("workerSpread") == WorkerSpread.ONE_PER_NODE.value:
        natural = derive.layout({k: v for k, v in job.items() if k != "workerSpread"}, hardware, pool["nodes"])
        if natural.workers_per_node > 1:
            found.append(Diagnostic(document.location("workerSpread"), f"cluster '{cluster['name']}' declares a "
                                    "topology, so Kueue's topology-aware scheduling places the workers on nodes by "
                                    "their free capacity, which knows nothing of the pod anti-affinity "
                                    f"`one-per-node` gives: {natural.workers_per_node} of these workers fit a node, and "
                                    "one placed beside another would stay Pending while the job holds its quota",
                                    "ask for whole-node workers (gpusPerWorker, resources) instead, or remove "
                                    "workerSpread", severity=Severity.WARNING))
    if scheduler in admission.QUEUED:
        found += check_admission(document, job, cluster, queues, pool, pool_hardware, shape, scheduler)
    return found


def _check_min_available(document: ProfileFile, job: dict[str, Any], workers: int, policy: str) -> list[Diagnostic]:
    """A gang larger than the pods that can exist together never starts: under `WaitForWorkersReady` the
    launcher is created only once every worker runs, so it cannot be counted (mpi-operator #608)."""
    given = job.get("scheduling", {}).get("minAvailable")
    limit = admission.min_available_limit(workers, policy)
    if given is None or given <= limit:
        return []
    if not admission.launcher_in_gang(policy) and given == workers + 1:
        return [Diagnostic(document.location("scheduling", "minAvailable"),
                           f"minAvailable {given} counts the launcher, but under launcherCreationPolicy "
                           f"WaitForWorkersReady the launcher is created only once all {workers} workers run, and "
                           "they wait for a gang of "
                           f"{given}: the job deadlocks (mpi-operator #608)",
                           f"set minAvailable to {workers} (or leave it out), or use launcherCreationPolicy AtStartup")]
    pods = "workers and the launcher" if admission.launcher_in_gang(policy) else "workers"
    return [Diagnostic(document.location("scheduling", "minAvailable"),
                       f"minAvailable {given} is more than the job's {limit} pods ({pods}): the gang never completes",
                       f"set it to at most {limit}, or leave it out")]
