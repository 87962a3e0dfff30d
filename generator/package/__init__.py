"""Stage 5: Helm chart files for every cluster (infra chart) and every job (job chart).

Follows `helm create`: Chart.yaml (apiVersion v2), values.yaml with a comment on each value,
values.schema.json, templates/_helpers.tpl with the standard labels, templates/NOTES.txt.

A cluster with a GitOps tool also gets `<cluster>/bootstrap/`: plain manifests, not a chart (and, under Argo
CD, the Lua health check of MPIJobs), carried by its infra chart's `bootstrap` so that `output_files` writes
(and prunes) them with the charts.
"""

from __future__ import annotations

from mpigen.package.chart import Chart, output_files
from mpigen.package.fleet import package_fleet
from mpigen.package.infra import package_infra_chart
from mpigen.package.job import package_job_chart
from mpigen.package.limits import HELM_MAX_FILE_BYTES, oversized_files

__all__ = ["HELM_MAX_FILE_BYTES", "Chart", "output_files", "oversized_files", "package_fleet", "package_infra_chart",
           "package_job_chart"]
