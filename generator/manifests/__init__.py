"""Stage 4: the Kubernetes objects of each chart, as plain dicts, from the model alone.

Each object comes with the template file it lives in, so the packager and mpigen's own renderer
agree on what a chart holds.
"""

from __future__ import annotations

from mpigen.manifests.chart_refs import infra_chart_ref, job_chart_ref
from mpigen.manifests.infra import build_infra
from mpigen.manifests.job import build_job, build_marked_job, job_object, pod_specs, pods_object
from mpigen.manifests.pod_security import RaisedLevel, job_pod_security, namespace_pod_security, raised_pod_security

__all__ = ["RaisedLevel", "build_infra", "build_job", "build_marked_job", "infra_chart_ref", "job_chart_ref", "job_object",
           "job_pod_security", "namespace_pod_security", "pod_specs", "pods_object", "raised_pod_security"]
