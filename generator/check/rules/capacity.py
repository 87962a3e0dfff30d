"""The extended resources (GPUs, VFs) a worker requests fit one node of the pool its chart targets:
otherwise the workers never schedule, and nothing says why until someone reads the pending pods."""

from __future__ import annotations

from mpigen.check.rules.pods import (
    is_extended_resource,
    is_training_runtime,
    is_trainjob,
    is_volcano_job,
    pod_requests,
    pod_templates,
)
from mpigen.check.rules.reading import metadata_name, path_of
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.kubernetes import whole_quantity

RULE_CAPACITY = "capacity"


def check_capacity(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    """The extended resources of one worker (of an MPIJob, a Volcano Job, or the TrainingRuntime of a TrainJob)
    fit one node of its chart's pool. A TrainingRuntime is in the infra chart, which targets no pool: it is judged
    by the pool of the job chart whose TrainJob runs on it (same namespace and name)."""
    findings: list[Finding] = []
    trainjobs: dict[tuple[str, str], list[RenderedObject]] = {}
    for trainjob in documents:
        if is_trainjob(trainjob) and trainjob.chart:
            trainjobs.setdefault((trainjob.namespace, metadata_name(trainjob)), []).append(trainjob)
    for document in documents:
        chart = _trainjob_chart(document, trainjobs, context) if is_training_runtime(document) else document.chart
        shape = context.node_shapes.get(chart) if chart else None
        if shape is None or not (document.kind == mpi_operator.KIND or is_volcano_job(document)
                                 or is_training_runtime(document)):
            continue
        offered = shape.resources if isinstance(shape.resources, dict) else {}
        node = _node_words(shape.cluster, shape.pool)
        for template in pod_templates(document):
            if not template.is_worker:
                continue
            for resource, asked in sorted(pod_requests(template).items()):
                if not is_extended_resource(resource):
                    continue
                where = path_of(asked.paths[0]) if len(asked.paths) == 1 else \
                    path_of((*template.path, "spec", "containers"))
                if resource not in offered:
                    known = ", ".join(sorted(str(r) for r in offered)) or "no extended resources"
                    findings.append(finding(document, where, (
                        f"the worker pod requests {resource}, which {node} does not offer (it offers: {known}); "
                        "the workers never schedule"), RULE_CAPACITY))
                    continue
                capacity = whole_quantity(offered[resource])
                if capacity is not None and asked.total is not None and asked.total > capacity:
                    who = ("worker container requests" if len(asked.paths) == 1
                           else "worker pod's containers together request")
                    findings.append(finding(document, where, (
                        f"the {who} {asked.total} {resource}, but {node} has {capacity}; the workers never schedule"),
                        RULE_CAPACITY))
    return findings


def _trainjob_chart(runtime: RenderedObject, trainjobs: dict[tuple[str, str], list[RenderedObject]],
                    context: CheckContext) -> str:
    """The chart of the TrainJob of the runtime's namespace and name in its cluster (of that very cluster first);
    `trainjobs`: the charts' TrainJobs by namespace and name."""
    named = trainjobs.get((runtime.namespace, metadata_name(runtime)), [])
    return next((d.chart for d in context.seen_by(runtime, named)), "")


def _node_words(cluster: str, pool: str) -> str:
    if pool and cluster:
        return f"a node of pool {pool} (cluster {cluster})"
    if pool:
        return f"a node of pool {pool}"
    return "a node of the chart's pool"
