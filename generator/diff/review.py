"""What a reviewer must know before the object diffs: the changes that need a person (actions), and what a
running job will and will not get (notes). Each is one line, `file-or-chart: what happened; what to do`.

Actions: the GitOps root changed (the tool never syncs its own root: re-apply it by hand); an Argo CD cluster's
Applications change hands between the app of apps and an ApplicationSet (let go of them first); a device plugin's
config changed (the plugin reads it only when it starts: restart its pods); an Argo CD health check changed (it
lives in argocd-cm, which no chart writes); a run kept under its name whose job object's spec changed (no backend
applies a spec edit to a started run: mpi-operator ignores it, Volcano's webhook and Trainer's immutable
`spec.trainer` refuse it, so the sync fails until the job object is deleted).

Notes: a run whose new spec is held back until its next run; a kept run whose job object changed only in labels
or annotations; a kept run suspended or resumed; a renamed run (a new run: the old job object, and the running
job with it, is pruned); the TrainingRuntime of a kept TrainJob changed (Trainer built its JobSet once).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mpigen.diff.compare import UnitChanges
from mpigen.diff.objects import ADDED, CHANGED, REMOVED, REPLACED, ObjectChange, object_key, object_name, unified
from mpigen.diff.sides import Side, Unit
from mpigen.manifests.gitops import health_check_keys
from mpigen.model import Backend, Naming, names
from mpigen.objects import chartfiles
from mpigen.providers import PROVIDERS
from mpigen.providers.base import DevicePlugin
from mpigen.support import yamlio
from mpigen.support.project import page_url
from mpigen.vocabulary import mpi_operator, trainer, volcano_job
from mpigen.vocabulary.gitops import (
    APPLICATION_SET,
    ARGOCD_API_VERSION,
    ARGOCD_GROUP,
    KUSTOMIZATION,
    RESOURCES_FINALIZER,
)

ACTION = "action"
NOTE = "note"

# Kinds of actions.
ROOT = "root"
DEVICE_PLUGIN = "device-plugin"
HEALTH_CHECK = "health-check"
EDIT_NOT_APPLIED = "edit-not-applied"
APPLICATIONS_HANDOVER = "applications-handover"
ACTION_KINDS = (ROOT, DEVICE_PLUGIN, HEALTH_CHECK, EDIT_NOT_APPLIED, APPLICATIONS_HANDOVER)
# Kinds of notes.
HELD_BACK = "held-back"
DESCRIBING_ONLY = "describing-only"
SUSPEND = "suspend"
NEW_RUN = "new-run"
RUNTIME_CHANGED = "runtime-changed"
NOTE_KINDS = (HELD_BACK, DESCRIBING_ONLY, SUSPEND, NEW_RUN, RUNTIME_CHANGED)


@dataclass(frozen=True)
class Review:
    """One action or note: where (the file or chart, as under the charts folder the user named), what happened,
    and what to do or what it means."""

    kind: str
    cluster: str
    chart: str
    """The unit's path under the charts folder (a chart's folder, or a bootstrap file)."""
    key: str
    """The object, as the changes list names it ('' for a whole file; the objects, comma-separated, of a root file
    to apply again)."""
    where: str
    what: str
    todo: str
    command: str = ""
    """The command the `todo` names, if any, alone."""
    diff: str = ""
    """A held-back spec: from the committed job object to what the next run gets."""

    def line(self, level: str) -> str:
        return f"{self.where}: {level}: {self.what}; {self.todo}"


@dataclass(frozen=True)
class Reviewed:
    actions: tuple[Review, ...]
    notes: tuple[Review, ...]


DEVICE_PLUGINS: dict[str, DevicePlugin] = {p.device_plugin.configmap: p.device_plugin for p in PROVIDERS.values()
                                           if p.device_plugin is not None}
"""Each device plugin by the name of the config ConfigMap an infra chart writes for it."""

JOB_KINDS = {(mpi_operator.GROUP, mpi_operator.KIND): Backend.MPIJOB,
             (volcano_job.GROUP, volcano_job.KIND): Backend.VOLCANO_JOB,
             (trainer.GROUP, trainer.TRAINJOB_KIND): Backend.TRAINJOB}
"""The job objects, by API group and kind (any version)."""
KUBECTL_RESOURCE = {Backend.MPIJOB: "mpijob", Backend.VOLCANO_JOB: "vcjob", Backend.TRAINJOB: "trainjob"}
SUSPEND_PATH = {Backend.MPIJOB: mpi_operator.SUSPEND_PATH, Backend.TRAINJOB: trainer.SUSPEND_PATH}
"""Where a job object says it is suspended: its controller acts on a change of it on a created object."""
TRAINJOB_IMMUTABLE = (trainer.TRAINER, trainer.RUNTIME_REF, trainer.ACTIVE_DEADLINE_SECONDS, trainer.MANAGED_BY)
"""Fields of a TrainJob's spec that Trainer's CRD refuses to change (`self == oldSelf`)."""


def _group(obj: dict[str, Any]) -> str:
    api_version = str(obj.get("apiVersion", ""))
    return api_version.split("/")[0] if "/" in api_version else ""


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _namespace(obj: dict[str, Any]) -> str:
    return str(_metadata(obj).get("namespace") or "")


def _name(obj: dict[str, Any]) -> str:
    return str(_metadata(obj).get("name") or "?")


def job_backend(obj: dict[str, Any], unit: Unit | None) -> Backend | None:
    """The backend of a chart's job object: one of the job kinds, named by the chart's `mpigen/mpijob` where the
    chart says (a hand-written chart says nothing: any object of a job kind is its job)."""
    backend = JOB_KINDS.get((_group(obj), str(obj.get("kind"))))
    named = unit.annotations.get(chartfiles.MPIJOB) if unit is not None else None
    return backend if backend is not None and (named is None or named == _name(obj)) else None


def review(changed: list[UnitChanges], old: Side, new: Side, output: str) -> Reviewed:
    """The actions and notes of the changes, and of the new side's held-back runs; `output` is the charts folder
    as the user named it (the lines name files under it)."""
    actions: list[Review] = []
    notes: list[Review] = []
    trainjobs = _trainjobs(new)
    for unit in changed:
        where = f"{output}/{unit.path}"
        before, after = old.get((unit.cluster, unit.path)), new.get((unit.cluster, unit.path))
        if unit.bootstrap:
            actions += _bootstrap_actions(unit, where, after is not None)
            if after is None:
                actions += _handover_actions(unit, where, new)
            continue
        for change in unit.changes:
            for level, found in _chart_reviews(unit, change, where, before, after, trainjobs):
                (actions if level == ACTION else notes).append(found)
    notes += [note for unit in sorted(new.values(), key=lambda u: u.key) if (note := _held_back(unit, output))]
    return Reviewed(tuple(actions), tuple(notes))


_HEALTH_CHECK_PAGE = page_url("docs/gitops.md", "Argo CD's health check for MPIJobs")
"""Where the manual says how to install a health check into argocd-cm."""

# --- bootstrap ---------------------------------------------------------------------------------------

def _bootstrap_actions(unit: UnitChanges, where: str, still_there: bool) -> list[Review]:
    """The root (applied by hand, never synced by the tool it configures) and Argo CD's health checks (kept in
    argocd-cm, which no chart writes)."""
    if unit.path.startswith(names.bootstrap_root_dir(unit.cluster) + "/"):
        return _root_actions(unit, where, still_there)
    key = health_check_keys(unit.cluster).get(unit.path)
    if key is not None and still_there:
        return [Review(HEALTH_CHECK, unit.cluster, unit.path, "", where, f"Argo CD health check {unit.changes[0].status}",
                       f"Argo CD reads it from its argocd-cm ConfigMap, which no chart writes: set the key {key} to "
                       f"the file's text by hand ({_HEALTH_CHECK_PAGE})")]
    return []


def _root_actions(unit: UnitChanges, where: str, still_there: bool) -> list[Review]:
    found: list[Review] = []
    applied = [c for c in unit.changes if c.status != REMOVED]
    if applied and still_there:
        named = [f"{object_name(c.after)} {c.status}" for c in applied if c.after is not None] or ["its text changed"]
        into = ("into the cluster Argo CD runs in" if any(c.after is not None and c.after.get("apiVersion") ==
                                                          ARGOCD_API_VERSION for c in applied)
                else f"into cluster {unit.cluster}")
        command = f"kubectl apply -f {where}"
        found.append(Review(ROOT, unit.cluster, unit.path, ", ".join(c.key for c in applied), where,
                            f"root {', '.join(named)}",
                            f"the GitOps tool does not sync its own root: apply it by hand, {into}: {command}",
                            command))
    for change in unit.changes:
        if change.status == REMOVED and change.before is not None:
            obj = change.before
            command = (f"kubectl -n {_namespace(obj)} delete {str(obj.get('kind', '')).lower()}.{_group(obj)} "
                       f"{_name(obj)}")
            found.append(Review(ROOT, unit.cluster, unit.path, change.key, where,
                                f"root {object_name(obj)} is no longer in git",
                                f"the GitOps tool follows it until it is deleted by hand{_what_deleting_does(obj)}: "
                                f"{command}", command))
    return found


def _handover_actions(unit: UnitChanges, where: str, new: Side) -> list[Review]:
    """An Argo CD cluster switched between the app of apps and an ApplicationSet (`gitops.applications`): the file
    of one is gone and the other's is new, and the same Applications change hands. The root prunes the old holders
    before the new ones make them again, and Argo CD's resources finalizer would delete every running job with them."""
    apps = names.bootstrap_apps_dir(unit.cluster)
    if not unit.path.startswith(apps + "/"):
        return []
    others = [path for (cluster, path) in new if cluster == unit.cluster and path.startswith(apps + "/")]
    removed = [c.before for c in unit.changes if c.status == REMOVED and c.before is not None
               and c.before.get("apiVersion") == ARGOCD_API_VERSION]
    if not others or not removed:
        return []
    namespace = _namespace(removed[0])
    if removed[0].get("kind") == APPLICATION_SET:
        command = f"kubectl -n {namespace} delete applicationset.{ARGOCD_GROUP} {_name(removed[0])} --cascade=orphan"
        what = f"the ApplicationSet {namespace}/{_name(removed[0])} hands its Applications to the app of apps"
        how = "the root prunes it, and deleting it deletes the Applications it made, and with them their jobs: before "
    else:
        held = " ".join(_name(obj) for obj in removed if RESOURCES_FINALIZER in (_metadata(obj).get("finalizers") or ()))
        if not held:
            return []
        command = (f"for app in {held}; do kubectl -n {namespace} patch application.{ARGOCD_GROUP} \"$app\" --type json "
                   "-p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'; done")
        what = f"the Applications of cluster {unit.cluster} change hands, to {others[0].rpartition('/')[2]}"
        how = ("the root prunes each, and its resources finalizer has Argo CD delete what it deployed, running jobs "
               "included, before it is made again: before ")
    return [Review(APPLICATIONS_HANDOVER, unit.cluster, unit.path, "", where, what,
                   f"{how}this change is synced, let go of them without deleting anything: {command}", command)]


def _what_deleting_does(obj: dict[str, Any]) -> str:
    spec = obj.get("spec")
    if obj.get("kind") == KUSTOMIZATION and isinstance(spec, dict) and spec.get("prune"):
        return " (it prunes what it applied: every HelmRelease of the cluster, and their jobs)"
    if obj.get("apiVersion") == ARGOCD_API_VERSION and not _metadata(obj).get("finalizers"):
        return " (without a finalizer: its Applications and their jobs keep running)"
    return ""


# --- charts ------------------------------------------------------------------------------------------

def _chart_reviews(unit: UnitChanges, change: ObjectChange, where: str, before: Unit | None, after: Unit | None,
                   trainjobs: dict[tuple[str, str, str], str]) -> Iterator[tuple[str, Review]]:
    objs = [obj for obj in (change.before, change.after) if obj is not None]
    if change.status == CHANGED and _is_runtime(objs[-1]):
        yield from _runtime_of_a_kept_run(unit, change, where, trainjobs)
    plugin = next((DEVICE_PLUGINS[_name(o)] for o in objs if o.get("apiVersion") == "v1" and o.get("kind") == "ConfigMap"
                   and _name(o) in DEVICE_PLUGINS), None)
    if plugin is not None:
        namespace = _namespace(objs[-1]) or "kube-system"
        command = f"kubectl -n {namespace} rollout restart daemonset/{plugin.daemonset}"
        yield ACTION, Review(DEVICE_PLUGIN, unit.cluster, unit.path, change.key, where,
                             f"ConfigMap {namespace}/{_name(objs[-1])}, the {plugin.name}'s config, {change.status}",
                             "the plugin reads it only when it starts: once it is synced, restart the plugin's pods "
                             f"(its DaemonSet as the upstream manifests name it): {command}", command)
    backend = job_backend(objs[-1], after or before)
    if backend is None or change.status in (ADDED, REMOVED):
        return
    if change.status == REPLACED:
        assert change.before is not None and change.after is not None
        yield NOTE, Review(NEW_RUN, unit.cluster, unit.path, change.key, where,
                           f"{backend.noun} {_namespace(change.before)}/{_name(change.before)} becomes "
                           f"{_name(change.after)}: a new run",
                           f"the GitOps tool (or `helm upgrade`) prunes the old {backend.noun} and the running job "
                           "with it")
        return
    if change.status == CHANGED and change.before is not None and change.after is not None:
        naming = (after.annotations if after else {}).get(chartfiles.NAMING) or \
            (before.annotations if before else {}).get(chartfiles.NAMING) or ""
        yield from _kept_run(unit, change, where, backend, naming)


def _is_runtime(obj: dict[str, Any]) -> bool:
    return _group(obj) == trainer.GROUP and obj.get("kind") == trainer.RUNTIME_KIND


def _trainjobs(side: Side) -> dict[tuple[str, str, str], str]:
    """Each TrainJob of a side by cluster, namespace and name: the chart that holds it."""
    return {(unit.cluster, _namespace(obj), _name(obj)): unit.path for unit in side.values() for obj in unit.objects or ()
            if (_group(obj), obj.get("kind")) == (trainer.GROUP, trainer.TRAINJOB_KIND)}


def _runtime_of_a_kept_run(unit: UnitChanges, change: ObjectChange, where: str,
                           trainjobs: dict[tuple[str, str, str], str]) -> Iterator[tuple[str, Review]]:
    """A TrainingRuntime (the infra chart's) changed under the name of a TrainJob that keeps its name: Trainer built
    the running job's JobSet from the runtime once."""
    runtime = change.after
    assert runtime is not None
    namespace, name = _namespace(runtime), _name(runtime)
    chart = trainjobs.get((unit.cluster, namespace, name))
    if chart is not None:
        yield NOTE, Review(RUNTIME_CHANGED, unit.cluster, unit.path, change.key, where,
                           f"TrainingRuntime {namespace}/{name} of TrainJob {namespace}/{name} ({chart}) changed",
                           "Trainer built the running job's JobSet from it once: the running job keeps what it "
                           "started with; its next run gets the new runtime")


def _without(obj: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    stripped = copy.deepcopy(obj)
    here: Any = stripped
    for step in path[:-1]:
        here = here.get(step) if isinstance(here, dict) else None
    if isinstance(here, dict):
        here.pop(path[-1], None)
    return stripped


def _undescribed(value: Any) -> Any:
    """`value` without the labels and annotations of every object in it (the job object's and its pod templates')."""
    if isinstance(value, list):
        return [_undescribed(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {k: _undescribed(v) for k, v in value.items()}
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = {k: v for k, v in out["metadata"].items() if k not in ("labels", "annotations")}
    return out


def _kept_run(unit: UnitChanges, change: ObjectChange, where: str, backend: Backend,
              naming: str) -> Iterator[tuple[str, Review]]:
    """A job object changed under the name it had: what the running job gets of the change."""
    before, after = change.before, change.after
    assert before is not None and after is not None
    noun, namespace, name = backend.noun, _namespace(after), _name(after)
    this = f"{noun} {namespace}/{name}"
    spec_changed = before.get("spec") != after.get("spec")
    if _undescribed(before) == _undescribed(after):
        if not spec_changed:
            yield NOTE, Review(DESCRIBING_ONLY, unit.cluster, unit.path, change.key, where,
                               f"{this} keeps its run; only its labels or annotations changed",
                               f"the {noun} gets them at once; its running pods do not")
            return
        if backend is Backend.MPIJOB:
            yield NOTE, Review(DESCRIBING_ONLY, unit.cluster, unit.path, change.key, where,
                               f"{this} keeps its run; only labels or annotations changed, its pods' too",
                               f"the {noun} gets them at once; its running pods do not (mpi-operator gives them only "
                               "to pods it creates later)")
            return
    suspend = SUSPEND_PATH.get(backend)
    if spec_changed and suspend is not None and _without(before, suspend) == _without(after, suspend):
        resumed = not _get(after, suspend)
        yield NOTE, Review(SUSPEND, unit.cluster, unit.path, change.key, where,
                           f"{this} is {'resumed' if resumed else 'suspended'} from git",
                           f"{backend.controller} {'creates its pods' if resumed else 'deletes its running pods'}"
                           " on the same object")
        return
    if not spec_changed:
        return
    command = f"kubectl -n {namespace} delete {KUBECTL_RESOURCE[backend]} {name}"
    kept = "keeps its name" + (f" (naming: {naming})" if naming == Naming.STABLE.value else "")
    if backend is Backend.MPIJOB:
        todo = ("mpi-operator never applies a spec edit to a started run: to run the edit, delete the MPIJob once "
                f"it is synced and sync again (the GitOps tool, or `helm upgrade`, creates it anew): {command}")
    elif backend is Backend.VOLCANO_JOB:
        todo = ("Volcano's webhook refuses an edit of a created Job: the sync fails until the Job is deleted (which "
                f"stops the running job): {command}")
    elif any(_get(before, ("spec", field)) != _get(after, ("spec", field)) for field in TRAINJOB_IMMUTABLE):
        todo = ("spec.trainer (with runtimeRef and activeDeadlineSeconds) is immutable: the sync fails until the "
                f"TrainJob is deleted (which stops the running job): {command}")
    else:
        todo = ("Trainer builds a TrainJob's JobSet once: the running job does not get the edit; to run it, delete "
                f"the TrainJob and sync again: {command}")
    yield ACTION, Review(EDIT_NOT_APPLIED, unit.cluster, unit.path, change.key, where,
                         f"{this} {kept} and its spec changed", todo, command)


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        obj = obj.get(step) if isinstance(obj, dict) else None
    return obj


# --- held back ---------------------------------------------------------------------------------------

def _held_back(unit: Unit, output: str) -> Review | None:
    """A run kept under its name whose spec this release compiles otherwise: the running job keeps the spec it
    started with, and the next run (a rename) gets the new one."""
    held = unit.held_back
    if held is None:
        return None
    key = object_key(held)
    committed = next((obj for obj in unit.objects or () if object_key(obj) == key), None)
    diff = unified(yamlio.dump(committed) if committed is not None else "", yamlio.dump(held), f"{key} (committed)",
                   f"{key} (next run)")
    if not diff:
        return None
    backend = job_backend(held, unit) or JOB_KINDS.get((_group(held), str(held.get("kind"))))
    noun = backend.noun if backend is not None else str(held.get("kind"))
    since = unit.annotations.get(chartfiles.RUN_RELEASE)
    return Review(HELD_BACK, unit.cluster, unit.path, key, f"{output}/{unit.path}",
                  f"{noun} {_namespace(held)}/{_name(held)} keeps the spec its run started with"
                  + (f" (compiled by mpigen {since})" if since else ""),
                  "this release's spec for it is held back until the next run: the running job keeps its spec "
                  "(raise the job's `rerun` to start that run now)",
                  diff=diff)
