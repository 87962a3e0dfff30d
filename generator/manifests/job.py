"""A job chart's objects: the hostfile ConfigMap and the job object of the job's backend, and the pod
specs of what holds its pods."""

from __future__ import annotations

from typing import Any

from mpigen.manifests.chart_refs import infra_chart_ref
from mpigen.manifests.devices import build_compute_domain, build_device_claim_template
from mpigen.manifests.hostfile import build_hostfile_configmap
from mpigen.manifests.mpijob import mpijob_object, workers_variable
from mpigen.manifests.run_name import named_spec
from mpigen.manifests.trainjob import training_runtime_object, trainjob_object
from mpigen.manifests.volcano_job import volcano_job_object
from mpigen.model import Backend, Job
from mpigen.objects import chartfiles
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest, Variable, plain
from mpigen.vocabulary import mpi_operator, trainer, volcano_job


def build_job(job: Job, chart: ChartRef, worker_count: int | None = None) -> list[Manifest]:
    """The job's objects (see `build_marked_job`), plain."""
    return [Manifest(m.template, plain(m.obj)) for m in build_marked_job(job, chart, workers_variable(job, worker_count))]


def build_marked_job(job: Job, chart: ChartRef, workers: Variable | None = None) -> list[Manifest]:
    """The hostfile ConfigMap, the devices' ResourceClaimTemplate and ComputeDomain under DRA, and the job object (an
    MPIJob, a Volcano Job or a TrainJob) of `job`, the values a chart value sets marked as Variables."""
    workers = workers or workers_variable(job)
    name, spec = named_spec(job, workers)
    build = {Backend.MPIJOB: mpijob_object, Backend.VOLCANO_JOB: volcano_job_object,
             Backend.TRAINJOB: trainjob_object}[job.backend]
    manifests = [Manifest(chartfiles.HOSTFILE_TEMPLATE, build_hostfile_configmap(job, chart, name, workers.plain))]
    if job.devices is not None and job.devices.pairs:
        manifests.append(Manifest(chartfiles.DEVICE_CLAIM_TEMPLATE, build_device_claim_template(job, chart, name)))
    if job.devices is not None and job.devices.channel:
        manifests.append(Manifest(chartfiles.COMPUTE_DOMAIN_TEMPLATE, build_compute_domain(job, chart, name)))
    manifests.append(Manifest(chartfiles.JOB_TEMPLATES[job.backend.value], build(job, chart, name, spec)))
    return manifests


def job_object(manifests: list[Manifest]) -> Manifest:
    """The job object among a job chart's manifests."""
    return next(m for m in manifests if m.template in chartfiles.JOB_TEMPLATES.values())


def pods_object(job: Job, manifests: list[Manifest]) -> dict[str, Any]:
    """The object that holds the job's pod templates, plain: its job object, or under a TrainJob the
    TrainingRuntime the infra chart carries for it."""
    obj = plain(job_object(manifests).obj)
    if job.backend is Backend.TRAINJOB:
        return training_runtime_object(job, infra_chart_ref(job.cluster), obj["metadata"]["name"])
    return obj


def pod_specs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod specs of an object mpigen built (plain): each replica's of an MPIJob, each task's of a Volcano
    Job, each replicated job's of a TrainingRuntime."""
    if obj["kind"] == volcano_job.KIND and obj["apiVersion"] == volcano_job.API_VERSION:
        return [task["template"]["spec"] for task in obj["spec"][volcano_job.TASKS]]
    if obj["kind"] == trainer.RUNTIME_KIND and obj["apiVersion"] == trainer.API_VERSION:
        return [rjob["template"]["spec"]["template"]["spec"]
                for rjob in obj["spec"]["template"]["spec"][trainer.REPLICATED_JOBS]]
    return [replica["template"]["spec"] for replica in obj["spec"][mpi_operator.SpecField.MPI_REPLICA_SPECS].values()]
