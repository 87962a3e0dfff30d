"""Chart files (generator/package): values, values schema and the limits they carry."""

from __future__ import annotations

import json

import pytest
from conftest import PROFILES, WIDE_JOB, big_cluster, invoke_mpigen, nvl72_edits, run_helm

from mpigen import __version__
from mpigen.commands.pipeline import compile_profiles
from mpigen.objects import chartfiles
from mpigen.readback.kubeyaml import load_all as kube_load_all


def _schema(chart):
    return json.loads(dict(chart.files)["values.schema.json"])


def test_values_schema_maximum_is_the_pool_capacity(example):
    charts = {c.ref.name: c for c in example.charts}
    # Checked by hand: dgx pool = 4 nodes; resnet50-dgx takes a whole node per worker (4), tensorflow-benchmarks
    # one GPU per worker (4 x 8 = 32); pi asks 1 CPU on 8 nodes of 2 x 32 cores x 2 threads (8 x 128 = 1024).
    assert _schema(charts["resnet50-dgx"])["properties"]["workers"]["maximum"] == 4
    assert _schema(charts["tensorflow-benchmarks"])["properties"]["workers"]["maximum"] == 32
    assert _schema(charts["pi"])["properties"]["workers"]["maximum"] == 1024


def test_values_schema_maximum_is_what_the_queue_can_ever_admit(example):
    """Beyond it the job would wait for ever: volcano-allreduce's queue holds 4 of the pool's 6 nodes."""
    workers = _schema({c.ref.name: c for c in example.charts}["volcano-allreduce"])["properties"]["workers"]
    assert workers["maximum"] == 4
    assert workers["description"] == "Worker pods; at most 4: the capability of queue 'training' holds 4 with the launcher."


def test_a_sliced_jobs_maximum_is_one_domain_of_its_required_level_in_whole_slices(profiles_copy):
    """NVL72 (conftest.nvl72_edits): 36 trays of 4 GPUs under a required `block` of 36 trays, in slices of one NVLink
    domain (18 trays). The pool has 72, but Kueue keeps a job of more than one block Pending for ever (validate refuses
    it), so the maximum is 36, in whole slices (Kueue v0.15.0 pkg/controller/jobframework/tas_validation.go
    `ValidateSliceSizeAnnotationUpperBound` refuses a slice larger than the pod set); the description says both."""
    result = compile_profiles([profiles_copy(nvl72_edits())])
    assert result.ok, [d.format() for d in result.diagnostics]
    workers = _schema({c.ref.name: c for c in result.charts}["vision-resnet50"])["properties"]["workers"]
    assert (workers["minimum"], workers["maximum"], workers["multipleOf"]) == (1, 36, 18)
    assert workers["description"] == ("Worker pods; at most 36: one 'block' domain, which its required topology keeps "
                                      "every worker in, holds 36, in slices of 18 (one rack each).")


def test_a_kueue_infra_chart_says_the_least_wait_for_pods_ready_timeout(example):
    """Kueue's waitForPodsReady lives in its Configuration, which no chart writes: the NOTES say what to set. The
    largest job of dgx-pod (language-bert, 6 workers of a whole DGX-1 each) needs 412 s on the assumed first pull
    (tests/unit/model/test_model_pods_ready.py), so 7m. A Configuration v1beta1 (Kueue v0.9-v0.14,
    config/components/manager/controller_manager_config.yaml) also needs `enable: true`; v1beta2 (v0.15 on) has no
    such field: the block enables it."""
    (infra,) = [c for c in example.charts if c.directory == "dgx-pod/infra"]
    notes = dict(infra.files)["templates/NOTES.txt"]
    assert ("the longest a job here needs for every pod to be ready is 412 s (language-bert, 6 workers), on a first "
            "pull of a 20 GB image") in notes
    assert "(the cluster profile says 600 s). Set at least:\n  waitForPodsReady:\n    timeout: 7m\n" in notes
    assert "also enable: true" in notes
    (volcano,) = [c for c in example.charts if c.directory == "volcano-lab/infra"]
    assert "waitForPodsReady:" not in dict(volcano.files)["templates/NOTES.txt"]  # Kueue's alone


@pytest.mark.parametrize("length, naming", [(45, None), (53, "stable")])
def test_values_schema_maximum_also_keeps_pod_names_within_63_characters(profiles_copy, length, naming):
    # Default naming: a 45-character name, "-" and a 7-character hash and "-worker-" leave 63 - 45 - 8 - 8 = 2
    # digits: workers 0..99, so at most 100, although the CPU pool would hold 1024. Stable naming: a 53-character
    # name leaves 63 - 53 - 8 = 2 digits, the same 100.
    name = "p" * length
    pi = (profiles_copy() / "jobs" / "pi.yaml").read_text(encoding="utf-8").replace("name: pi", f"name: {name}")
    if naming:
        pi += f"naming: {naming}\n"
    root = profiles_copy({"jobs/pi.yaml": pi})
    result = compile_profiles([root])
    assert result.ok, [d.format() for d in result.diagnostics]
    chart = next(c for c in result.charts if c.ref.name == name)
    assert _schema(chart)["properties"]["workers"]["maximum"] == 100
    assert "pod names allow 100" in dict(chart.files)["values.yaml"]


def test_values_schema_maximum_counts_the_hash_of_default_naming(profiles_copy):
    # 46 characters + 8 (hash) + 8 ("-worker-") leave 1 digit: at most 10 workers.
    name = "p" * 46
    pi = (profiles_copy() / "jobs" / "pi.yaml").read_text(encoding="utf-8").replace("name: pi", f"name: {name}")
    result = compile_profiles([profiles_copy({"jobs/pi.yaml": pi})])
    assert result.ok, [d.format() for d in result.diagnostics]
    chart = next(c for c in result.charts if c.ref.name == name)
    assert _schema(chart)["properties"]["workers"]["maximum"] == 10


def test_every_chart_names_the_release_that_compiled_it(example):
    """Infra and job charts alike, so that `render --check` after an upgrade can tell which charts it brings."""
    kinds = set()
    for chart in example.charts:
        meta = kube_load_all(dict(chart.files)[chartfiles.CHART_YAML])[0]
        assert meta["annotations"][chartfiles.RELEASE] == __version__, chart.directory
        kinds.add(chartfiles.MPIJOB in meta["annotations"])
    assert kinds == {True, False}  # job charts and infra charts


def test_namespaces_survive_uninstalling_the_infra_chart(example):
    namespaces = [m.obj for c in example.charts for m in c.manifests if m.obj["kind"] == "Namespace"]
    assert namespaces, "the infra chart has Namespace objects"
    for namespace in namespaces:
        assert namespace["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"


# --- Helm's limit of 5 MiB per chart file ----------------------------------------------------------

PI = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")


def _launcher_env(helm, chart) -> dict[str, str]:
    rendered = run_helm(helm, "template", "pi", chart, "--namespace", "hpc").stdout
    mpijob = next(d for d in kube_load_all(rendered) if d and d["kind"] == "MPIJob")
    launcher = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value") for e in launcher["env"]}


def test_a_profile_string_of_braces_near_one_mebibyte_gives_a_chart_helm_loads(helm, profiles_copy, tmp_path):
    """Escaped brace by brace, this env value (in the launcher and in the workers) made a 6 MB template,
    which Helm refused to load after render had exited 0. (A million characters make an MPIJob etcd refuses.)"""
    braces = "{{ `" * 150_000  # 600,000 characters
    root = profiles_copy({"jobs/pi.yaml": PI + f"env:\n  BRACES: '{braces}'\n"})
    out = tmp_path / "charts"
    result = invoke_mpigen("render", root, "-o", out)
    assert result.returncode == 0, result.stderr
    assert (out / "dgx-lab/jobs/pi/templates/mpijob.yaml").stat().st_size < 2 * (2 * len(braces)) + 100_000
    assert _launcher_env(helm, out / "dgx-lab" / "jobs" / "pi")["BRACES"] == braces


def test_a_chart_file_over_helms_limit_is_an_error_at_its_profile(profiles_copy, tmp_path):
    """A soft hyphen is written `\\u00ad` (6 bytes for 2), in the launcher and the workers: 3 MiB each."""
    root = profiles_copy({"jobs/pi.yaml": PI + "env:\n  HYPHENS: " + "\u00ad" * 500_000 + "\n"})
    out = tmp_path / "charts"
    out.mkdir()
    result = invoke_mpigen("render", root, "-o", out)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"{root / 'jobs' / 'pi.yaml'}:1:1: error: chart file dgx-lab/jobs/pi/templates/mpijob.yaml would be "), \
        result.stderr
    assert "over Helm's limit of 5,242,880 bytes per chart file" in result.stderr
    assert "Traceback" not in result.stderr and list(out.iterdir()) == []


def test_oversized_files_counts_bytes_not_characters():
    from mpigen.package import HELM_MAX_FILE_BYTES, Chart, oversized_files

    def chart(text: str) -> Chart:
        return Chart("c/jobs/j", None, (("templates/a.yaml", text),), (), source="p/jobs/j.yaml")  # type: ignore[arg-type]

    assert HELM_MAX_FILE_BYTES == 5_242_880  # Helm's MaxDecompressedFileSize, 5 MiB
    assert oversized_files([chart("x" * HELM_MAX_FILE_BYTES)], {}) == []
    assert oversized_files([chart("é" * (HELM_MAX_FILE_BYTES // 2))], {}) == []
    found = oversized_files([chart("é" * (HELM_MAX_FILE_BYTES // 2) + "x")], {"p/jobs/j.yaml": "/r/p/jobs/j.yaml"})
    assert [str(d.location) for d in found] == ["/r/p/jobs/j.yaml:1:1"]


def test_an_object_over_etcds_default_limit_is_an_error_at_its_profile(profiles_copy, tmp_path):
    """800,000 characters in an env value, in the launcher and the workers: an MPIJob of 1.6 MB, which a cluster
    with etcd's default `--max-request-bytes` (1.5 MiB) refuses to store; 600,000 (1.2 MB) is stored."""
    from mpigen.vocabulary.kubernetes import ETCD_MAX_REQUEST_BYTES

    assert ETCD_MAX_REQUEST_BYTES == 1_572_864
    root = profiles_copy({"jobs/pi.yaml": PI + "env:\n  BIG: " + "x" * 800_000 + "\n"})
    result = invoke_mpigen("render", root, "-o", tmp_path / "charts")
    assert result.returncode == 1
    assert result.stderr.startswith(f"{root / 'jobs' / 'pi.yaml'}:1:1: error: MPIJob pi-"), result.stderr
    assert " of chart dgx-lab/jobs/pi would be 1,60" in result.stderr  # 2 x 800,000 and the rest
    assert "more than etcd stores in one object by default (1,572,864 bytes)" in result.stderr
    assert not (tmp_path / "charts").exists()
    root = profiles_copy({"jobs/pi.yaml": PI + "env:\n  BIG: " + "x" * 600_000 + "\n"})
    assert invoke_mpigen("render", root, "-o", tmp_path / "charts").returncode == 0


def test_the_charts_workers_maximum_keeps_the_hostfile_within_what_etcd_stores(profiles_copy):
    """`--set workers=N` writes N hostfile lines through the chart's loop: values.schema.json lets N be no more
    than the lines etcd stores (14,162 for job `wide` in namespace mpi: tests/unit/validate/test_validate.py), though
    the pool holds 100,000 such workers."""
    result = compile_profiles([profiles_copy({"clusters/big.yaml": big_cluster(1, 100_000),
                                              "jobs/wide.yaml": WIDE_JOB + "workers: 100\n"})])
    assert result.ok, [d.format() for d in result.diagnostics]
    chart = next(chart for chart in result.charts if chart.directory == "big/jobs/wide")
    files = dict(chart.files)
    assert json.loads(files["values.schema.json"])["properties"]["workers"]["maximum"] == 14_162
    assert ("At most 14162: pool 'p0': 100000 nodes x 1 worker(s) per node; the hostfile lines etcd's default object "
            "limit holds allow 14162.") in files["values.yaml"]


def test_an_existing_namespace_is_not_created_but_told_its_label_and_judged_with_context(profiles_copy, tmp_path):
    # Helm refuses to install an object that exists outside its release ("exists and cannot be imported into the
    # current release"): a namespace the cluster profile says exists is left out of the infra chart, which still
    # gives it the rails' networks; NOTES say the Pod Security label its jobs need. Given the live namespace with
    # `--context`, check judges that label as Pod Security admission will (tensorflow-benchmarks' workers there run
    # privileged).
    cluster = (PROFILES / "clusters/dgx-lab.yaml").read_text(encoding="utf-8")
    root = profiles_copy({"clusters/dgx-lab.yaml": cluster + "existingNamespaces: [ml-training]\n"})
    charts = tmp_path / "charts"
    assert invoke_mpigen("render", root, "-o", charts).returncode == 0
    infra = charts / "dgx-lab" / "infra"
    namespaces = (infra / "templates/namespaces.yaml").read_text(encoding="utf-8")
    assert "name: ml-training" not in namespaces
    assert "name: hpc" in namespaces, "hpc is still the chart's"
    assert "namespace: ml-training" in (infra / "templates/network-attachments.yaml").read_text(encoding="utf-8")
    notes = (infra / "templates/NOTES.txt").read_text(encoding="utf-8")
    assert ("ml-training needs privileged: kubectl label namespace ml-training --overwrite "
            "pod-security.kubernetes.io/enforce=privileged "
            "pod-security.kubernetes.io/enforce-version=v1.31") in notes
    live = tmp_path / "ml-training.yaml"
    live.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml-training\n  labels:\n"
                    "    pod-security.kubernetes.io/enforce: restricted\n", encoding="utf-8")
    checked = invoke_mpigen("check", "--no-helm", "--context", live, charts / "dgx-lab")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "namespace ml-training enforces Pod Security level restricted, but these pods need privileged" \
        in checked.stdout
    live.write_text(live.read_text(encoding="utf-8").replace("restricted", "privileged"), encoding="utf-8")
    assert invoke_mpigen("check", "--no-helm", "--context", live, charts / "dgx-lab").returncode == 0
