"""generator/diff/review.py: the action lines (a change that needs a person) and the notes (what a running job will
and will not get), each `file-or-chart: what happened; what to do`."""

from __future__ import annotations

import copy

import pytest

from mpigen.diff.compare import compare
from mpigen.diff.review import (
    APPLICATIONS_HANDOVER,
    DESCRIBING_ONLY,
    DEVICE_PLUGIN,
    EDIT_NOT_APPLIED,
    HEALTH_CHECK,
    HELD_BACK,
    NEW_RUN,
    ROOT,
    RUNTIME_CHANGED,
    SUSPEND,
    Reviewed,
    review,
)
from mpigen.diff.sides import Unit
from mpigen.support.project import page_url


def _review(old: list[Unit], new: list[Unit]) -> Reviewed:
    before, after = {u.key: u for u in old}, {u.key: u for u in new}
    return review(compare(before, after), before, after, "charts")


def _lines(found: Reviewed) -> list[str]:
    return [r.line("action") for r in found.actions] + [r.line("note") for r in found.notes]


# --- bootstrap -----------------------------------------------------------------------------------------

GIT_REPOSITORY = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                  "metadata": {"name": "east", "namespace": "flux-system"}, "spec": {"ref": {"branch": "main"}}}
KUSTOMIZATION = {"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
                 "metadata": {"name": "east", "namespace": "flux-system"}, "spec": {"prune": True}}
ROOT_APPLICATION = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                    "metadata": {"name": "west", "namespace": "argocd"}, "spec": {"source": {"targetRevision": "main"}}}


def _bootstrap(cluster: str, file: str, *objects: dict) -> Unit:
    return Unit(cluster, f"{cluster}/bootstrap/{file}", bootstrap=True, objects=objects)


def test_a_flux_branch_change_in_the_root_is_an_action_with_the_command_to_apply_it():
    branch = copy.deepcopy(GIT_REPOSITORY)
    branch["spec"]["ref"]["branch"] = "release"
    found = _review([_bootstrap("east", "root/root-sync.yaml", GIT_REPOSITORY, KUSTOMIZATION)],
                    [_bootstrap("east", "root/root-sync.yaml", branch, KUSTOMIZATION)])
    assert _lines(found) == [
        "charts/east/bootstrap/root/root-sync.yaml: action: root GitRepository flux-system/east changed; the GitOps "
        "tool does not sync its own root: apply it by hand, into cluster east: kubectl apply -f "
        "charts/east/bootstrap/root/root-sync.yaml"]
    assert found.actions[0].kind == ROOT and found.actions[0].command == \
        "kubectl apply -f charts/east/bootstrap/root/root-sync.yaml"


def test_a_new_argocd_root_is_applied_where_argocd_runs_and_a_removed_one_deleted_by_hand():
    found = _review([], [_bootstrap("west", "root/root-application.yaml", ROOT_APPLICATION)])
    assert _lines(found) == [
        "charts/west/bootstrap/root/root-application.yaml: action: root Application argocd/west added; the GitOps "
        "tool does not sync its own root: apply it by hand, into the cluster Argo CD runs in: kubectl apply -f "
        "charts/west/bootstrap/root/root-application.yaml"]
    found = _review([_bootstrap("east", "root/root-sync.yaml", GIT_REPOSITORY, KUSTOMIZATION)], [])
    assert [r.command for r in found.actions] == [  # in the order of the changes: by key
        "kubectl -n flux-system delete kustomization.kustomize.toolkit.fluxcd.io east",
        "kubectl -n flux-system delete gitrepository.source.toolkit.fluxcd.io east"]
    assert "it prunes what it applied: every HelmRelease of the cluster, and their jobs" in found.actions[0].todo
    assert found.actions[1].what == "root GitRepository flux-system/east is no longer in git"
    found = _review([_bootstrap("west", "root/root-application.yaml", ROOT_APPLICATION)], [])
    assert "without a finalizer: its Applications and their jobs keep running" in found.actions[0].todo


def test_applications_added_or_removed_in_apps_need_no_person():
    app = {**ROOT_APPLICATION, "metadata": {"name": "west-bert", "namespace": "argocd"}}
    found = _review([_bootstrap("west", "apps/applications.yaml", app)], [_bootstrap("west", "apps/applications.yaml")])
    assert found == Reviewed((), ())


def test_a_changed_or_new_argocd_health_check_is_an_action_naming_its_argocd_cm_key():
    path = "west/bootstrap/argocd/volcano-job-health.lua"
    found = _review([], [Unit("west", path, bootstrap=True, objects=None, text="return hs\n")])
    assert _lines(found) == [
        f"charts/{path}: action: Argo CD health check added; Argo CD reads it from its argocd-cm ConfigMap, which no "
        "chart writes: set the key resource.customizations.health.batch.volcano.sh_Job to the file's text by hand "
        f"({page_url('docs/gitops.md')}#argo-cds-health-check-for-mpijobs)"]
    assert found.actions[0].kind == HEALTH_CHECK
    gone = _review([Unit("west", path, bootstrap=True, objects=None, text="return hs\n")], [])
    assert gone == Reviewed((), ())


# --- device plugins -----------------------------------------------------------------------------------

def _configmap(name: str, data: str, namespace: str = "kube-system") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": {"config.json": data}}


@pytest.mark.parametrize("configmap, plugin, daemonset", [
    ("sriovdp-config", "SR-IOV network device plugin", "kube-sriov-device-plugin"),
    ("rdma-devices", "rdma-shared-dev-plugin", "rdma-shared-dp-ds"),
])
def test_a_device_plugin_config_change_says_to_restart_the_plugin_s_daemonset(configmap, plugin, daemonset):
    old = [Unit(c, f"{c}/infra", objects=(_configmap(configmap, "a", "nics"),)) for c in ("east", "lab")]
    new = [old[0], Unit("lab", "lab/infra", objects=(_configmap(configmap, "b", "nics"),))]
    found = _review(old, new)
    assert _lines(found) == [
        f"charts/lab/infra: action: ConfigMap nics/{configmap}, the {plugin}'s config, changed; the plugin reads it "
        "only when it starts: once it is synced, restart the plugin's pods (its DaemonSet as the upstream manifests "
        f"name it): kubectl -n nics rollout restart daemonset/{daemonset}"]
    assert found.actions[0].kind == DEVICE_PLUGIN and found.actions[0].cluster == "lab"
    assert [r.what.rsplit(" ", 1)[1] for r in _review([], new).actions] == ["added", "added"]


def test_another_configmap_needs_no_person():
    found = _review([Unit("lab", "lab/infra", objects=(_configmap("other", "a"),))],
                    [Unit("lab", "lab/infra", objects=(_configmap("other", "b"),))])
    assert found == Reviewed((), ())


# --- job objects --------------------------------------------------------------------------------------

MPIJOB = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
          "metadata": {"name": "bert", "namespace": "ml", "labels": {"app.kubernetes.io/instance": "bert"}},
          "spec": {"runPolicy": {"suspend": False},
                   "mpiReplicaSpecs": {"Worker": {"template": {"metadata": {"labels": {"a": "b"}},
                                                               "spec": {"containers": [{"image": "pytorch:24.03"}]}}}}}}
VCJOB = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "bert", "namespace": "ml"},
         "spec": {"tasks": [{"template": {"spec": {"containers": [{"image": "pytorch:24.03"}]}}}]}}
TRAINJOB = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "bert", "namespace": "ml"},
            "spec": {"suspend": True, "runtimeRef": {"name": "bert"}, "trainer": {"numNodes": 2},
                     "labels": {"a": "b"}}}


def _job_chart(obj: dict, naming: str = "stable", held_back: dict | None = None, **annotations: str) -> Unit:
    return Unit("east", "east/jobs/bert", objects=(obj,), annotations={
        "mpigen/source": "profiles/jobs/bert.yaml", "mpigen/mpijob": obj["metadata"]["name"],
        "mpigen/naming": naming, **annotations}, held_back=held_back)


def _set(obj: dict, path: tuple, value) -> dict:
    edited = copy.deepcopy(obj)
    here = edited
    for step in path[:-1]:
        here = here[step]
    here[path[-1]] = value
    return edited


IMAGE = ("spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers", 0, "image")


def test_a_stable_named_mpijob_whose_spec_changed_is_an_action_to_delete_it():
    found = _review([_job_chart(MPIJOB)], [_job_chart(_set(MPIJOB, IMAGE, "pytorch:24.05"))])
    assert _lines(found) == [
        "charts/east/jobs/bert: action: MPIJob ml/bert keeps its name (naming: stable) and its spec changed; "
        "mpi-operator never applies a spec edit to a started run: to run the edit, delete the MPIJob once it is "
        "synced and sync again (the GitOps tool, or `helm upgrade`, creates it anew): kubectl -n ml delete mpijob bert"]
    assert found.actions[0].kind == EDIT_NOT_APPLIED and found.actions[0].command == "kubectl -n ml delete mpijob bert"


def test_a_volcano_job_and_a_trainjob_whose_spec_changed_fail_the_sync_until_deleted():
    image = ("spec", "tasks", 0, "template", "spec", "containers", 0, "image")
    found = _review([_job_chart(VCJOB)], [_job_chart(_set(VCJOB, image, "pytorch:24.05"))])
    assert "Volcano's webhook refuses an edit of a created Job: the sync fails until the Job is deleted" in \
        found.actions[0].todo and found.actions[0].command == "kubectl -n ml delete vcjob bert"
    found = _review([_job_chart(TRAINJOB)], [_job_chart(_set(TRAINJOB, ("spec", "trainer", "numNodes"), 3))])
    assert found.actions[0].todo.startswith("spec.trainer (with runtimeRef and activeDeadlineSeconds) is immutable: "
                                            "the sync fails until the TrainJob is deleted")
    found = _review([_job_chart(TRAINJOB)], [_job_chart(_set(TRAINJOB, ("spec", "labels"), {"a": "c"}))])
    assert found.actions[0].todo.startswith("Trainer builds a TrainJob's JobSet once: the running job does not get "
                                            "the edit")


def test_a_content_hash_run_kept_under_its_name_with_a_changed_spec_is_an_action_too():
    found = _review([_job_chart(MPIJOB, "content-hash")],
                    [_job_chart(_set(MPIJOB, IMAGE, "pytorch:24.05"), "content-hash")])
    assert found.actions[0].what == "MPIJob ml/bert keeps its name and its spec changed"


def test_a_kept_run_whose_labels_or_annotations_changed_is_a_note_of_what_its_pods_do_not_get():
    labelled = _set(MPIJOB, ("metadata", "labels", "cost-centre"), "ml42")
    found = _review([_job_chart(MPIJOB)], [_job_chart(labelled)])
    assert found.actions == () and _lines(found) == [
        "charts/east/jobs/bert: note: MPIJob ml/bert keeps its run; only its labels or annotations changed; the "
        "MPIJob gets them at once; its running pods do not"]
    assert found.notes[0].kind == DESCRIBING_ONLY
    pods = _set(MPIJOB, ("spec", "mpiReplicaSpecs", "Worker", "template", "metadata", "labels", "team"), "vision")
    found = _review([_job_chart(MPIJOB, "content-hash")], [_job_chart(pods, "content-hash")])
    assert found.actions == () and found.notes[0].todo == (
        "the MPIJob gets them at once; its running pods do not (mpi-operator gives them only to pods it creates later)")
    # Volcano refuses any edit of a created Job's spec, its pods' labels too.
    pods = _set(VCJOB, ("spec", "tasks", 0, "template", "metadata"), {"labels": {"team": "vision"}})
    assert [r.kind for r in _review([_job_chart(VCJOB)], [_job_chart(pods)]).actions] == [EDIT_NOT_APPLIED]


def test_suspending_or_resuming_a_kept_run_from_git_is_a_note():
    found = _review([_job_chart(MPIJOB)], [_job_chart(_set(MPIJOB, ("spec", "runPolicy", "suspend"), True))])
    assert found.actions == () and _lines(found) == [
        "charts/east/jobs/bert: note: MPIJob ml/bert is suspended from git; mpi-operator deletes its running pods on "
        "the same object"]
    found = _review([_job_chart(TRAINJOB)], [_job_chart(_set(TRAINJOB, ("spec", "suspend"), False))])
    assert found.notes[0].kind == SUSPEND and found.notes[0].what == "TrainJob ml/bert is resumed from git"


def test_a_renamed_run_is_a_note_that_the_old_job_object_and_its_running_job_are_pruned():
    renamed = _set(MPIJOB, ("metadata", "name"), "bert-bbbbbbb")
    found = _review([_job_chart(_set(MPIJOB, ("metadata", "name"), "bert-aaaaaaa"), "content-hash")],
                    [_job_chart(renamed, "content-hash")])
    assert _lines(found) == [
        "charts/east/jobs/bert: note: MPIJob ml/bert-aaaaaaa becomes bert-bbbbbbb: a new run; the GitOps tool (or "
        "`helm upgrade`) prunes the old MPIJob and the running job with it"]
    assert found.notes[0].kind == NEW_RUN


def test_a_held_back_spec_is_a_note_with_the_diff_the_next_run_gets():
    held = _set(MPIJOB, IMAGE, "pytorch:24.05")
    unit = _job_chart(MPIJOB, "content-hash", held_back=held, **{"mpigen/run-release": "0.1.0"})
    found = _review([_job_chart(MPIJOB, "content-hash")], [unit])
    assert found.actions == () and _lines(found) == [
        "charts/east/jobs/bert: note: MPIJob ml/bert keeps the spec its run started with (compiled by mpigen 0.1.0); "
        "this release's spec for it is held back until the next run: the running job keeps its spec (raise the "
        "job's `rerun` to start that run now)"]
    note = found.notes[0]
    assert note.kind == HELD_BACK and note.key == "kubeflow.org/v2beta1 MPIJob ml/bert"
    assert "-          - image: pytorch:24.03\n+          - image: pytorch:24.05\n" in note.diff
    assert "(committed)" in note.diff and "(next run)" in note.diff
    # A held-back object equal to the committed one says nothing.
    assert _review([], [_job_chart(MPIJOB, held_back=MPIJOB)]).notes == ()


def test_an_object_of_a_job_kind_that_is_not_the_chart_s_job_object_is_not_a_run():
    other = _set(MPIJOB, ("metadata", "name"), "helper")
    chart = Unit("east", "east/jobs/bert", objects=(other,), annotations={"mpigen/mpijob": "bert",
                                                                          "mpigen/naming": "stable"})
    edited = Unit("east", "east/jobs/bert", objects=(_set(other, IMAGE, "x"),), annotations=chart.annotations)
    assert _review([chart], [edited]) == Reviewed((), ())


def test_a_changed_runtime_of_a_kept_trainjob_is_a_note_that_the_running_job_keeps_its_jobset():
    runtime = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime",
               "metadata": {"name": "bert", "namespace": "ml"}, "spec": {"template": {"spec": {"x": 1}}}}
    edited = _set(runtime, ("spec", "template", "spec", "x"), 2)
    job = _job_chart(TRAINJOB, "content-hash")
    found = _review([Unit("east", "east/infra", objects=(runtime,)), job],
                    [Unit("east", "east/infra", objects=(edited,)), job])
    assert found.actions == () and _lines(found) == [
        "charts/east/infra: note: TrainingRuntime ml/bert of TrainJob ml/bert (east/jobs/bert) changed; Trainer built "
        "the running job's JobSet from it once: the running job keeps what it started with; its next run gets the new "
        "runtime"]
    assert found.notes[0].kind == RUNTIME_CHANGED
    # No TrainJob of that name on the cluster: nothing runs from it.
    assert _review([Unit("west", "west/infra", objects=(runtime,)), job],
                   [Unit("west", "west/infra", objects=(edited,)), job]) == Reviewed((), ())


# --- the app of apps and an ApplicationSet hand the Applications over ------------------------------------------------

FINALIZED = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {
    "name": "west-infra", "namespace": "argocd", "finalizers": ["resources-finalizer.argocd.argoproj.io"]}}
APPLICATION_SET = {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
                   "metadata": {"name": "west", "namespace": "argocd"}}


def test_switching_to_an_applicationset_says_to_remove_the_finalizers_first():
    bert = copy.deepcopy(FINALIZED)
    bert["metadata"]["name"] = "west-bert"
    found = _review([_bootstrap("west", "apps/applications.yaml", FINALIZED, bert)],
                    [_bootstrap("west", "apps/applicationset.yaml", APPLICATION_SET)])
    (action,) = found.actions
    assert action.kind == APPLICATIONS_HANDOVER and found.notes == ()
    assert action.line("action") == (
        "charts/west/bootstrap/apps/applications.yaml: action: the Applications of cluster west change hands, to "
        "applicationset.yaml; the root prunes each, and its resources finalizer has Argo CD delete what it deployed, "
        "running jobs included, before it is made again: before this change is synced, let go of them without deleting "
        "anything: " + action.command)
    assert action.command == ("for app in west-bert west-infra; do kubectl -n argocd patch application.argoproj.io "
                              "\"$app\" --type json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'; done")


def test_switching_back_to_the_app_of_apps_says_to_orphan_the_applicationset_first():
    found = _review([_bootstrap("west", "apps/applicationset.yaml", APPLICATION_SET)],
                    [_bootstrap("west", "apps/applications.yaml", FINALIZED)])
    (action,) = found.actions
    assert action.what == "the ApplicationSet argocd/west hands its Applications to the app of apps"
    assert action.command == "kubectl -n argocd delete applicationset.argoproj.io west --cascade=orphan"


def test_a_cluster_that_leaves_argo_cd_or_gitops_hands_nothing_over():
    assert _review([_bootstrap("west", "apps/applications.yaml", FINALIZED)], []) == Reviewed((), ())
    flux = _bootstrap("west", "apps/helmreleases.yaml", {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                                                        "metadata": {"name": "west-infra", "namespace": "flux-system"}})
    assert [a.kind for a in _review([_bootstrap("west", "apps/applications.yaml")], [flux]).actions] == []
