"""The charts as Helm itself sees them, once under Helm 3 and once under Helm 4.

Argo CD and Flux render with either major version (docs/facts.md section 5), so every check runs under both.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CHARTS, PROFILES, is_run_of, run_helm, run_mpigen
from ruamel.yaml import YAML

from mpigen.commands.pipeline import compile_profiles

CHART_DIRS = sorted(path.parent for path in CHARTS.rglob("Chart.yaml"))
RESNET = CHARTS / "dgx-lab" / "jobs" / "resnet50-dgx"
SCHEMA_ERROR = "values don't meet the specifications of the schema"


def yaml_load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in YAML(typ="safe", pure=True).load_all(text) if doc is not None]


def identity(doc: dict[str, Any]) -> tuple[str, str, str]:
    return doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]


def template(helm: Path, release: str, chart: Path, *args: str) -> list[dict[str, Any]]:
    return documents(run_helm(helm, "template", release, chart, *args).stdout)


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (doc,) = [d for d in docs if d["kind"] == kind]
    return doc


def test_charts_folder_has_charts() -> None:
    assert len(CHART_DIRS) >= 2, CHART_DIRS


def test_every_chart_lints_strict(helm: Path) -> None:
    """Every committed chart in one `helm lint --strict`, which judges each chart apart and names it."""
    lint = run_helm(helm, "lint", "--strict", *CHART_DIRS)
    assert f"{len(CHART_DIRS)} chart(s) linted, 0 chart(s) failed" in lint.stdout, lint.stdout
    assert "[ERROR]" not in lint.stdout and "[WARNING]" not in lint.stdout, lint.stdout


def test_helm_renders_exactly_the_objects_mpigen_built(helm: Path) -> None:
    """The charts as `make render` compiles them: with the committed charts' run names. Each chart is rendered once,
    under the release name it is delivered as."""
    example = compile_profiles([PROFILES], committed_in=CHARTS)
    on_disk = {str(path.relative_to(CHARTS)) for path in CHART_DIRS}
    assert {chart.directory for chart in example.charts} == on_disk, "charts/ is out of date: run `make render`"
    for chart in example.charts:
        rendered = template(helm, chart.ref.release, CHARTS / chart.directory)
        assert rendered and all({"apiVersion", "kind", "metadata"} <= set(doc) for doc in rendered), chart.directory
        rendered.sort(key=identity)
        built = sorted((manifest.obj for manifest in chart.manifests), key=identity)
        assert [identity(d) for d in rendered] == [identity(d) for d in built], chart.directory
        for got, want in zip(rendered, built, strict=True):
            assert got == want, f"{chart.directory}: {identity(want)} differs"


# --- the workers value ---------------------------------------------------------------------------

def test_workers_value_drives_replicas_hostfile_and_rank_count(helm: Path) -> None:
    docs = template(helm, "resnet50-dgx", RESNET, "--set", "workers=3")
    mpijob = one(docs, "MPIJob")
    assert mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3
    # `--set` does not rename the MPIJob: the name is the one compiled from the profile (Chart.yaml records it).
    run = mpijob["metadata"]["name"]
    assert is_run_of(run, "resnet50-dgx")
    assert run == yaml_load((RESNET / "Chart.yaml").read_text(encoding="utf-8"))["annotations"]["mpigen/mpijob"]
    hostfile = one(docs, "ConfigMap")["data"]["hostfile"]
    assert hostfile.splitlines() == [f"{run}-worker-{i}.{run}.ml-training.svc slots=8" for i in range(3)]
    command = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("-np") + 1] == "24"


def _pool_maximum_by_hand() -> int:
    """4 DGX-1 nodes, a worker takes all 8 GPUs of a node: 4 workers at most."""
    cluster = yaml_load((PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8"))
    hardware = yaml_load((PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8"))
    job = yaml_load((PROFILES / "jobs" / "resnet50-dgx.yaml").read_text(encoding="utf-8"))
    (pool,) = [p for p in cluster["nodePools"] if p["name"] == job["pool"]]
    assert pool["hardware"] == hardware["name"] and "gpusPerWorker" not in job
    gpus = hardware["gpu"]["count"]
    return pool["nodes"] * (gpus // job.get("gpusPerWorker", gpus))


def schema_maximum() -> int:
    schema = json.loads((RESNET / "values.schema.json").read_text(encoding="utf-8"))
    return schema["properties"]["workers"]["maximum"]


def test_schema_maximum_is_the_pool_capacity() -> None:
    assert schema_maximum() == _pool_maximum_by_hand() == 4


def test_schema_maximum_is_what_the_queue_can_ever_admit() -> None:
    """volcano-allreduce's pool holds 6 workers, its queue 4 (validate's own rule, model/admission.py)."""
    schema = json.loads((VOLCANO_ALLREDUCE / "values.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["workers"]["maximum"] == 4


VOLCANO_ALLREDUCE = CHARTS / "volcano-lab" / "jobs" / "volcano-allreduce"
"""Its queue `training` holds 4 of the pool's 6 nodes (profiles/clusters/volcano-lab.yaml), a worker takes a node's
8 GPUs: a Volcano queue's capability is one limit per resource, so a fifth worker's GPUs never fit it."""

REJECTED = [
    (("--set", "workers=0"), "workers", RESNET),
    (("--set", "workers=-1"), "workers", RESNET),
    (("--set", "workers=1.5"), "workers", RESNET),
    (("--set-json", "workers=1.5"), "workers", RESNET),
    (("--set", "workers=abc"), "workers", RESNET),
    (("--set-string", "workers=3"), "workers", RESNET),
    (("--set", "workers=5"), "workers", VOLCANO_ALLREDUCE),  # the pool holds 6, the queue admits 4
    (("--set", "workres=2"), "workres", RESNET),
    (("--set", "suspend=maybe"), "suspend", RESNET),
    (("--set", "image=has space"), "image", RESNET),
]


@pytest.mark.parametrize(("args", "field", "chart"), REJECTED,
                         ids=[" ".join(a) + ("" if c == RESNET else f" ({c.name})") for a, _, c in REJECTED])
def test_values_schema_rejects(helm: Path, args: tuple[str, str], field: str, chart: Path) -> None:
    result = run_helm(helm, "template", "resnet50-dgx", chart, *args, check=False)
    assert result.returncode != 0
    assert SCHEMA_ERROR in result.stderr and field in result.stderr, result.stderr


def test_values_schema_rejects_one_above_the_maximum_and_accepts_the_maximum(helm: Path) -> None:
    maximum = schema_maximum()
    assert maximum == _pool_maximum_by_hand()
    above = run_helm(helm, "template", "resnet50-dgx", RESNET, "--set", f"workers={maximum + 1}", check=False)
    assert above.returncode != 0 and SCHEMA_ERROR in above.stderr
    docs = template(helm, "resnet50-dgx", RESNET, "--set", f"workers={maximum}")
    assert one(docs, "MPIJob")["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == maximum
    assert len(one(docs, "ConfigMap")["data"]["hostfile"].splitlines()) == maximum


# --- profile text is never template code ---------------------------------------------------------

RELEASE = "{{ .Release.Name }}"
LOOKUP = '{{ lookup "v1" "Secret" "" "" }}'
FAIL = '{{ fail "x" }}'
TRIM = "--tag={{- /* c */ -}}x"
IMAGE = "registry.example/{{.Release.Name}}:1"
MOUNT = f"/data/{RELEASE}"
HOST_PATH = f"/raid/{LOOKUP}"
REASON = f"driver for {RELEASE} needs it"
SOURCE = f"jobs/literal-{RELEASE}.yaml"
LITERAL_JOB = f"""\
apiVersion: mpigen/v1alpha1
kind: Job
name: literal
description: 'never {FAIL} here'
cluster: dgx-lab
pool: cpu
namespace: hpc
image: '{IMAGE}'
workers: 2
slotsPerWorker: 1
program: [/bin/echo, '{RELEASE}', '{LOOKUP}', '{TRIM}']
env:
  RELEASE: '{RELEASE}'
  LOOKUP: '{LOOKUP}'
volumes:
  - name: data
    claim: data
    mountPath: '{MOUNT}'
  - name: raid
    hostPath: '{HOST_PATH}'
    mountPath: /raid
privileged:
  reason: '{REASON}'
annotations:
  example.com/run: '{RELEASE}'
"""


@pytest.fixture
def literal_chart(profiles_copy: Callable[..., Path], tmp_path: Path) -> Path:
    profiles = profiles_copy({SOURCE: LITERAL_JOB})
    out = tmp_path / "charts"
    result = run_mpigen("render", profiles, "-o", out)
    assert result.returncode == 0, result.stderr
    return out / "dgx-lab" / "jobs" / "literal"


def test_template_text_in_profiles_renders_literally(helm: Path, literal_chart: Path) -> None:
    docs = template(helm, "other-release", literal_chart)
    mpijob = one(docs, "MPIJob")
    specs = mpijob["spec"]["mpiReplicaSpecs"]
    launcher = specs["Launcher"]["template"]["spec"]["containers"][0]
    worker = specs["Worker"]["template"]["spec"]["containers"][0]
    for container in (launcher, worker):
        assert container["image"] == IMAGE
        env = {e["name"]: e["value"] for e in container["env"] if not e["name"].startswith("OMPI_MCA_")}
        assert env == {"RELEASE": RELEASE, "LOOKUP": LOOKUP}
        assert {m["name"]: m["mountPath"] for m in container["volumeMounts"]}["data"] == MOUNT
    assert launcher["command"][-4:] == ["/bin/echo", RELEASE, LOOKUP, TRIM]
    assert mpijob["metadata"]["annotations"]["mpigen/privileged-reason"] == REASON
    assert specs["Worker"]["template"]["metadata"]["annotations"]["mpigen/privileged-reason"] == REASON
    for metadata in (mpijob["metadata"], specs["Launcher"]["template"]["metadata"],
                     specs["Worker"]["template"]["metadata"]):
        assert metadata["annotations"]["example.com/run"] == RELEASE  # the profile's annotation, not the release
    for role in ("Launcher", "Worker"):
        volumes = {v["name"]: v for v in specs[role]["template"]["spec"]["volumes"]}
        assert volumes["raid"]["hostPath"] == {"path": HOST_PATH, "type": "Directory"}
    assert "other-release" not in json.dumps(mpijob["spec"])
    infra = template(helm, "other-release", literal_chart.parent.parent / "infra")
    hpc = next(d for d in infra if d["kind"] == "Namespace" and d["metadata"]["name"] == "hpc")
    assert hpc["metadata"]["annotations"]["mpigen/pod-security-reason"] == (
        f"container worker is privileged; hostPath volume raid ({HOST_PATH})")
    assert hpc["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    assert mpijob["metadata"]["labels"]["app.kubernetes.io/instance"] == "other-release"
    assert len(one(docs, "ConfigMap")["data"]["hostfile"].splitlines()) == 2


def test_template_text_in_profiles_leaves_chart_values_and_notes_intact(helm: Path, literal_chart: Path,
                                                                        tmp_path: Path) -> None:
    lint = run_helm(helm, "lint", "--strict", literal_chart)
    assert "0 chart(s) failed" in lint.stdout
    chart = yaml_load(run_helm(helm, "show", "chart", literal_chart).stdout)
    assert chart["name"] == "literal"
    assert chart["annotations"]["mpigen/source"].endswith(SOURCE)
    values = yaml_load(run_helm(helm, "show", "values", literal_chart).stdout)
    assert values == {"image": IMAGE, "workers": 2, "suspend": False}
    # `helm template` skips NOTES.txt and Helm 3's `install --dry-run` needs a cluster: render it with `tpl`,
    # the same engine and values, from a copy of the chart.
    copy = tmp_path / "notes-check"
    shutil.copytree(literal_chart, copy)
    shutil.copy(copy / "templates" / "NOTES.txt", copy / "notes.txt")
    (copy / "templates" / "notes-check.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\n'
        'data:\n  notes: {{ tpl (.Files.Get "notes.txt") . | toJson }}\n', encoding="utf-8")
    notes = [d for d in template(helm, "other-release", copy, "--set", "suspend=true") if d["metadata"]["name"] == "notes"]
    text = notes[0]["data"]["notes"]
    run = chart["annotations"]["mpigen/mpijob"]
    assert is_run_of(run, "literal")
    assert text.startswith(f"MPIJob {run} in namespace hpc: 2 worker(s) x 1 slot(s), OpenMPI (suspended")
    assert f"kubectl -n hpc get mpijob {run}\n" in text
    for path in ("Chart.yaml", "values.yaml"):  # the probe did reach the files Helm does not template
        assert RELEASE in (literal_chart / path).read_text(encoding="utf-8"), path
