"""One Argo CD ApplicationSet instead of one Application per chart (`gitops.applications: applicationset`).

Its git directory generators make an Application of each chart folder that exists in git at the followed
revision, named from the folder as the app of apps names it (`<cluster>-<folder>`). A chart's destination
namespace and Helm release name are not in its path, so the charts are grouped by them: the infra chart, then
the jobs of each namespace, one generator each, whose `values` carry the namespace and the release.

What an ApplicationSet's one template cannot say per chart, and what it says instead:
- Sync waves: the Applications are made by the ApplicationSet controller, not synced by a parent, so a wave
  orders nothing. Argo CD's ordering for ApplicationSets (Progressive Syncs, RollingSync) is behind a
  controller flag and turns automated sync off for every Application it makes, which is what prunes a renamed
  run's old job object and puts back a deleted one. So every Application keeps automated prune and self-heal
  and retries a failed sync: a job synced before its infra chart (its namespace, queue or TrainingRuntime)
  fails and is retried until the infra Application has synced.
- Kueue's fields: a cluster whose jobs Kueue admits ignores, in every Application, the fields Kueue owns of each
  backend its jobs use; the infra chart holds no job object, so for it they match nothing.
"""

from __future__ import annotations

from typing import Any

from mpigen.manifests.gitops import (
    ARGOCD_RUNTIME_RETRY,
    Delivery,
    argocd_helm,
    automated_sync,
    gitops_metadata,
    gitops_of,
    kueue_ignore_differences,
    repo_path,
    repo_url,
)
from mpigen.model import Cluster, names
from mpigen.vocabulary.gitops import APPLICATION_SET, ARGOCD_API_VERSION

GO_TEMPLATE_OPTIONS = ["missingkey=error"]
"""A parameter the template names but a generator does not give fails the ApplicationSet instead of rendering
an empty string into an Application."""
NAMESPACE_VALUE = "namespace"
RELEASE_VALUE = "release"
FOLDER_RELEASE = "{{ .path.basename }}"
"""A job chart's release is its folder's name (the job's), as in the app of apps."""


def _generator(cluster: Cluster, charts: list[Delivery], release: str) -> dict[str, Any]:
    gitops = gitops_of(cluster)
    return {"git": {
        "repoURL": repo_url(gitops),
        "revision": gitops.revision,
        "directories": [{"path": repo_path(gitops, chart.chart_dir)} for chart in charts],
        "values": {NAMESPACE_VALUE: charts[0].namespace, RELEASE_VALUE: release},
    }}


def build_argocd_applicationset(cluster: Cluster, charts: list[Delivery]) -> dict[str, Any]:
    """The infra chart and every job chart of the cluster (`deliveries`, infra first), as one ApplicationSet."""
    gitops = gitops_of(cluster)
    infra, jobs = charts[0], charts[1:]
    generators = [_generator(cluster, [infra], infra.release)]
    for namespace in sorted({job.namespace for job in jobs}):
        generators.append(_generator(cluster, [job for job in jobs if job.namespace == namespace], FOLDER_RELEASE))
    kueue = [job for job in jobs if job.kueue_managed]
    ignored: list[dict[str, Any]] = []
    for job in kueue:
        ignored += [entry for entry in kueue_ignore_differences(job.backend) if entry not in ignored]
    template_name = names.gitops_job_name(cluster.name, FOLDER_RELEASE)
    return {
        "apiVersion": ARGOCD_API_VERSION,
        "kind": APPLICATION_SET,
        "metadata": gitops_metadata(names.gitops_root_name(cluster.name), cluster),
        "spec": {
            "goTemplate": True,
            "goTemplateOptions": GO_TEMPLATE_OPTIONS,
            "generators": generators,
            "template": {
                "metadata": {"name": template_name, "labels": gitops_metadata(template_name, cluster)["labels"]},
                "spec": {
                    "project": gitops.project,
                    "source": {
                        "repoURL": repo_url(gitops),
                        "targetRevision": gitops.revision,
                        "path": "{{ .path.path }}",
                        "helm": argocd_helm(gitops, f"{{{{ .values.{RELEASE_VALUE} }}}}"),
                    },
                    "destination": {"server": gitops.destination, "namespace": f"{{{{ .values.{NAMESPACE_VALUE} }}}}"},
                    **({"ignoreDifferences": ignored} if ignored else {}),
                    "syncPolicy": {**automated_sync(create_namespace=True, respect_ignore_differences=bool(ignored)),
                                   "retry": ARGOCD_RUNTIME_RETRY},
                },
            },
        },
    }
