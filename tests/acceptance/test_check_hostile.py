"""`mpigen check` on hostile charts and manifests, through the real command line (and real Helm 3 and 4):
each is a finding with exit code 1, never a command run, a hidden object, a hang, a crash or a traceback."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import CHARTS, REPO

MPIGEN = REPO / ".venv" / "bin" / "mpigen"

PRIVILEGED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: default%s
spec:
  hostPID: true
  containers:
    - name: x
      image: busybox:1.36
      securityContext: {privileged: true}
"""


def mpigen(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The installed console script, as CI runs it."""
    command = [str(MPIGEN)] if MPIGEN.exists() else [sys.executable, "-m", "mpigen"]
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def refused(result: subprocess.CompletedProcess[str], *texts: str) -> None:
    """Exit code 1 (not a crash: no signal, no traceback), with each text among the findings."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    for text in texts:
        assert text in result.stdout, result.stdout


def chart(folder: Path, name: str, templates: dict[str, str], annotations: str = "") -> Path:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n{annotations}",
                                       encoding="utf-8")
    for file, text in templates.items():
        (folder / "templates" / file).parent.mkdir(parents=True, exist_ok=True)
        (folder / "templates" / file).write_text(text, encoding="utf-8")
    return folder


# --- Critical: a chart's name is never a Helm flag ---------------------------------------------------

def test_a_chart_named_post_renderer_runs_nothing(helm, tmp_path):
    marker = tmp_path / "MARKER"
    # Valid YAML for Helm, and a script for `sh`: it would leave the marker and print a harmless ConfigMap.
    script = (f"touch {marker}; printf 'apiVersion\\072 v1\\nkind\\072 ConfigMap\\nmetadata\\072\\n  name\\072 x\\n'; "
              "exit 0; k: v\n")
    folder = chart(tmp_path / "evil", "--post-renderer=sh", {"script.yaml": script})
    result = mpigen("check", "--helm", helm, folder)
    assert not marker.exists(), "a command from the chart ran"
    refused(result, f'{folder.as_posix()}/Chart.yaml: name "--post-renderer=sh" is not a valid Helm release name')


def test_a_chart_named_no_hooks_hides_no_hook(helm, tmp_path):
    hook = PRIVILEGED_POD % ("hook", "\n  annotations:\n    helm.sh/hook: pre-install")
    folder = chart(tmp_path / "evil", "--no-hooks", {"hook.yaml": hook})
    result = mpigen("check", "--helm", helm, folder)
    refused(result, f'{folder.as_posix()}/Chart.yaml: name "--no-hooks" is not a valid Helm release name',
            "Checked as release `release-name`",
            f"pod security privileged: {folder.as_posix()}/templates/hook.yaml: Pod/hook in namespace default: "
            "hostPID: true; container x is privileged")


# --- mpigen's own renderer refuses what it would render otherwise than Helm ----------------------------

def _claiming_mpigen(tmp_path: Path) -> Path:
    return shutil.copytree(CHARTS / "dgx-lab" / "jobs" / "pi", tmp_path / "pi")


@pytest.mark.parametrize(("where", "named"), [("templates/pod.yml", "templates/pod.yml"),
                                              ("templates/sub/pod.yaml", "templates/sub"),
                                              ("templates/pod.txt", "templates/pod.txt"),
                                              ("crds/pod.yaml", "crds"),
                                              ("charts/sub/templates/pod.yaml", "charts")])
def test_own_renderer_refuses_a_chart_with_files_it_does_not_render(tmp_path, where, named):
    """Helm renders each of these (templates of any suffix, in subfolders, CRDs, subcharts): mpigen's own
    renderer, which `check --no-helm` and `diff` use for charts claiming `mpigen/source`, must not skip them."""
    folder = _claiming_mpigen(tmp_path)
    (folder / where).parent.mkdir(parents=True, exist_ok=True)
    (folder / where).write_text(PRIVILEGED_POD % ("hidden", ""), encoding="utf-8")
    if where.startswith("charts/"):
        (folder / "charts" / "sub" / "Chart.yaml").write_text("apiVersion: v2\nname: sub\nversion: 0.1.0\n",
                                                              encoding="utf-8")
    refused(mpigen("check", "--no-helm", folder),
            f"{folder.as_posix()}: cannot render without helm: `{named}` is not a file mpigen writes")


def test_own_renderer_refuses_helpers_that_are_not_mpigens(tmp_path):
    folder = _claiming_mpigen(tmp_path)
    helpers = folder / "templates" / "_helpers.tpl"
    # Under Helm the labels helper would print a second object into every template that includes it.
    text = helpers.read_text(encoding="utf-8").replace(
        'app.kubernetes.io/managed-by: {{ .Release.Service | quote }}',
        'app.kubernetes.io/managed-by: {{ .Release.Service | quote }}\n---\n' + PRIVILEGED_POD % ("hidden", ""))
    helpers.write_text(text, encoding="utf-8")
    refused(mpigen("check", "--no-helm", folder),
            f"{folder.as_posix()}: cannot render without helm: _helpers.tpl is not the one mpigen writes")


# --- High: input limits -------------------------------------------------------------------------

def _peak_rss_mib(before: int) -> float:
    """Peak RSS of the children waited for since `before` was taken (Linux: KiB)."""
    return max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024


def test_deep_brackets_are_a_finding_not_a_segfault(tmp_path):
    manifest = tmp_path / "brackets.yaml"
    manifest.write_text("[" * 80_000, encoding="utf-8")
    result = mpigen("check", "--no-helm", manifest)
    refused(result, f"{manifest.as_posix()}: document 1: line 1 of the document: lists and mappings nest more "
                    "than 100 deep")


def test_block_nesting_is_a_finding(tmp_path):
    manifest = tmp_path / "dashes.yaml"
    manifest.write_text("- " * 40_000 + "x\n", encoding="utf-8")
    refused(mpigen("check", "--no-helm", manifest), "lists and mappings nest more than 100 deep")


def test_an_alias_bomb_stops_at_once(tmp_path):
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    manifest = tmp_path / "bomb.yaml"
    manifest.write_text("\n".join(lines) + "\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
                        "data: {k: *a9}\n", encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    result = mpigen("check", "--no-helm", manifest, timeout=60)
    assert time.monotonic() - started < 20
    assert _peak_rss_mib(before) < 500
    refused(result, f"{manifest.as_posix()}: document 1: line 5 of the document: YAML aliases expand to more than "
                    "100000 nodes beyond those written")


def test_deep_json_is_a_finding_not_a_recursion_error(tmp_path):
    manifest = tmp_path / "deep.json"
    manifest.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    refused(mpigen("check", "--no-helm", manifest),
            f"{manifest.as_posix()}: not valid JSON: arrays and objects nest more than 100 deep (at offset 100)")


def test_a_huge_manifest_is_refused_unread(tmp_path):
    manifest = tmp_path / "huge.yaml"
    with manifest.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)
    refused(mpigen("check", "--no-helm", manifest),
            f"{manifest.as_posix()}: file is {17 * 1024 * 1024} bytes, more than the 16777216 check reads")


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_manifest_that_never_ends_is_refused(tmp_path, kind):
    manifest = tmp_path / "m.yaml"
    if kind == "device":
        manifest.symlink_to("/dev/zero")
    else:
        os.mkfifo(manifest)
    refused(mpigen("check", "--no-helm", manifest, timeout=30),
            f"{manifest.as_posix()}: is not a regular file (a device, FIFO or socket, or a link to one)")


@pytest.mark.parametrize("file", ["Chart.yaml", "values.yaml", "templates/mpijob.yaml", "templates/_helpers.tpl"])
def test_a_chart_file_linked_to_dev_zero_is_refused_before_helm_reads_it(helm, tmp_path, file):
    folder = _claiming_mpigen(tmp_path)
    (folder / file).unlink()
    (folder / file).symlink_to("/dev/zero")
    for args in (("--helm", helm), ("--no-helm",)):
        result = mpigen("check", *args, folder, timeout=60)
        if file == "Chart.yaml":
            refused(result, f"{folder.as_posix()}/Chart.yaml: cannot read Chart.yaml: is not a regular file")
        else:
            refused(result, f"{folder.as_posix()}/{file}: is a link to '/dev/zero', outside the chart; Helm would "
                            "read it")


def test_a_fifo_in_a_chart_is_refused(helm, tmp_path):
    folder = _claiming_mpigen(tmp_path)
    os.mkfifo(folder / "templates" / "x.yaml")
    refused(mpigen("check", "--helm", helm, folder, timeout=60),
            f"{folder.as_posix()}/templates/x.yaml: is not a regular file (a device, FIFO or socket, or a link to one)")


def test_a_chart_file_linked_out_of_the_chart_is_refused(helm, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cr3t-token\n", encoding="utf-8")
    folder = chart(tmp_path / "c", "c", {"cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n'
                                                    'data: {k: {{ .Files.Get "leak.txt" | quote }}}\n'})
    (folder / "leak.txt").symlink_to(secret)
    result = mpigen("check", "--helm", helm, folder, timeout=60)
    refused(result, f"{folder.as_posix()}/leak.txt: is a link to '{secret}', outside the chart")
    assert "s3cr3t" not in result.stdout + result.stderr


def test_helm_output_without_end_is_cut(helm, tmp_path):
    folder = chart(tmp_path / "loud", "loud", {"cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n'
                                                          'data: {k: "{{ repeat 20000000 "x" }}"}\n'})
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = mpigen("check", "--helm", helm, folder, timeout=120)
    refused(result, f"{folder.as_posix()}: helm template: printed more than 16777216 bytes on stdout")
    assert _peak_rss_mib(before) < 1024


def test_helm_output_nesting_deep_is_a_finding(helm, tmp_path):
    folder = chart(tmp_path / "deep", "deep", {"cm.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n'
                                                          'data: {k: "1"}\nx: {{ repeat 5000 "[" }}{{ repeat 5000 "]" }}\n'})
    refused(mpigen("check", "--helm", helm, folder, timeout=120),
            f"{folder.as_posix()}/templates/cm.yaml: document 2: line 6 of the document: lists and mappings nest "
            "more than 100 deep")


# --- Medium: YAML as Kubernetes reads it ---------------------------------------------------------

def test_yaml_1_1_booleans_are_judged_as_kubernetes_reads_them(tmp_path):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n"
                        "  hostNetwork: yes\n  containers:\n    - name: x\n      image: busybox:1.36\n"
                        "      securityContext: {privileged: on}\n", encoding="utf-8")
    result = mpigen("check", "--no-helm", manifest)
    assert "Traceback" not in result.stderr
    assert (f"pod security privileged: {manifest.as_posix()}: Pod/p in namespace default: hostNetwork: true; "
            "container x is privileged") in result.stdout, result.stdout


def test_a_kind_longer_than_a_file_name_is_an_unknown_kind(tmp_path):
    """The bundled schemas are files named after the kind: one past the file system's limit is no schema, not an
    OSError."""
    manifest = tmp_path / "long.yaml"
    manifest.write_text(f"apiVersion: v1\nkind: {'A' * 300}\nmetadata: {{name: x}}\n", encoding="utf-8")
    refused(mpigen("check", "--no-helm", "--strict", manifest), f"no schema known for v1 {'A' * 300}")


# --- A chart's CRD pattern cannot make check backtrack ---------------------------------------------

def crd_with_pattern(pattern: str) -> str:
    """A CRD whose R has one string, `spec.v`, of `pattern`."""
    return ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: rs.x.io}\n"
            "spec:\n  group: x.io\n  names: {kind: R, plural: rs}\n  scope: Namespaced\n  versions:\n"
            "    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n"
            "          type: object\n          properties:\n            spec:\n              type: object\n"
            f"              properties:\n                v: {{type: string, pattern: '{pattern}'}}\n")


def test_a_catastrophic_crd_pattern_is_judged_in_linear_time(tmp_path):
    (tmp_path / "crd.yaml").write_text(crd_with_pattern("^(a+)+$"), encoding="utf-8")
    (tmp_path / "r.yaml").write_text("apiVersion: x.io/v1\nkind: R\nmetadata: {name: r, namespace: default}\n"
                                     f"spec: {{v: {'a' * 100_000}!}}\n", encoding="utf-8")
    started = time.monotonic()
    result = mpigen("check", "--no-helm", tmp_path, timeout=60)
    assert time.monotonic() - started < 20
    refused(result, f"{(tmp_path / 'r.yaml').as_posix()}: R/r: .spec.v: 'aaaa")
    assert "does not match '^(a+)+$'" in result.stdout


def test_a_count_of_digits_re2_does_not_read_is_text(tmp_path):
    """`{²}` is no repetition to RE2 (nor to ECMA-262): the text `a{²}` matches `^a{²}$`; it stopped check with a
    traceback."""
    (tmp_path / "crd.yaml").write_text(crd_with_pattern("^a{²}$"), encoding="utf-8")
    (tmp_path / "r.yaml").write_text("apiVersion: x.io/v1\nkind: R\nmetadata: {name: r, namespace: default}\n"
                                     "spec: {v: 'a{²}'}\n", encoding="utf-8")
    result = mpigen("check", "--no-helm", tmp_path)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr
    (tmp_path / "r.yaml").write_text("apiVersion: x.io/v1\nkind: R\nmetadata: {name: r, namespace: default}\n"
                                     "spec: {v: aa}\n", encoding="utf-8")
    refused(mpigen("check", "--no-helm", tmp_path), ".spec.v: 'aa' does not match '^a{²}$'")


# --- Every file kubectl and Argo CD apply is judged, hidden ones too --------------------------------

@pytest.mark.parametrize("where", [".pod.yaml", ".hidden/pod.yaml", "sub/.pod.yml"])
def test_a_hidden_manifest_is_judged(tmp_path, where):
    """kubectl applies `.pod.yaml` in a folder it is given (and walks hidden folders under -R): found by the
    hostile-chart fuzzer, check skipped them and exited 0 past a privileged Pod."""
    (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / where).write_text(PRIVILEGED_POD % ("hidden", ""), encoding="utf-8")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "pod.yaml").write_text("not: [a manifest", encoding="utf-8")  # git's own folder is not
    result = mpigen("check", "--no-helm", tmp_path)
    assert result.returncode == 0, result.stdout
    assert (f"pod security privileged: {(tmp_path / where).as_posix()}: Pod/hidden in namespace default: "
            "hostPID: true; container x is privileged") in result.stdout, result.stdout
