"""A job's chart: its values (image, workers, suspend) and the hostfile helpers that follow `workers`."""

from __future__ import annotations

import json

from mpigen import __version__
from mpigen.manifests import build_marked_job, job_chart_ref, job_object
from mpigen.manifests.hostfile import job_host
from mpigen.model import Cluster, Job, NodePool
from mpigen.model.hostfile import hostfile_line, rankfile_line
from mpigen.objects import chartfiles
from mpigen.objects.chartfiles import action, helpers_tpl, include, template_path, trimmed_action
from mpigen.objects.labels import ChartRef
from mpigen.objects.manifest import Manifest, Variable, marked_digest, plain, variables
from mpigen.package import common
from mpigen.package.chart import Chart
from mpigen.package.notes import job_notes, kueue, naming_note, suspend_note, trainjob, volcano, workers_note
from mpigen.package.template import Hole
from mpigen.providers import PROVIDERS
from mpigen.vocabulary import dra


def node_resources(pool: NodePool, cluster: Cluster) -> dict[str, int | None]:
    """Extended resources one node of the pool offers: its GPUs, and one VF pool per rail it carries
    (how many VFs is not in the profiles: None). Devices a DRA driver hands out are claimed, not offered so: the GPUs
    under `dra`, the rails' NICs under a provider that claims them."""
    offered: dict[str, int | None] = {}
    if pool.hardware.gpu and cluster.dra is None:
        offered[pool.hardware.gpu.resource] = pool.hardware.gpu.count
    if not PROVIDERS[cluster.network.provider].dra_devices:
        for rail in cluster.rails_of(pool):
            offered[rail.resource] = None
    return dict(sorted(offered.items()))


def device_classes(job: Job) -> dict[str, str]:
    """The DeviceClasses a DRA job's claims name, which its cluster's profile says the cluster has: `mpigen check`
    cannot see them in the charts (the drivers install them), so the chart says so."""
    devices = job.devices
    if devices is None:
        return {}
    named = {devices.gpu_class, *([devices.nic_class] if devices.nic_class else []),
             *([dra.CHANNEL_DEVICE_CLASS] if devices.channel else [])}
    return {chartfiles.DEVICE_CLASSES: json.dumps(sorted(named))}


def hostfile_printf(job: Job, mpijob: str) -> str:
    """Go `printf` format of one hostfile line of MPIJob `mpijob`, `%d` standing for the worker index."""
    return hostfile_line(job_host(job, mpijob, "%d"), job.slots_per_worker,
                         job.mpi_implementation)


def rankfile_printf(job: Job, mpijob: str, socket: int) -> str:
    """Go `printf` format of a rankfile line binding to `socket`: the rank, then the worker index."""
    return rankfile_line("%d", job_host(job, mpijob, "%d"), socket, job.placement.cores_per_socket)


def _job_helpers(job: Job, ref: ChartRef, mpijob: str) -> str:
    """The hostfile (and rankfile) lines as named templates, so `--set workers=N` regenerates them."""
    text = chartfiles.HOSTFILE_DEFINE_FORM.format(name=ref.name, format=json.dumps(hostfile_printf(job, mpijob)))
    if job.placement.rankfile:
        slots = job.slots_per_worker
        text += chartfiles.RANKFILE_DEFINE_FORM.format(name=ref.name, slots=slots, lines="".join(
            chartfiles.RANKFILE_LINE_FORM.format(format=json.dumps(rankfile_printf(job, mpijob, socket)), slots=slots,
                                                 local=local)
            for local, socket in enumerate(job.placement.rank_sockets)))
    return text


def _variable_hole(variable: Variable) -> Hole:
    if variable.plus is not None:
        assert variable.name == chartfiles.WORKERS, f"no action for {variable}"
        return Hole(action(chartfiles.WORKERS_PLUS_FORM.format(plus=variable.plus)))
    if variable.times is None:
        return Hole(action(chartfiles.VALUE_EXPRESSIONS[variable.name]))
    assert variable.name == chartfiles.WORKERS, f"no action for {variable}"
    return Hole(action(chartfiles.RANK_COUNT_FORM.format(slots=variable.times)))


def _job_holes(ref: ChartRef, manifest: Manifest) -> dict[tuple[str | int, ...], Hole]:
    """The holes of a job chart's object: the labels, the hostfile helpers, and each value the builder marked."""
    holes: dict[tuple[str | int, ...], Hole] = {("metadata", "labels"): common.labels_hole(ref, manifest)}
    if manifest.obj["kind"] == "ConfigMap":
        for key in manifest.obj["data"]:
            holes[("data", key)] = Hole("|" + trimmed_action(include(ref.name, key, "{indent}", trim=True)), block=True)
    holes.update((path, _variable_hole(variable)) for path, variable in variables(manifest.obj))
    return holes


def package_job_chart(job: Job, marked: list[Manifest] | None = None, held_back: Manifest | None = None,
                      run_release: str = __version__) -> Chart:
    """`marked`: the job's objects as `build_marked_job` gives them, where they are built already. `held_back` and
    `run_release`: where the job object keeps the spec its run started with (generator/continuity/committed.py), what this
    release compiles instead and the release that compiled the spec kept."""
    ref = job_chart_ref(job)
    marked = marked if marked is not None else build_marked_job(job, ref)
    job_manifest = job_object(marked)
    mpijob = job_manifest.obj["metadata"]["name"]
    files: dict[str, str] = {
        chartfiles.CHART_YAML: common.chart_yaml(ref, f"MPI job {job.name} on cluster {job.cluster.name}, node pool "
                                  f"{job.pool.name}", job.source, {
                                      **common.cluster_annotations(job.cluster), chartfiles.POOL: job.pool.name,
                                      chartfiles.NODE_RESOURCES: json.dumps(node_resources(job.pool, job.cluster)),
                                      **device_classes(job),
                                      chartfiles.MPIJOB: mpijob, chartfiles.NAMING: job.naming.value,
                                      chartfiles.RUN_IDENTITY: job.identity, chartfiles.RUN_RELEASE: run_release,
                                      chartfiles.RUN_SPEC: marked_digest(job_manifest.obj["spec"])}),
        chartfiles.VALUES_YAML: common.values_yaml(
            [f"Values of job {job.name} (namespace {job.namespace}, cluster {job.cluster.name}).",
             common.GENERATED_NOTE.format(source=job.source) + " `--set` is for one-off renders.",
             naming_note(job, mpijob)],
            [
                # Under a TrainJob the image is in the TrainingRuntime of the infra chart, which no value here reaches.
                *([] if trainjob(job) else [(chartfiles.IMAGE, job.image, [
                    "Container image of the launcher and every worker.", f"From {job.chart_origin('image')}."])]),
                (chartfiles.WORKERS, job.worker_count, [
                    workers_note(job),
                    f"From {job.chart_origin('workers')}. At most {job.max_workers}: {job.chart_origin('max_workers')}."]),
                *([] if volcano(job) else [(chartfiles.SUSPEND, job.run_policy.suspend, [
                    suspend_note(job), f"From {job.chart_origin('suspend')}."])]),
            ]),
        chartfiles.VALUES_SCHEMA: common.values_schema(f"Values of MPI job {job.name}", {
            **({} if trainjob(job) else {chartfiles.IMAGE: {
                "type": "string", "minLength": 1, "pattern": "^[^\\s]+$",
                "description": "Container image of the launcher and every worker."}}),
            chartfiles.WORKERS: {"type": "integer", "minimum": 1, "maximum": job.max_workers,
                                 "description": _workers_description(job), **_slices_schema(job)},
            **({} if volcano(job) else {chartfiles.SUSPEND: {
                "type": "boolean", "const": True, "description": f"Create the {job.backend.noun} suspended: Kueue "
                "unsuspends it when it admits it; false would start it without admission."}
                if kueue(job) else {"type": "boolean", "description": f"Create the {job.backend.noun} suspended."}}),
        }),
        template_path(chartfiles.HELPERS): helpers_tpl(ref, _job_helpers(job, ref, mpijob)),
        template_path(chartfiles.NOTES): job_notes(job, mpijob),
    }
    for template, group in common.by_template(marked).items():
        files[template_path(template)] = common.template_file(group, lambda m: _job_holes(ref, m), job.source)
    return Chart(job.chart_dir, ref, tuple(sorted(files.items())),
                 tuple(Manifest(m.template, plain(m.obj)) for m in marked), source=job.source, held_back=held_back)


def _workers_description(job: Job) -> str:
    """The `workers` maximum and what sets it: the pool, else the job's queue or topology domain; and its slices."""
    most = f"at most {job.max_workers} fit pool {job.pool.name}" if job.queue_limit is None else \
        f"at most {job.max_workers}: {job.queue_limit}"
    slices = job.scheduling.slices
    cut = f", in slices of {slices.size} (one {slices.domain.level} each)" if slices is not None else ""
    return f"Worker pods; {most}{cut}."


def _slices_schema(job: Job) -> dict[str, object]:
    """Kueue cuts the workers into slices of the size their annotation says: any other count is never admitted."""
    slices = job.scheduling.slices
    return {} if slices is None else {"multipleOf": slices.size}
