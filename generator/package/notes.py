"""The charts' templates/NOTES.txt and the notes above their values: what the chart makes, how to watch it,
and what must be done outside it, said for each backend and scheduler."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpigen.model import Backend, Cluster, Job, Naming, Scheduler, claimed, names
from mpigen.model.pods_ready import timeout_text
from mpigen.objects import chartfiles
from mpigen.objects.chartfiles import action
from mpigen.objects.manifest import Manifest
from mpigen.package.template import escape_text
from mpigen.providers import PROVIDERS
from mpigen.support import yamlio
from mpigen.vocabulary import dra, mpi_operator, trainer
from mpigen.vocabulary.kueue_releases import TAS_BETA_MINOR, release_name
from mpigen.vocabulary.podsecurity import ENFORCE_LABEL, ENFORCE_VERSION_LABEL, PodSecurity


def volcano(job: Job) -> bool:
    return job.backend is Backend.VOLCANO_JOB


def trainjob(job: Job) -> bool:
    return job.backend is Backend.TRAINJOB


def kueue(job: Job) -> bool:
    return job.cluster.scheduling.scheduler is Scheduler.KUEUE


def workers_note(job: Job) -> str:
    if volcano(job):
        return ("Worker pods: the Volcano Job's mpiworker replicas and its minAvailable, the hostfile and mpirun's rank "
                "count follow it. Volcano refuses the change on a Job already created (the launcher's command changes "
                "with it): set it before the first sync.")
    if trainjob(job):
        return ("Worker pods: the TrainJob's numNodes and the hostfile follow it, and with them mpirun's rank count "
                "(one rank per slot of the hostfile). Trainer refuses the change on a TrainJob already created "
                "(spec.trainer is immutable): set it before the first sync.")
    return "Worker pods: the MPIJob's Worker replicas, the hostfile and mpirun's rank count follow it."


def suspend_note(job: Job) -> str:
    field = ".".join(trainer.SUSPEND_PATH) if trainjob(job) else ".".join(mpi_operator.SUSPEND_PATH[1:])
    if kueue(job):
        return f"Create the {job.backend.noun} suspended ({field}): no pods until Kueue admits it."
    return f"Create the {job.backend.noun} suspended ({field}): no pods until it is set to false."


def naming_note(job: Job, mpijob: str) -> str:
    noun = job.backend.noun
    if job.naming is Naming.STABLE:
        return f"{noun} name {mpijob} (naming: stable): an edit to a job that already ran reaches it only " \
               f"once the {noun} is deleted."
    return f"{noun} name {mpijob} (naming: content-hash): a profile edit that changes the run gives a new " \
           f"name, and the old {noun} is pruned; `--set` values do not rename it."


def _scheduling_note(job: Job, mpijob: str) -> str:
    """How the job is gang-scheduled, for NOTES.txt."""
    scheduling, own = job.cluster.scheduling, job.scheduling
    if scheduling.scheduler is Scheduler.KAI:
        return (f"Gang-scheduled by KAI in queue {own.queue} (scheduler {scheduling.scheduler_name}): KAI's podgrouper "
                f"creates its PodGroup from the MPIJob (kubectl -n {job.namespace} get podgroups).\n")
    if scheduling.scheduler is Scheduler.KUEUE:
        return (f"Admitted whole by Kueue through LocalQueue {own.queue} (kubectl -n {job.namespace} get workloads); "
                "created suspended, Kueue unsuspends it on admission.\n")
    if volcano(job):
        queue = f", queue {own.queue}" if own.queue else ""
        return f"Gang-scheduled by volcano{queue}: Volcano's job controller creates its PodGroup.\n"
    if scheduling.scheduler.gangs_through_operator:
        queue = f", queue {own.queue}" if own.queue else ""
        return (f"Gang-scheduled by {scheduling.scheduler.value}{queue}: mpi-operator (--gang-scheduling="
                f"{scheduling.scheduler_name or scheduling.scheduler.value}) creates PodGroup {mpijob}.\n")
    return ""


def job_notes(job: Job, mpijob: str) -> str:
    ns, name = job.namespace, mpijob
    if volcano(job):
        commands = (f"  kubectl -n {ns} get vcjob {name}\n"
                    f"  kubectl -n {ns} logs -f pod/{names.volcano_launcher_name(name)}\n"
                    f"  kubectl -n {ns} get events --field-selector involvedObject.name={name}\n")
    elif trainjob(job):
        commands = (f"  kubectl -n {ns} get trainjob {name}\n"
                    f"  kubectl -n {ns} logs -f job/{names.trainjob_launcher_job(name)}\n"
                    f"  kubectl -n {ns} get events --field-selector involvedObject.name={name}\n"
                    f"    (its TrainingRuntime {name} is in cluster {job.cluster.name}'s infra chart)\n")
    else:
        commands = (f"  kubectl -n {ns} get mpijob {name}\n"
                    f"  kubectl -n {ns} logs -f job/{names.launcher_name(name)}\n"
                    f"  kubectl -n {ns} get events --field-selector involvedObject.name={name}\n"
                    "    (mpi-operator reports an MPIJob it rejects only as a ValidationError event)\n")
    return escape_text(
        f"{job.backend.noun} {name} in namespace {ns}: "
    ) + action(chartfiles.WORKERS_EXPRESSION) + escape_text(
        f" worker(s) x {job.slots_per_worker} slot(s), {job.mpi_implementation.value}"
    ) + ("" if kueue(job) or volcano(job) else chartfiles.SUSPENDED_NOTE) + ".\n" + escape_text(
        f"Hostfile: ConfigMap {names.hostfile_configmap_name(name)}, mounted in the launcher at "
        f"{names.HOSTFILE_PATH}.\n" + _scheduling_note(job, mpijob) + "\n" + commands
    )


def infra_notes(cluster: Cluster, manifests: list[Manifest], levels: Mapping[str, PodSecurity],
                jobs: tuple[Job, ...] = ()) -> str:
    lines = [f"Cluster {cluster.name}: namespaces {', '.join(cluster.namespaces)}."]
    if cluster.existing_namespaces:
        lines.append("Namespaces that exist already, which this chart does not create: each must admit the Pod "
                     "Security level its jobs need. Unlabelled, it admits what the cluster's default does; only where "
                     f"its {ENFORCE_LABEL} label is stricter, loosen it (other workloads may rely on it: `mpigen check "
                     "--context <the namespace's YAML>` judges the live label):")
        lines += [f"  {ns} needs {levels[ns].level.label}: kubectl label namespace {ns} --overwrite "
                  f"{ENFORCE_LABEL}={levels[ns].level.label} {ENFORCE_VERSION_LABEL}=v{cluster.kubernetes_version}"
                  for ns in cluster.existing_namespaces]
    network = cluster.network
    if cluster.rails:
        lines.append(f"RDMA rails ({network.provider.value}): " + PROVIDERS[network.provider].notes(cluster))
        claims = PROVIDERS[network.provider].dra_devices  # no resource: the workers claim the rails' NICs
        lines += [f"  {r.name}: " + (f"NIC {r.nic_name}" if claims else f"resource {r.resource}")
                  + (f", addresses {r.ipam.range}" if r.ipam else "")
                  + (f", {r.tagging}" if r.tagging else "") for r in cluster.rails]
    else:
        lines.append(f"No RDMA rails ({network.provider.value}).")
    lines += _infra_scheduling_notes(cluster)
    lines += _pods_ready_notes(cluster, jobs)
    runtimes = [m.obj["metadata"] for m in manifests if m.template == chartfiles.TRAINING_RUNTIMES_TEMPLATE]
    if runtimes:
        lines.append("TrainingRuntimes of the cluster's TrainJobs (sync this chart before the jobs' charts: Trainer "
                     "refuses a TrainJob whose runtime does not exist yet):")
        lines += [f"  {meta['namespace']}/{meta['name']}" for meta in runtimes]
    return escape_text("\n".join(lines) + "\n")


def _infra_scheduling_notes(cluster: Cluster) -> list[str]:
    """What the scheduler must be told outside the chart, and the queues the chart carries."""
    scheduling = cluster.scheduling
    if scheduling.scheduler is Scheduler.NONE:
        return []
    if scheduling.scheduler.gangs_through_operator:
        flag = scheduling.scheduler_name or scheduling.scheduler.value
        lines = [f"Gang scheduling ({scheduling.scheduler.value}): run mpi-operator with --gang-scheduling={flag}; it "
                 "creates each MPIJob's PodGroup from runPolicy.schedulingPolicy."]
    elif scheduling.scheduler is Scheduler.KAI:
        lines = [f"Gang scheduling (kai): run mpi-operator WITHOUT --gang-scheduling; KAI's podgrouper creates each "
                 f"MPIJob's PodGroup, and KAI (scheduler {scheduling.scheduler_name}) places its pods. Queues are KAI "
                 "Queues (cohorts: their parent Queues); KAI's own priority classes (train, build-preemptible, build, "
                 "inference) come with its chart."]
    else:
        lines = ["Gang scheduling (kueue): Kueue admits each MPIJob and TrainJob whole (enable its kubeflow.org/mpijob "
                 "and trainer.kubeflow.org/trainjob integrations; waitForPodsReady makes a job that cannot start all "
                 "its pods give its quota back)."]
    lines += [f"  queue {queue.name}: " + ", ".join(f"{share.nodes} of pool {share.pool.name}'s {share.pool.nodes} "
                                                    "nodes" for share in queue.shares)
              + (f"; cohort {queue.cohort}" if queue.cohort else "") for queue in scheduling.queues]
    lines += _claimed_device_notes(cluster)
    release = scheduling.kueue_release
    if scheduling.scheduler is Scheduler.KUEUE and scheduling.topology and not release.topology_by_default:
        lines.append(f"Kueue {release.name} serves topology-aware scheduling as an alpha feature: run it with "
                     "--feature-gates=TopologyAwareScheduling=true, or it places no job by its topology "
                     f"request (on by default from {release_name(TAS_BETA_MINOR)}).")
    return lines


def _claimed_device_notes(cluster: Cluster) -> list[str]:
    """Under DRA, what the scheduler counts of the devices pods claim: Kueue, by the deviceClassMappings of its
    Configuration, given exactly; Volcano and scheduler-plugins' coscheduling, nothing (they count requests)."""
    scheduling = cluster.scheduling
    mappings = claimed.cluster_mappings(cluster.dra, (pool.claimed for pool in cluster.pools))
    if scheduling.scheduler is Scheduler.NONE or not mappings:
        return []
    devices = ", ".join(f"{m.noun} of DeviceClass {', '.join(m.device_classes)}" for m in mappings)
    if scheduling.scheduler is Scheduler.KUEUE:
        fragment: dict[str, Any] = {"apiVersion": dra.KUEUE_CONFIG_API_VERSION, "kind": dra.KUEUE_CONFIG_KIND}
        node = fragment
        for key in dra.KUEUE_MAPPINGS_PATH[:-1]:
            node = node.setdefault(key, {})
        node[dra.KUEUE_MAPPINGS_PATH[-1]] = [
            {dra.KUEUE_MAPPING_NAME: m.name, dra.KUEUE_MAPPING_CLASSES: list(m.device_classes)} for m in mappings]
        return ([f"Devices claimed through DRA ({devices}): Kueue counts them only through its Configuration's "
                 f"{'.'.join(dra.KUEUE_MAPPINGS_PATH)} (in Kueue's Configuration, not in this chart; Kueue "
                 f"{release_name(dra.KUEUE_FIRST_MINOR)} or later), as the ClusterQueues above cover them "
                 f"({', '.join(m.name for m in mappings)}), and never admits a Workload whose claim names a DeviceClass "
                 f"the mappings lack. Add these entries to its {'.'.join(dra.KUEUE_MAPPINGS_PATH)}, beside the "
                 "Configuration's other settings:"]
                + [f"  {line}" for line in yamlio.dump(fragment).splitlines()]
                + [f"  Kueue reads its Configuration only at startup: after changing it, {dra.KUEUE_RESTART}."])
    if scheduling.scheduler is Scheduler.VOLCANO:
        return [f"Devices claimed through DRA ({devices}): Volcano's queues count what pods request (cpu, memory, "
                "extended resources), and a claim is none of it (volcano-sh/volcano #4400), so the queues above hold "
                "none of these devices and do not limit them, nor does a PodGroup's minResources (summed from the "
                "pods' requests). Volcano's scheduler allocates claims with its "
                f"{dra.VOLCANO_DRA_FEATURE_GATE} feature gate on (v1.12 or later); its capacity plugin (v1.15) can "
                f"limit them per DeviceClass in a queue (`{dra.VOLCANO_DRA_QUOTA_PREFIX}<class>`), which this chart "
                "does not write."]
    return [f"Devices claimed through DRA ({devices}): a PodGroup's minResources, which mpi-operator sums from the "
            "pods' requests, hold none of them (a claim is no request), so coscheduling's check of the gang against "
            "the nodes' free resources does not count them; a gang short of them passes that check, and those of its "
            "pods that get their devices wait at Permit for the rest, up to the schedule timeout."]


def _pods_ready_notes(cluster: Cluster, jobs: tuple[Job, ...]) -> list[str]:
    """kueue: the least `waitForPodsReady.timeout` that lets every job of the cluster run on a first pull of its
    image (model/pods_ready.py), as the Configuration snippet to set."""
    scheduling = cluster.scheduling
    if scheduling.scheduler is not Scheduler.KUEUE or not jobs:
        return []
    longest = max(jobs, key=lambda job: job.pods_ready_seconds)
    seconds = longest.pods_ready_seconds
    said = scheduling.pods_ready_timeout
    return [f"Kueue's waitForPodsReady (in Kueue's Configuration, not in this chart): the longest a job here needs for "
            f"every pod to be ready is {seconds} s ({longest.name}, {longest.worker_count} workers), on "
            f"{scheduling.image_pull.words()}; a shorter timeout evicts it before it runs, again after each requeue"
            + (f" (the cluster profile says {said} s)" if said is not None else "") + ". Set at least:",
            "  waitForPodsReady:",
            f"    timeout: {timeout_text(seconds)}",
            "  (Configuration config.kueue.x-k8s.io/v1beta1, Kueue v0.9-v0.14: also enable: true.)"]
