"""GitOps rules: settings only one of the tools reads, a repository named twice (a Flux `sourceRef` beside what
its GitRepository holds) or not at all, a values folder inside the charts folder, jobs that GitOps would re-run or
that take the infra chart's name, and Argo CD Application names that two clusters would share."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import Backend, GitOpsTool, defaults, derive, names
from mpigen.support.diagnostics import Diagnostic, Severity, raises
from mpigen.support.profile_rules import GITOPS
from mpigen.validate.index import Index
from mpigen.vocabulary.gitops import APPLICATION, HELM_RELEASE

GITOPS_TOOLS = {GitOpsTool.ARGOCD.value: "Argo CD", GitOpsTool.FLUX.value: "Flux"}
GITOPS_OBJECTS = {GitOpsTool.ARGOCD.value: APPLICATION, GitOpsTool.FLUX.value: HELM_RELEASE}
ARGOCD_ONLY = {"destination": "Flux syncs the cluster it runs in", "project": "Flux has no projects",
               "applications": "Flux has no ApplicationSets"}
FLUX_ONLY = {"sourceRef": "Argo CD reads the repository `repoURL` names",
             "secretRef": "Argo CD finds a private repository's credentials by its URL, in a repository or repo-creds "
                          "Secret created outside git (`argocd repocreds add`)"}
SOURCE_HOLDS = {"repoURL": "its URL", "revision": "its branch", "secretRef": "its credentials"}
"""What an existing Flux GitRepository (`sourceRef`) already says, so the profile must not say it again."""


@raises(GITOPS)
def check_cluster_gitops(document: ProfileFile, gitops: dict[str, Any] | None) -> list[Diagnostic]:
    """Settings of the other tool, a repository named twice (`sourceRef` and `repoURL`) or not at all."""
    if gitops is None:
        return []
    argocd = gitops["tool"] == GitOpsTool.ARGOCD.value
    found = [Diagnostic(document.location("gitops", key, at_key=True), f"`gitops.{key}` is for Flux only; {why}",
                        "remove it") for key, why in FLUX_ONLY.items() if argocd and key in gitops]
    found += [Diagnostic(document.location("gitops", key, at_key=True), f"`gitops.{key}` is for Argo CD only; {why}",
                         "remove it") for key, why in ARGOCD_ONLY.items() if not argocd and key in gitops]
    source = gitops.get("sourceRef")
    if source is not None and not argocd:
        named = f"{source.get('namespace', derive.gitops_namespace(gitops))}/{source['name']}"
        found += [Diagnostic(document.location("gitops", key, at_key=True),
                             f"`gitops.{key}` has no effect with `gitops.sourceRef`: the GitRepository {named} holds "
                             f"{what}", f"remove `{key}` (set it on that GitRepository), or remove `sourceRef` to have "
                             f"mpigen write a GitRepository of its own") for key, what in SOURCE_HOLDS.items()
                  if key in gitops]
    values = gitops.get("valuesPath")
    charts = gitops.get("path", defaults.GITOPS["path"])
    if values is not None and (values == charts or values.startswith(f"{charts}/")):
        found.append(Diagnostic(document.location("gitops", "valuesPath"),
                                f"`gitops.valuesPath` '{values}' is inside the charts folder '{charts}', which render "
                                f"writes and prunes", "put the values files in a folder of their own beside it "
                                "(e.g. `environments/<cluster>`)"))
    if "repoURL" not in gitops and (argocd or source is None):
        found.append(Diagnostic(document.location("gitops", at_key=True), "`gitops` names no git repository",
                                "add `repoURL:` (the repository holding the charts folder)" + (
                                    "" if argocd else ", or `sourceRef:` naming an existing GitRepository "
                                                      "(`name: flux-system`, as `flux bootstrap` creates)")))
    return found


@raises(GITOPS)
def check_gitops_job(document: ProfileFile, job: dict[str, Any], cluster: dict[str, Any]) -> list[Diagnostic]:
    """Under GitOps a job's MPIJob is re-created from git whenever it is missing; and its Application or
    HelmRelease must not take the infra chart's name."""
    found: list[Diagnostic] = []
    gitops = cluster.get("gitops")
    ttl = job.get("runPolicy", {}).get("ttlSecondsAfterFinished")
    allowed = job.get("allowRerunAfterTtl", False)
    if gitops is not None:
        tool, kind = GITOPS_TOOLS[gitops["tool"]], GITOPS_OBJECTS[gitops["tool"]]
        # A TrainJob's TTL is its JobSet's: Trainer deletes the JobSet, keeps the finished TrainJob and never
        # builds its JobSet again, so the GitOps tool finds nothing missing.
        if ttl is not None and not allowed and derive.backend_of(job, cluster) != Backend.TRAINJOB.value:
            found.append(Diagnostic(
                document.location("runPolicy", "ttlSecondsAfterFinished"),
                f"runPolicy.ttlSecondsAfterFinished deletes the MPIJob {ttl} s after it finishes, and {tool}, which "
                f"syncs cluster '{cluster['name']}', re-creates it from git: the job runs again",
                "remove ttlSecondsAfterFinished and delete the job profile once the job is done (render prunes its "
                f"chart and {tool} deletes the MPIJob), or set `runPolicy.suspend: true` to keep it in git without "
                "running it; if running it again is intended, set `allowRerunAfterTtl: true`"))
        infra = names.infra_chart_name(cluster["name"])
        if job["name"] == "infra":
            found.append(Diagnostic(document.location("name"), f"job name 'infra' names its {kind} "
                                    f"'{names.gitops_job_name(cluster['name'], 'infra')}', the name of the infra chart's "
                                    f"{kind} on cluster '{cluster['name']}'", "rename the job"))
        elif job["name"] == infra:
            found.append(Diagnostic(document.location("name"), f"job name '{infra}' is the Helm release name of "
                                    f"the infra chart of cluster '{cluster['name']}'", "rename the job"))
    if allowed and (gitops is None or ttl is None):
        reason = (f"cluster '{cluster['name']}' has no `gitops` block" if gitops is None
                  else "the job has no runPolicy.ttlSecondsAfterFinished")
        found.append(Diagnostic(document.location("allowRerunAfterTtl"), f"`allowRerunAfterTtl` has no effect: {reason}",
                                "remove it", Severity.WARNING))
    return found


@raises(GITOPS)
def check_argocd_application_names(index: Index) -> list[Diagnostic]:
    """One Argo CD may sync many clusters, with every Application in one namespace: cluster `a`'s job `b-x`
    and cluster `a-b`'s job `x` would both be Application `a-b-x`, and two clusters would fight over it."""
    found: list[Diagnostic] = []
    claimed: dict[tuple[str, str], tuple[ProfileFile, str]] = {}

    def claim(document: ProfileFile, namespace: str, name: str, what: str) -> None:
        key = (namespace, name)
        if key in claimed:
            other, other_what = claimed[key]
            found.append(Diagnostic(document.location("name"), f"{what} and {other_what} are both Argo CD Application "
                                    f"'{name}' in namespace '{namespace}'",
                                    f"the other is at {other.location('name')}; rename one"))
        else:
            claimed[key] = (document, what)

    argocd = {name: doc for name, doc in index.clusters.items()
              if (doc.data.get("gitops") or {}).get("tool") == GitOpsTool.ARGOCD.value}
    for name, document in argocd.items():
        namespace = derive.gitops_namespace(document.data["gitops"])
        claim(document, namespace, names.gitops_root_name(name), f"the root of cluster '{name}'")
        claim(document, namespace, names.gitops_infra_name(name), f"the infra chart of cluster '{name}'")
    # Before the jobs, so that a job taking an acceptance job's Application is the one told to change: the acceptance
    # jobs' names are fixed. A job of the cluster's own taking one is reported by check_acceptance.
    acceptance = set()
    for name, document in argocd.items():
        namespace = derive.gitops_namespace(document.data["gitops"])
        for derived, _ in index.acceptance_jobs(name):
            job = derived.data["name"]
            if (name, job) not in acceptance:  # twice in one cluster: reported by check_acceptance
                acceptance.add((name, job))
                claim(derived, namespace, names.gitops_job_name(name, job),
                      f"acceptance job '{job}' of cluster '{name}'")
    for document in index.jobs:
        cluster = argocd.get(document.data["cluster"])
        if cluster is not None and document.data["name"] != "infra" and (  # reported by check_gitops_job
                (document.data["cluster"], document.data["name"]) not in acceptance):
            namespace = derive.gitops_namespace(cluster.data["gitops"])
            job, cluster_name = document.data["name"], document.data["cluster"]
            claim(document, namespace, names.gitops_job_name(cluster_name, job),
                  f"job '{job}' of cluster '{cluster_name}'")
    return found
