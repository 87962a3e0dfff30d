"""Helm's own keys, and the labels every object of a Helm chart carries, as Helm's chart conventions name them.

Sources: Helm's chart documentation (Chart.yaml `apiVersion: v2`, the chart format of Helm 3 and 4; the standard
labels `helm.sh/chart` and `app.kubernetes.io/{name,instance,managed-by}`, the last set from `.Release.Service`,
which is "Helm"; `helm.sh/resource-policy: keep`, which leaves an object behind on uninstall) and Kubernetes'
recommended labels (`app.kubernetes.io/*`).
"""

from __future__ import annotations

CHART_API_VERSION = "v2"
"""Chart.yaml's `apiVersion` of a Helm 3 (and 4) chart."""

CHART_LABEL = "helm.sh/chart"
NAME_LABEL = "app.kubernetes.io/name"
INSTANCE_LABEL = "app.kubernetes.io/instance"
"""The release an object belongs to."""
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_HELM = "Helm"
"""`.Release.Service`: the managed-by value of an object Helm installs."""

RESOURCE_POLICY = "helm.sh/resource-policy"
KEEP = "keep"
"""The resource policy that keeps an object when its release is uninstalled or upgraded without it."""

SUPPORTED_MAJORS = (3, 4)
"""The Helm major versions mpigen renders and lints with: those Argo CD and Flux render charts with (Argo CD 3.3 and
3.4 ship Helm 3, 3.5 and Flux's helm-controller Helm 4; docs/facts.md section 5). Helm 2 reads charts otherwise."""
