"""Argo CD's and Flux's APIs as mpigen writes and reads them: the kinds that deliver the charts, where the tools run,
and the annotations Argo CD reads from the objects a chart renders.

Sources: tests/upstream/gitops/ (Argo CD's Application and ApplicationSet CRDs; Flux's GitRepository, Kustomization and
HelmRelease CRDs) and Argo CD's documentation of sync options, sync waves, the resources finalizer,
`resource.customizations.health.<group>_<kind>` in argocd-cm and declarative repository credentials.
"""

from __future__ import annotations

# --- Argo CD -------------------------------------------------------------------------------------
ARGOCD_GROUP = "argoproj.io"
ARGOCD_API_VERSION = f"{ARGOCD_GROUP}/v1alpha1"
APPLICATION = "Application"
APPLICATION_SET = "ApplicationSet"
ARGOCD_NAMESPACE = "argocd"
"""Where Argo CD is installed, and reads its Applications, unless told otherwise."""
IN_CLUSTER = "https://kubernetes.default.svc"
"""An Application's destination server for the cluster Argo CD runs in."""

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
# Argo CD reads these from the objects a chart renders; Helm and Flux ignore them. Charts carry them whether
# or not their cluster profile names a GitOps tool: a team may point Argo CD at the charts itself.
ARGOCD_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
# A custom resource whose CRD may not be installed yet (a new cluster): without it Argo CD's dry run fails
# the whole sync with "the server could not find the requested resource".
SKIP_DRY_RUN_ON_MISSING_RESOURCE = "SkipDryRunOnMissingResource=true"
# Argo CD's own `helm.sh/resource-policy: keep`: never prune or delete it (a namespace holds PVCs and jobs).
KEEP_IN_ARGOCD = "Prune=false,Delete=false"
# Deleting an Application that carries it deletes what it deployed (a child Application whose job profile was
# removed, so the root prunes it).
RESOURCES_FINALIZER = "resources-finalizer.argocd.argoproj.io"
# Argo CD reads a private repository's credentials from a Secret in its namespace carrying this label: `repository`
# (one repository, by its exact URL) or `repo-creds` (a credential template for every URL its `url` prefixes).
SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
REPO_CREDS = "repo-creds"


def argocd_health_key(group: str, kind: str) -> str:
    """The argocd-cm key Argo CD reads a kind's Lua health check from."""
    return f"resource.customizations.health.{group}_{kind}"


# --- Flux ----------------------------------------------------------------------------------------
FLUX_SOURCE_API_VERSION = "source.toolkit.fluxcd.io/v1"
FLUX_KUSTOMIZE_API_VERSION = "kustomize.toolkit.fluxcd.io/v1"
FLUX_HELM_API_VERSION = "helm.toolkit.fluxcd.io/v2"
GIT_REPOSITORY = "GitRepository"
KUSTOMIZATION = "Kustomization"
HELM_RELEASE = "HelmRelease"
FLUX_NAMESPACE = "flux-system"
"""Where Flux is installed (`flux bootstrap`, `flux install`) unless told otherwise."""
