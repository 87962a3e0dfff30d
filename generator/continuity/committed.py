"""Runs that continue across renders: what the committed job charts say of their runs, and the spec each keeps.

A compiled run is somebody's running job. A render reads the output folder's job charts first
(`read_committed`): a run whose profiles ask the same of it (its identity, generator/resolve/identity.py) keeps
the name the committed chart gives it, and, since no controller applies a spec edit to a run it started, also
the job object's spec it started with (`hold_back`): a new mpigen release, or an edit that only describes the
run, then changes nothing the cluster would have to refuse (Volcano's webhook, Trainer's) or leave half-applied
(mpi-operator's later pods). What this release would compile instead reaches the run's next run, and `mpigen
diff` shows it as held back. Only the job object's metadata (its labels and annotations) follows the profile.

A chart compiled before identities were recorded (mpigen 0.1.0) is adopted when its image and worker count are
the profile's: its run keeps its name and spec, and records its identity from then on.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from mpigen.manifests import build_marked_job, job_chart_ref, job_object
from mpigen.model import CommittedRun, Fleet, Job, Naming, names
from mpigen.objects import chartfiles
from mpigen.objects.manifest import Manifest, Variable, marked_digest, plain, variables
from mpigen.package import Chart, package_job_chart
from mpigen.readback.discover import chart_annotations
from mpigen.readback.documents import load_yaml_file
from mpigen.readback.inputs import MAX_MANIFEST_FILE_BYTES, InputError, read_text
from mpigen.readback.kubeyaml import KubeYAMLError, load_all
from mpigen.readback.own_renderer import Unsupported, go_string, template_actions

LEGACY_RELEASE = "0.1.0"
"""The release of charts that name no `mpigen/run-release`: the only one before it was recorded."""


@dataclass
class Committed:
    """The runs of an output folder's job charts, by chart folder, and what could not be read (warnings)."""

    runs: dict[str, CommittedRun] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read_committed(folder: Path) -> Committed:
    """Every job chart mpigen compiled under `folder/<cluster>/jobs/`. Links are not followed; a chart that cannot
    be read is a warning, and its job's run is named as a new one."""
    found = Committed()
    for cluster in _folders(folder):
        for chart in _folders(cluster / "jobs"):
            key = f"{cluster.name}/jobs/{chart.name}"
            try:
                record = _read_run(chart, key)
            except (InputError, KubeYAMLError, ValueError) as exc:
                found.problems.append(f"{chart}: {getattr(exc, 'message', exc)}; its job's run is named as a new one")
                continue
            if record is not None:
                found.runs[key] = record
    return found


def _folders(folder: Path) -> list[Path]:
    """The plain folders in `folder` (no links, no hidden ones), sorted; none if it is not a plain folder."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    with os.scandir(folder) as entries:
        return sorted(Path(e.path) for e in entries
                      if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))


def _folder_names(folder: Path) -> set[str]:
    """The names in a plain folder (none if it is a link or no folder)."""
    if folder.is_symlink() or not folder.is_dir():
        return set()
    with os.scandir(folder) as entries:
        return {e.name for e in entries}


def _read(path: Path, limit: int = MAX_MANIFEST_FILE_BYTES) -> str:
    if path.is_symlink():
        raise InputError(f"{path.name} is a link, which mpigen never writes")
    return read_text(path, limit)


def _read_run(chart: Path, key: str) -> CommittedRun | None:
    meta = load_yaml_file(chart / chartfiles.CHART_YAML) if not (chart / chartfiles.CHART_YAML).is_symlink() else None
    annotations = chart_annotations(meta) if isinstance(meta, dict) else {}
    if chartfiles.SOURCE not in annotations or chartfiles.MPIJOB not in annotations:
        return None  # not a job chart mpigen compiled
    templates = _folder_names(chart / chartfiles.TEMPLATES) & set(chartfiles.JOB_TEMPLATES.values())
    if len(templates) != 1:
        raise ValueError("holds no job object template, or more than one")
    (template,) = templates
    text = _read(chart / chartfiles.TEMPLATES / template)
    values: dict[str, Any] = {}
    if chartfiles.RUN_IDENTITY not in annotations:  # compiled by 0.1.0: its values say the image and size
        values_path = chart / chartfiles.VALUES_YAML
        found = load_yaml_file(values_path) if values_path.exists() and not values_path.is_symlink() else None
        values = found if isinstance(found, dict) else {}

    workers = values.get(chartfiles.WORKERS)
    image = values.get(chartfiles.IMAGE)
    return CommittedRun(chart=key, name=annotations[chartfiles.MPIJOB], naming=annotations.get(chartfiles.NAMING),
                        identity=annotations.get(chartfiles.RUN_IDENTITY),
                        run_release=annotations.get(chartfiles.RUN_RELEASE),
                        spec_digest=annotations.get(chartfiles.RUN_SPEC), template=template, text=text,
                        image=image if isinstance(image, str) else None,
                        workers=workers if isinstance(workers, int) and not isinstance(workers, bool) else None)


# --- the spec a continuing run keeps -------------------------------------------------------------------------

@dataclass(frozen=True)
class HeldRun:
    """A run that keeps the spec it started with: its chart, and the release that compiled that spec."""

    chart: str
    name: str
    release: str


@dataclass
class Continuity:
    """What `hold_back` did: the charts, the runs holding their spec, and warnings."""

    charts: list[Chart]
    held: list[HeldRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def hold_back(charts: list[Chart], fleet: Fleet) -> Continuity:
    """Each job chart whose run continues a committed one, with the committed spec where this release compiles
    another (the job object's metadata still follows the profile)."""
    by_directory = {chart.directory: index for index, chart in enumerate(charts)}
    result = Continuity(list(charts))
    for job in fleet.jobs:
        record = job.committed
        if record is None or job.naming is not Naming.CONTENT_HASH:
            continue
        index = by_directory.get(names.chart_dir_of_job(job.cluster.name, job.name))
        if index is None:
            continue  # a chart the command did not ask for (`render --manifests --job`)
        if dict(charts[index].files).get(chartfiles.template_path(record.template)) == record.text:
            continue  # the very spec it started with
        try:
            held = _held_chart(job, record)
        except (Unsupported, KubeYAMLError, ValueError) as exc:
            result.problems.append(f"{record.chart}: cannot keep the spec run {record.name} started with "
                                   f"({getattr(exc, 'message', exc)}): it gets this release's spec, which a started "
                                   "run never takes; raise the job's `rerun` to start it anew")
            continue
        if held is not None and record.identity is None:
            result.problems.append(f"{record.chart}: run {record.name} is adopted from a chart of mpigen "
                                   f"{LEGACY_RELEASE}, whose profile this release cannot compare, and keeps its spec "
                                   "(`mpigen diff` shows what differs): if its profile changed since, raise the job's "
                                   "`rerun` to run the change")
        if held is not None:
            result.charts[index] = held
            result.held.append(HeldRun(record.chart, record.name, record.run_release or LEGACY_RELEASE))
    return result


def _held_chart(job: Job, record: CommittedRun) -> Chart | None:
    """The job's chart with the committed spec, or None where it equals this release's."""
    ref = job_chart_ref(job)
    marked = build_marked_job(job, ref)
    current = job_object(marked)
    committed = committed_spec(record.text)
    if record.identity is not None and record.spec_digest != marked_digest(committed):  # 0.1.0 recorded neither
        raise ValueError("it was edited by hand since mpigen wrote it")
    values = {variable.name: variable.value for _, variable in variables(current.obj)}
    spec = _with_values(committed, values)
    hostfile = next((m.obj for m in marked if m.obj.get("kind") == "ConfigMap"), None)
    if hostfile is not None:
        _check_mounts(spec, hostfile["metadata"]["name"], set(hostfile.get("data", {})))
    held = Manifest(current.template, {**current.obj, "spec": spec})
    if plain(held.obj) == plain(current.obj):
        return None
    marked = [held if manifest is current else manifest for manifest in marked]
    return package_job_chart(job, marked, held_back=Manifest(current.template, plain(current.obj)),
                             run_release=record.run_release or LEGACY_RELEASE)


_MUL = re.compile(chartfiles.form_pattern(chartfiles.RANK_COUNT_FORM, slots="[0-9]{1,6}"))
_ADD = re.compile(chartfiles.form_pattern(chartfiles.WORKERS_PLUS_FORM, plus="[0-9]{1,6}"))
_VALUES = {expression: name for name, expression in chartfiles.VALUE_EXPRESSIONS.items()}
_MARKERS = re.compile(r"mpigenheld([0-9]+)x")


def committed_spec(text: str) -> dict[str, Any]:
    """The `spec` of a job object template mpigen wrote, each value action as a Variable (with no value). Refuses
    (Unsupported, ValueError) any other template action: only text mpigen writes is carried over."""
    lines = text.split("\n")
    if "spec:" not in lines:
        raise ValueError("its job object has no `spec:` line")
    spec_text = "\n".join(lines[lines.index("spec:"):])
    taken = {int(n) for n in _MARKERS.findall(spec_text) if len(n) < 8}
    base = f"mpigenheld{next(n for n in range(len(taken) + 1) if n not in taken)}x"
    holes: dict[str, Variable] = {}
    out: list[str] = []
    position = 0
    for start, end, trim_before, expression, trim_after in template_actions(spec_text):
        out.append(spec_text[position:start])
        position = end
        literal = go_string(expression)
        if literal is not None and not trim_before and not trim_after:
            out.append(literal)
            continue
        variable = _variable(expression)
        if variable is None or trim_before or trim_after:
            raise Unsupported(f"template action `{{{{ {expression[:80]} }}}}` is not one mpigen writes in a spec")
        marker = f"{base}{len(holes)}z"
        holes[marker] = variable
        out.append(marker)
    out.append(spec_text[position:])
    try:
        documents = load_all("".join(out))
    except YAMLError as exc:  # a merge conflict, a hand edit: not what mpigen wrote
        raise ValueError(f"its job object template is not valid YAML ({' '.join(str(exc).split())[:200]})") from exc
    if len(documents) != 1 or not isinstance(documents[0], dict) or not isinstance(documents[0].get("spec"), dict):
        raise ValueError("its job object's spec is not a mapping")
    return _marked(documents[0]["spec"], holes)


def _check_mounts(spec: Any, configmap: str, keys: set[str]) -> None:
    """The kept spec mounts only keys this release's hostfile ConfigMap has (it is compiled anew, with the
    helpers that fill it): a launcher created later from the kept spec must find what it mounts."""
    if isinstance(spec, dict):
        source = spec.get("configMap")
        if isinstance(source, dict) and source.get("name") == configmap:
            for item in source.get("items") or ():
                if isinstance(item, dict) and item.get("key") not in keys:
                    raise ValueError(f"it mounts key {item.get('key')} of ConfigMap {configmap}, which this "
                                     "release's hostfile ConfigMap does not hold")
        for value in spec.values():
            _check_mounts(value, configmap, keys)
    elif isinstance(spec, list):
        for value in spec:
            _check_mounts(value, configmap, keys)


def _variable(expression: str) -> Variable | None:
    if expression in _VALUES:
        return Variable(_VALUES[expression], None)
    match = _MUL.fullmatch(expression)
    if match:
        return Variable(chartfiles.WORKERS, None, times=int(match.group("slots")))
    match = _ADD.fullmatch(expression)
    if match:
        return Variable(chartfiles.WORKERS, None, plus=int(match.group("plus")))
    return None


def _marked(node: Any, holes: dict[str, Variable]) -> Any:
    if isinstance(node, str) and node in holes:
        return holes[node]
    if isinstance(node, dict):
        return {key: _marked(value, holes) for key, value in node.items()}
    if isinstance(node, list):
        return [_marked(value, holes) for value in node]
    return node


def _with_values(node: Any, values: dict[str, Any]) -> Any:
    """The marked spec with each Variable given this render's value of its chart value."""
    if isinstance(node, Variable):
        if node.name not in values:
            raise ValueError(f"its spec follows chart value `{node.name}`, which this release's chart does not have")
        return Variable(node.name, values[node.name], node.times, node.plus)
    if isinstance(node, dict):
        return {key: _with_values(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [_with_values(value, values) for value in node]
    return node
