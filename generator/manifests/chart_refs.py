"""The chart each object belongs to: a job's chart, and its cluster's infra chart."""

from __future__ import annotations

from mpigen.model import Cluster, Job, names
from mpigen.objects.labels import ChartRef


def job_chart_ref(job: Job, release: str | None = None) -> ChartRef:
    return ChartRef(name=job.name, release=release or job.name)


def infra_chart_ref(cluster: Cluster, release: str | None = None) -> ChartRef:
    name = names.infra_chart_name(cluster.name)
    return ChartRef(name=name, release=release or name)
