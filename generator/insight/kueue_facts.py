"""What `mpigen explain` says of a job under Kueue: the release its cluster runs, the least waitForPodsReady timeout,
the topology level and the size of its domains, the fit and slices, the annotations chosen, and whether the
launcher is placed with the workers."""

from __future__ import annotations

from mpigen.insight.explanation import Fact, Said
from mpigen.insight.facts import Where, fact, said
from mpigen.manifests.scheduling import launcher_annotations, launcher_grouping, worker_annotations
from mpigen.model import Job, Scheduler
from mpigen.vocabulary import mpi_operator


def kueue_facts(job: Job, at: Where, at_cluster: Where) -> list[Fact]:
    """Nothing on a cluster of another scheduler."""
    if job.cluster.scheduling.scheduler is not Scheduler.KUEUE:
        return []
    release = job.cluster.scheduling.kueue_release
    found = [fact("scheduling", "Kueue release", release.name,
                  said(at_cluster("scheduling", "kueueVersion"), "scheduling.kueueVersion",
                       "default: the newest release mpigen knows; the infra chart is written in the API versions it "
                       "serves"))]
    pull = job.cluster.scheduling.image_pull
    timeout = said(at_cluster("scheduling", "waitForPodsReady"), "scheduling.waitForPodsReady",
                   "default: the assumed image and pull rates")
    waits = "then the launcher's pull (it is created once they are ready)" if \
        job.launcher_creation_policy == mpi_operator.WAIT_FOR_WORKERS_READY else "the launcher's pull beside theirs"
    found.append(fact("scheduling", "least waitForPodsReady timeout", f"{job.pods_ready_seconds} s",
                      Said(f"{timeout.text}: {pull.words()} on the workers' nodes, their readiness probe, {waits}",
                           timeout.kind)))
    return found + _topology(job, at, at_cluster)


def _topology(job: Job, at: Where, at_cluster: Where) -> list[Fact]:
    """The level, one domain's size and where it came from, the fit and slices, the annotations chosen, and the
    launcher's place."""
    if (fit := job.scheduling.fit) is None:
        return []
    sized = [(fit.domain, "domain size")] + ([(fit.slices.domain, "slice domain size")] if fit.slices else [])
    grouped, why = launcher_grouping(job)
    launcher = launcher_annotations(job)
    return [fact("scheduling", "topology level", f"{fit.domain.level} ({fit.domain.node_label}), "
                 f"{'required' if fit.required else 'preferred'}", said(at("scheduling", "topology", "level"),
                                                                        "scheduling.topology.level", "")),
            *(fact("scheduling", name, "unknown" if d.nodes is None else f"{d.nodes} node(s) a {d.level}",
                   said(at_cluster("scheduling", "topology", d.index, "domainNodes"), d.said(), d.said()))
              for d, name in sized),
            fact("scheduling", "domain fit", fit.verdict(),
                 f"{fit.workers} workers, {fit.workers_per_node} a node: {fit.nodes_needed} node(s)"),
            fact("scheduling", "worker annotations", "; ".join(f"{k}={v}" for k, v in worker_annotations(job).items()),
                 "Kueue's podset topology annotation on the level's node label; slices where the job is larger than "
                 "one domain of its `sliceLevel` (default: the hardware's NVLink domain)"),
            fact("scheduling", "launcher placement", "with the workers, in their domain" if grouped
                 else "anywhere in its flavor", why),
            *([fact("scheduling", "launcher annotations", "; ".join(f"{k}={v}" for k, v in launcher.items()),
                    "the workers' topology request and their PodSet group: Kueue requires both pod sets of a group "
                    "to ask for the same level")] if launcher else [])]
