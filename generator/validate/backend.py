"""A job's backend (`backend`, else its cluster's `jobBackend`): the controller it needs is there, and the job asks
for nothing that controller cannot do. Everything else a profile says means the same under every backend."""

from __future__ import annotations

import json
from typing import Any

from generator import admission, defaults
from generator.derive import backend_of
from generator.diagnostics import Diagnostic
from generator.load import ProfileFile
from generator.model import Backend

# runPolicy settings a Volcano Job has no field for: (key, value it may keep, why).
_VOLCANO_UNSUPPORTED = (
    ("activeDeadlineSeconds", None, "a Volcano Job has no deadline of its own (a pod's activeDeadlineSeconds would "
     "stop each pod on its own clock, not the job)"),
    ("suspend", False, "a Volcano Job has no suspend field (Volcano suspends a job through a Command object, which no "
     "GitOps tool should create)"),
    ("cleanPodPolicy", defaults.CLEAN_POD_POLICY, "a Volcano Job ends as the launcher task completes "
     "(TaskCompleted -> CompleteJob), which kills the workers that still run: `Running`, and nothing else"),
)


def check_backend(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    backend = backend_of(job, cluster)
    if backend == Backend.MPIJOB.value:
        return []
    chosen = f"backend {backend}" + ("" if "backend" in job else f" (cluster '{cluster['name']}'s jobBackend)")
    where = document.location("backend") if "backend" in job else document.location("cluster")
    found = []
    if admission.scheduler_of(cluster) != admission.VOLCANO:
        found.append(Diagnostic(where, f"{chosen} needs Volcano, but cluster '{cluster['name']}' has "
                                f"scheduling.scheduler {admission.scheduler_of(cluster)}: Volcano's job controller "
                                "and scheduler run the job",
                                "set `scheduling.scheduler: volcano` on the cluster, or choose `backend: mpijob`"))
    if job.get("naming") == "stable":
        found.append(Diagnostic(document.location("naming"), f"naming stable cannot be used under {chosen}: "
                                "Volcano's admission webhook refuses every change to a created Job but its replicas "
                                "and minAvailable, so the GitOps tool could never apply a later edit",
                                "remove it (content-hash naming makes an edited job a new Job), or choose "
                                "`backend: mpijob`"))
    if job.get("runAsUser"):
        found.append(Diagnostic(document.location("runAsUser"), f"runAsUser {job['runAsUser']} cannot be used under "
                                f"{chosen}: Volcano's ssh plugin mounts the job's keys owned by root with mode 0600, "
                                "so sshd and ssh running as another user cannot read them",
                                "run the image as root (no runAsUser), or choose `backend: mpijob`"))
    policy = job.get("runPolicy", {})
    for key, allowed, why in _VOLCANO_UNSUPPORTED:
        if key in policy and policy[key] != allowed:
            found.append(Diagnostic(document.location("runPolicy", key), f"runPolicy.{key} "
                                    f"{json.dumps(policy[key])} cannot be expressed under {chosen}: {why}",
                                    "remove it, or choose `backend: mpijob`"))
    return found

