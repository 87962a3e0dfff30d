"""Fuzzing `mpigen check` with hostile charts and manifest folders, through the real command line and real Helm.

`check` is the CI gate for charts a pull request brings, so every input is an attacker's. Each example writes one
chart (rendered by Helm 3 or 4), one chart that claims to be mpigen's (rendered by mpigen itself, `--no-helm`) or
one folder of plain manifests, drawn from these parts:

- the chart's name: Helm flags (`--post-renderer=sh` beside a template that is also a shell script, `--no-hooks`,
  `--output-dir=...`, `--set`, `-f`), valid names, names Helm refuses (capitals, too long, control characters,
  spaces) and YAML 1.1 scalars (`yes`, `0x1F`, a timestamp); a hostile `mpigen/kubernetes-version`;
- privileged workloads (Pod, Deployment, Job, DaemonSet, CronJob; `privileged`, `hostPID` or `hostNetwork`
  spelled `true`, `yes`, `on`, `y`...) in every place Helm renders or Argo CD applies: a template of any suffix,
  a subfolder, a Helm or Argo CD hook, a Helm test, `crds/`, a subchart, a `List`, a document after comments
  and `---` tricks, a `define` included from another template, a link inside the chart, a hidden manifest file;
  some with pods moved to another network (`v1.multus-cni.io/default-network` in every form Multus reads, a
  `k8s.v1.cni.cncf.io/networks` entry of kube-system's or an operator's namespace, Calico's addresses past IPAM);
- what must stop check cleanly: nesting past 100 levels (flow, block, JSON), alias bombs, links to
  `/dev/zero` or out of the chart (to a secret), FIFOs, files past the size limits, template code Helm fails
  on, and long adversarial strings (64 KiB to 4 MiB of `[`, `a:`, `&a `, `*a`, `\\"`, URLs with a password).

Whatever was drawn, the process must end within 60 s with exit code 0 or 1 and no traceback; nothing is created
or changed outside the chart (no post-renderer ran, Helm wrote nothing); the secret behind an outside link never
appears in the output; a chart name Helm would not take is a finding; and every privileged workload planted
where the cluster would get it is named in `podSecurity` as privileged, and its network annotation refused by the
network rule, unless check refused the input with an error because of one of the parts that must stop it (a
workload check sees always has its network annotation refused). An invisible object is the failure this looks for.

CI runs a fixed number of examples (20, Helm 3 or 4 drawn per example) from a fixed seed; `make fuzz` runs
MPIGEN_FUZZ_EXAMPLES / 4 from its seed, each chart with both Helm 3 and Helm 4, which must name the same
privileged workloads.

A second fuzzer aims at the reports: folders of manifests whose object names, namespaces, label and annotation keys
and values, container names, data and file names hold terminal escapes (OSC titles and hyperlinks, CSI, clear
screen), C0 and C1 controls, DEL, bidi controls, line separators, NUL, `\x01`, `\x0b`, lone surrogates and
U+FFFE/U+FFFF. Every format of the result must parse (JSON with `json`, JUnit with expat through ElementTree and
minidom, SARIF as JSON valid against the SARIF 2.1.0 schema), the text and JUnit reports may hold none of those
characters raw and the text report only its own line breaks, each finding's line and column must lie within its
file, and a name no DNS grammar allows must be a `names` finding. Some of the objects are Nodes (hostile labels, taints and
resources) and the pods ask for extended resources by hostile selectors and tolerations, so the drift rule
(`check --context` against live nodes) quotes hostile node names, labels and resources too; the pods claim devices
through hostile claim and template names, beside ResourceClaimTemplates of hostile requests, classes and attributes,
and each claim of a template the folder lacks must be a `devices` finding. CI runs 40 examples in process
(mpigen.check.run_check and report.FORMATS) and 4 through the real command line; `make fuzz` runs
MPIGEN_FUZZ_EXAMPLES / 4 and / 40. The same folders, as a cluster's GitOps bootstrap files under a cluster folder of
hostile name, feed `mpigen diff`'s reader and reports (in process, as many examples): each file its own unit under
its cluster, each object one change, text and JSON holding nothing raw.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import time
import xml.dom.minidom
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import CHARTS, RAW_CONTROL, REPO, require_helm, sarif_problems, schema_verdict_disagreements
from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from mpigen.check import CheckOptions
from mpigen.check import run_check as check_in_process
from mpigen.check.report import FORMATS, CheckReport
from mpigen.check.schemas import SchemaSet, bundled_kube_versions
from mpigen.diff import DiffReport, as_json, as_text
from mpigen.diff.compare import compare
from mpigen.diff.review import review
from mpigen.diff.sides import rendered_side
from mpigen.readback import kubeyaml
from mpigen.readback.discover import MAX_RELEASE_NAME, ChartInfo

MPIGEN = REPO / ".venv" / "bin" / "mpigen"
LONG = "MPIGEN_FUZZ_EXAMPLES" in os.environ
EXAMPLES = max(int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) // 4, 30) if LONG else 14  # CI: about 10 s
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_125)
SECONDS = 60
SECRET = "s3cr3t-9f1c2e7a"

# --- the parts -----------------------------------------------------------------------------------------------

FLAG_NAMES = ["--post-renderer=sh", "--post-renderer", "--no-hooks", "--skip-crds", "--skip-tests",
              "--output-dir=OUTSIDE", "--set=a=b", "-f", "--values=/etc/passwd", "--debug", "-", "--",
              "--dry-run=server", "--kubeconfig=/dev/null", "--include-crds=false", "--post-renderer-args=-c",
              "--repo=http://127.0.0.1:9", "-n", "--namespace=kube-system", "--api-versions=x/v1"]
YAML11_NAMES = ["yes", "no", "on", "off", "y", "null", "~", "0x1F", "0o17", "1e3", "2024-01-01", "2024-01-01 10:00:00",
                ".inf", "1_000", "true"]
TRUE_SPELLINGS = ["true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"]
HOOKS = [("helm.sh/hook", "pre-install"), ("helm.sh/hook", "post-install,post-upgrade"), ("helm.sh/hook", "test"),
         ("helm.sh/hook", "pre-delete"), ("helm.sh/hook", "test-success"), ("argocd.argoproj.io/hook", "PreSync"),
         ("argocd.argoproj.io/hook", "Sync"), ("argocd.argoproj.io/hook", "PostSync"),
         ("argocd.argoproj.io/hook", "SyncFail")]
KINDS = ["Pod", "Deployment", "Job", "DaemonSet", "CronJob"]
# Pod annotations that move a pod off its namespace's network (docs/security.md): each must be an error of the network
# rule, wherever the workload stands.
NETWORK_PLANTS = [("v1.multus-cni.io/default-network", "kube-system/host-bridge"),
                  ("v1.multus-cni.io/default-network", "host-bridge"),
                  ("v1.multus-cni.io/default-network", '[{"name": "host-bridge", "namespace": "kube-system"}]'),
                  ("k8s.v1.cni.cncf.io/networks", "kube-system/host-bridge"),
                  ("k8s.v1.cni.cncf.io/networks", '[{"name": "sriov-net", "namespace": "sriov-network-operator"}]'),
                  ("cni.projectcalico.org/ipAddrsNoIpam", '["10.0.0.9"]'),
                  ("cni.projectcalico.org/ipAddrs", '["10.0.0.9"]'), ("cni.projectcalico.org/ipv4pools", '["dmz"]'),
                  ("ipam.cilium.io/ip-pool", "dmz"), ("ovn.kubernetes.io/logical_switch", "tenant-b"),
                  ("ovn.kubernetes.io/ip_address", "10.16.0.15"), ("ovn.kubernetes.io/mac_address", "00:00:00:53:6b:b6"),
                  ("ipam.antrea.io/ippools", "dmz"), ("ipam.antrea.io/pod-ips", "10.0.0.9"),
                  ("ipam.spidernet.io/ippool", '{"ipv4": ["dmz"]}')]
LONG_PIECES = ["[", "{", "a:", "&a ", "*a", '\\"', "'", "https://u:p@h/", "- ", "? ", "#", "\t", "é", "{{"]


@dataclass
class Hostile:
    """One input for check: a chart or a folder of manifests, and what check must make of it."""

    mode: str  # "helm" (a chart Helm renders), "own" (a chart claiming mpigen, --no-helm), "manifests"
    files: dict[str, str] = field(default_factory=dict)
    specials: dict[str, str] = field(default_factory=dict)  # path -> "dev-zero", "fifo", "outside", "huge", "link:..."
    workloads: list[str] = field(default_factory=list)  # Kind/name of each privileged workload the cluster gets
    networks: list[tuple[str, str]] = field(default_factory=list)  # (Kind/name, annotation key) moving pods' networks
    stoppers: list[str] = field(default_factory=list)  # parts that may make check refuse before it sees them
    name: str | None = None  # the chart name as a string (None: a YAML 1.1 scalar, or no chart)
    parts: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        shown = {path: (text if len(text) < 300 else f"{text[:120]!r}... ({len(text)} characters)")
                 for path, text in self.files.items()}
        return f"Hostile({self.mode}, parts={self.parts}, specials={self.specials}, files={shown})"


def workload(kind: str, name: str, spelled: str, where: str, annotations: dict[str, str],
             pod_annotations: dict[str, str] | None = None) -> str:
    """A privileged workload of `kind` in block YAML; `spelled` is how `true` is written, `where` which field;
    `pod_annotations` go where the kind keeps its pods' metadata."""
    pod_annotations = pod_annotations or {}
    if kind == "Pod":
        annotations = {**annotations, **pod_annotations}
    meta = "".join(f"\n    {key}: {json.dumps(value)}" for key, value in annotations.items())
    meta = f"\n  annotations:{meta}" if annotations else ""
    flag = {"privileged": f"      securityContext: {{privileged: {spelled}}}\n", "hostPID": "", "hostNetwork": ""}[where]
    pod = f"  {where}: {spelled}\n" if where != "privileged" else ""
    pod += f"  containers:\n    - name: x\n      image: busybox:1.36\n{flag}"
    if kind == "Pod":
        spec = pod
    else:
        inner = "".join("    " + line + "\n" if line else "\n" for line in pod.splitlines())
        extra = "".join(f", {json.dumps(key)}: {json.dumps(value)}" for key, value in pod_annotations.items())
        template = (f"  template:\n    metadata: {{labels: {{app: {name}}}"
                    f"{f', annotations: {{{extra[2:]}}}' if extra else ''}}}\n    spec:\n{inner}")
        if kind == "CronJob":
            template = "".join("    " + line + "\n" for line in template.splitlines())
            spec = f"  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n{template}"
        elif kind == "Job":
            spec = template.replace("    spec:\n", "    spec:\n      restartPolicy: Never\n", 1)
        else:
            spec = f"  selector: {{matchLabels: {{app: {name}}}}}\n{template}"
    api = {"Pod": "v1", "Job": "batch/v1", "CronJob": "batch/v1"}.get(kind, "apps/v1")
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  namespace: default{meta}\nspec:\n{spec}"


@st.composite
def privileged_workloads(draw: st.DrawFn, index: int) -> tuple[str, str, str | None]:
    """(Kind/name, its YAML, the network annotation its pods carry or None), privileged one way or another."""
    kind = draw(st.sampled_from(KINDS))
    name = f"w{index}-{kind.lower()}"
    where = draw(st.sampled_from(["privileged", "hostPID", "hostNetwork"]))
    annotations = dict([draw(st.sampled_from(HOOKS))]) if draw(st.booleans()) else {}
    network = draw(st.sampled_from([None, None, *NETWORK_PLANTS]))
    spelled = draw(st.sampled_from(TRUE_SPELLINGS))
    text = workload(kind, name, spelled, where, annotations, dict([network] if network else []))
    return f"{kind}/{name}", text, network[0] if network else None


def indent(text: str, by: int) -> str:
    return "".join(" " * by + line + "\n" for line in text.splitlines())


@st.composite
def placements(draw: st.DrawFn, case: Hostile, index: int) -> None:
    """Plant one privileged workload where Helm renders it (charts) or kubectl and Argo CD apply it (folders)."""
    kind_name, text, network = draw(privileged_workloads(index))
    chart = case.mode != "manifests"
    where = draw(st.sampled_from(
        ["template", "suffix", "subfolder", "list", "comments", "define", "crds", "subchart", "link"]
        + (["mpijob", "appended"] * 3 if case.mode == "own" else []) if chart
        else ["file", "yml", "json", "subfolder", "list", "comments", "hidden", "link"]))
    stem = f"w{index}"
    if where == "mpijob":  # mpigen's own file names, with other objects in them
        planted = "workload in mpijob" in case.parts
        case.files["templates/mpijob.yaml"] = (case.files["templates/mpijob.yaml"] + "---\n" if planted else "") + text
    elif where == "appended":
        case.files["templates/hostfile-configmap.yaml"] += f"---\n{text}"
    elif where in ("template", "file"):
        case.files[f"{'templates/' if chart else ''}{stem}.yaml"] = text
    elif where == "suffix":
        case.files[f"templates/{stem}.{draw(st.sampled_from(['txt', 'yml', 'json', 'tpl.yaml', 'conf']))}"] = text
    elif where == "yml":
        case.files[f"{stem}.yml"] = text
    elif where == "json":
        case.files[f"{stem}.json"] = json.dumps(_yaml_obj(text))
    elif where == "subfolder":
        case.files[f"{'templates/' if chart else ''}a/b/{stem}.yaml"] = text
    elif where == "list":
        case.files[f"{'templates/' if chart else ''}{stem}-list.yaml"] = (
            "apiVersion: v1\nkind: List\nitems:\n" + indent(text, 2).replace("  apiVersion", "- apiVersion", 1))
    elif where == "comments":
        decoy = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + stem + "-cm, namespace: default}\n" \
                "data:\n  script: |\n    ---\n    apiVersion: v1\n"
        case.files[f"{'templates/' if chart else ''}{stem}-docs.yaml"] = (
            f"# a comment\n---\n---  # an empty document\n{decoy}--- # then the workload\n{text}...\n")
    elif where == "define":
        case.files["templates/_defs.tpl"] = case.files.get("templates/_defs.tpl", "") + (
            f'{{{{- define "w.{stem}" }}}}\n{text}{{{{- end }}}}\n')
        case.files[f"templates/{stem}-include.yaml"] = f'{{{{ include "w.{stem}" . }}}}\n'
    elif where == "crds":
        case.files[f"crds/{stem}.yaml"] = text
    elif where == "subchart":
        sub = draw(st.sampled_from(["sub", "Sub_Chart"]))
        case.files[f"charts/{sub}/Chart.yaml"] = f"apiVersion: v2\nname: {sub}\nversion: 0.1.0\n"
        case.files[f"charts/{sub}/templates/{stem}.yaml"] = text
    elif where == "hidden":
        case.files[f".{stem}.yaml"] = text
    elif where == "link":
        case.files[f"extra/{stem}.txt"] = text
        case.specials[f"{'templates/' if chart else ''}{stem}-link.yaml"] = f"link:extra/{stem}.txt"
    case.workloads.append(kind_name)
    case.parts.append(f"workload in {where}")
    if network:
        case.networks.append((kind_name, network))
        case.parts.append(f"pods on another network by {network}")


def _yaml_obj(text: str) -> Any:
    """The workload's YAML as Kubernetes reads it (YAML 1.1 booleans), for its JSON spelling."""
    return kubeyaml.load_all(text)[0]


@st.composite
def stoppers(draw: st.DrawFn, case: Hostile) -> None:
    """One part that must stop check cleanly (a finding, in bounded time and memory)."""
    chart = case.mode != "manifests"
    prefix = "templates/" if chart else ""
    part = draw(st.sampled_from(["flow-depth", "block-depth", "alias-bomb", "deep-json", "dev-zero", "fifo",
                                 "outside-link", "huge", "bad-template", "long-string"]
                                if chart else
                                ["flow-depth", "block-depth", "alias-bomb", "deep-json", "dev-zero", "fifo",
                                 "outside-link", "huge", "long-string"]))
    if part == "flow-depth":
        depth = draw(st.integers(101, 80_000))
        case.files[f"{prefix}deep.yaml"] = "data: " + "[" * depth + "]" * draw(st.sampled_from([0, depth])) + "\n"
    elif part == "block-depth":
        depth = draw(st.integers(101, 40_000))
        case.files[f"{prefix}dashes.yaml"] = "- " * depth + "x\n"
    elif part == "alias-bomb":
        levels = draw(st.integers(5, 12))
        lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
        lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
        case.files[f"{prefix}bomb.yaml"] = "\n".join(lines) + (
            f"\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: bomb}}\ndata: {{k: *a{levels - 1}}}\n")
    elif part == "deep-json":
        depth = draw(st.integers(101, 100_000))
        case.files[f"{prefix if chart else ''}deep.json"] = "[" * depth + "]" * depth
    elif part in ("dev-zero", "fifo", "huge"):
        where = draw(st.sampled_from(["Chart.yaml", "values.yaml", "templates/z.yaml", "templates/_z.tpl"]
                                     if chart else ["z.yaml", "sub/z.json"]))
        if chart and where == "Chart.yaml" and part == "fifo":
            where = "templates/z.yaml"
        case.specials[where] = part
    elif part == "outside-link":
        where = draw(st.sampled_from(["leak.txt", "templates/leak.yaml", "values.yaml"] if chart else ["leak.yaml"]))
        case.specials[where] = "outside"
        if chart and where == "leak.txt":
            case.files["templates/leak-cm.yaml"] = ('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leak}\n'
                                                    'data: {k: {{ .Files.Get "leak.txt" | quote }}}\n')
    elif part == "bad-template":
        case.files["templates/bad.yaml"] = draw(st.sampled_from(
            ['{{ fail "no" }}\n', "{{ .Values.missing.deeper }}\n", "{{ if }}\n", '{{ include "nowhere" . }}\n',
             '{{ tpl "{{ fail \\"x\\" }}" . }}\n']))
    elif part == "long-string":
        piece = draw(st.sampled_from([p for p in LONG_PIECES if not (chart and "{{" in p)]))
        size = draw(st.sampled_from([64 * 1024, 1024 * 1024 - 100, 3 * 1024 * 1024 + 10, 4 * 1024 * 1024]))
        value = (piece * (size // len(piece) + 1))[:size]
        case.files[f"{prefix}long.yaml"] = (
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: long, namespace: default}}\n"
            f"data:\n  k: {json.dumps(value)}\n")
        if size < 1024 * 1024:
            case.parts.append(f"long-string {size} of {piece!r} (no stopper)")
            return
    case.stoppers.append(part)
    case.parts.append(part)


@st.composite
def chart_names(draw: st.DrawFn) -> tuple[str, str | None, str]:
    """(how Chart.yaml spells the name, the name as a string or None when YAML types it, what kind of name)."""
    kind = draw(st.sampled_from(["flag", "valid", "invalid", "yaml11"]))
    if kind == "flag":
        name = draw(st.sampled_from(FLAG_NAMES))
    elif kind == "valid":
        name = draw(st.from_regex(r"[a-z][a-z0-9-]{0,30}[a-z0-9]", fullmatch=True))
    elif kind == "invalid":
        name = draw(st.one_of(
            st.sampled_from(["Caps", "under_score", "a b", "trailing-", "-leading", "a" * (MAX_RELEASE_NAME + 1),
                             "dots..x", "tab\tname", "new\nline", "bell\x07", "é", "a/b", "../x", "$(touch x)"]),
            st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=60)))
    else:
        name = draw(st.sampled_from(YAML11_NAMES))
        return name, None, kind
    return json.dumps(name), name, kind


@st.composite
def hostile_inputs(draw: st.DrawFn) -> Hostile:
    case = Hostile(draw(st.sampled_from(["helm", "helm", "own", "manifests"])))
    if case.mode != "manifests":
        spelled, case.name, kind = draw(chart_names())
        if case.mode == "own" and draw(st.booleans()):
            spelled, case.name, kind = '"pi"', "pi", "own"  # _helpers.tpl names its chart: others are refused
        case.parts.append(f"name {kind}")
        annotations = ""
        if case.mode == "own":  # mpigen's chart of the example job `pi`, under another name
            own = CHARTS / "dgx-lab" / "jobs" / "pi"
            case.files.update({path.relative_to(own).as_posix(): path.read_text(encoding="utf-8")
                               for path in sorted(own.rglob("*")) if path.is_file()})
            annotations = "annotations:\n  mpigen/source: profiles/jobs/pi.yaml\n"
        if draw(st.booleans()):
            version = draw(st.sampled_from(["1.31", "--post-renderer=sh", "1.31 --set=x", "v1.30.2", "x", "", "1.9"]))
            annotations = (annotations or "annotations:\n") + f"  mpigen/kubernetes-version: {json.dumps(version)}\n"
            case.parts.append(f"kubernetes-version {version!r}")
        case.files["Chart.yaml"] = f"apiVersion: v2\nname: {spelled}\nversion: 0.1.0\n{annotations}"
        if case.name is not None and case.name.startswith("--post-renderer"):
            # YAML for Helm, and a script for `sh`: run from check's folder, it would leave a marker beside the chart.
            case.files["templates/script.yaml"] = (
                "touch MARKER; printf 'apiVersion\\072 v1\\nkind\\072 ConfigMap\\nmetadata\\072\\n  name\\072 x\\n'"
                "; exit 0; k: v\n")
            case.stoppers.append("script template")  # not an object: an error finding, the workloads still seen
    for index in range(draw(st.integers(0, 3))):
        draw(placements(case, index))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):
        draw(stoppers(case))
    if not case.files and not case.specials:
        case.files["empty.yaml"] = "# nothing\n"
    for part in case.parts:
        event(f"{case.mode}: {part.split(' ')[0] if part.startswith(('long', 'kubernetes')) else part}")
    return case


# --- writing and checking ---------------------------------------------------------------------------------------

def write(case: Hostile, root: Path) -> Path:
    """The input under root/input; root/outside holds the secret an outside link points at."""
    target = root / "input"
    target.mkdir()
    (root / "outside").mkdir()
    secret = root / "outside" / "secret.txt"
    secret.write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {SECRET}}}\n", encoding="utf-8")
    for relative, text in case.files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    for relative, special in case.specials.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        if special == "dev-zero":
            path.symlink_to("/dev/zero")
        elif special == "fifo":
            os.mkfifo(path)
        elif special == "outside":
            path.symlink_to(secret)
        elif special == "huge":
            with path.open("wb") as handle:
                handle.truncate(17 * 1024 * 1024)
        else:
            path.symlink_to(os.path.relpath(target / special.removeprefix("link:"), path.parent))
    return target


def tree(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under root, with its type, size and modification time (links not followed)."""
    return {path.relative_to(root).as_posix(): ((st_ := path.lstat()).st_mode, st_.st_size, st_.st_mtime_ns)
            for path in root.rglob("*")}


def run_check(target: Path, mode: str, helm: Path | None) -> tuple[subprocess.CompletedProcess[str], float]:
    command = [str(MPIGEN)] if MPIGEN.exists() else [sys.executable, "-m", "mpigen"]
    args = ["check", "--output", "json", *(["--helm", str(helm)] if helm else ["--no-helm"]), str(target)]
    started = time.monotonic()
    try:
        result = subprocess.run([*command, *args], capture_output=True, text=True, timeout=SECONDS,
                                cwd=target.parent, errors="replace")
    except subprocess.TimeoutExpired:
        pytest.fail(f"mpigen check ran past {SECONDS} s")
    return result, time.monotonic() - started


def verdict(case: Hostile, target: Path, result: subprocess.CompletedProcess[str]) -> set[str]:
    """Assert what holds for any input; return the privileged workloads check named."""
    output = result.stdout + result.stderr
    assert result.returncode in (0, 1), (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in output, result.stderr[-3000:]
    assert SECRET not in output, "the secret behind a link out of the chart was read"
    report = json.loads(result.stdout)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    named = {entry["object"] for entry in report["podSecurity"] if entry["level"] == "privileged"}
    if case.name is not None:
        valid = ChartInfo(target, "", case.name, {}).has_valid_name
        refusal = f"name {json.dumps(case.name[:80])} is not a valid Helm release name"
        if "Chart.yaml" in case.specials:
            pass  # Chart.yaml itself is refused: the name is never read
        elif valid:
            assert not any(refusal in f["message"] for f in errors)
        else:
            assert result.returncode == 1, errors
            assert any(refusal in f["message"] or f["source"].endswith("Chart.yaml") for f in errors), errors
    refused_networks = {(f["object"], key) for f in errors if f["rule"] == "network"
                        for _, key in case.networks if f["message"].startswith(key + " ")}
    passed = [f"{w} ({key})" for w, key in case.networks if w in named and (w, key) not in refused_networks]
    assert not passed, f"{passed}: seen, but their network annotations were not refused"
    missing = [w for w in case.workloads if w not in named]
    missing += [f"{w} ({key})" for w, key in case.networks if (w, key) not in refused_networks]
    if missing:
        assert result.returncode == 1 and errors, f"{missing} not seen, and check exited {result.returncode}"
        # Helm failing to render the chart stops Argo CD and Flux too: nothing of it reaches the cluster.
        # So does a Chart.yaml no YAML reader takes.
        helm_failed = any((f["rule"] == "render" and f["message"].startswith("helm template:"))
                          or (f["rule"] == "chart" and f["source"].endswith("Chart.yaml")
                              and f["message"].startswith(("cannot read Chart.yaml", "Chart.yaml is not")))
                          for f in errors)
        # mpigen's own renderer refuses, whole, a chart with files it would render otherwise than Helm.
        refused_unrendered = any(f["message"].startswith("cannot render without helm:") for f in errors)
        assert case.stoppers or helm_failed or refused_unrendered, (
            f"{missing} not seen although nothing had to stop check: {[f['message'][:200] for f in errors]}")
    event(f"{case.mode}: exit {result.returncode}")
    if case.workloads:
        event(f"{case.mode}: planted workloads " + ("all seen" if not missing else "behind a refusal"))
    if case.networks:
        event(f"{case.mode}: network annotations " + ("all refused" if not missing else "behind a refusal"))
    return named


def helms() -> list[Path]:
    return [require_helm(3), require_helm(4)]


def _settings(examples: int = EXAMPLES) -> Callable[[Any], Any]:
    database = DirectoryBasedExampleDatabase(str(REPO / ".hypothesis" / "examples"))
    return settings(max_examples=examples, deadline=None, database=database if LONG else None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@seed(SEED)
@_settings()
@given(case=hostile_inputs(), which=st.integers(0, 1))
def test_check_sees_every_privileged_workload_or_refuses_cleanly(tmp_path_factory, case: Hostile, which: int):
    available = helms()
    root = tmp_path_factory.mktemp("hostile")
    target = write(case, root)
    before = tree(root)
    versions = (available if LONG else [available[which % len(available)]]) if case.mode == "helm" else [None]
    seen = []
    for helm in versions:
        result, seconds = run_check(target, case.mode, helm)
        seen.append(verdict(case, target, result))
        event(f"{case.mode}: {'over' if seconds > 5 else 'under'} 5 s")
    assert tree(root) == before, "check created or changed files"
    assert all(named == seen[0] for named in seen), f"Helm 3 and Helm 4 saw other workloads: {seen}"


# --- the reports, on text that is no text ---------------------------------------------------------------------

REPORT_EXAMPLES = max(int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) // 4, 40) if LONG else 40  # in process: a few seconds
CLI_EXAMPLES = max(int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) // 40, 4) if LONG else 4
PIECES = ["\x1b]0;title\x07", "\x1b]8;;https://example.invalid/\x1b\\", "\x1b]8;;\x1b\\", "\x1b[2J", "\x1b[1;1H",
          "\x1b[31m", "\x9b", "\x85", "\x90", "\x00", "\x01", "\x08", "\x0b", "\x0c", "\r", "\n", "\t", "\x7f",
          "\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u200f", "\u061c", "\u2028", "\u2029", "\ud800",
          "\udfff", "\udcff", "\ufffe", "\uffff", "\ufeff", "a", "Z", "0", "-", ".", "_", "/", "%", "..", " ", ":",
          '"', "<", "&", "]]>", "é", "\U0001d7d8"]
DNS_KINDS = {"Pod": "v1", "ConfigMap": "v1", "Secret": "v1", "Service": "v1", "Namespace": "v1", "Deployment": "apps/v1"}
CLAIM_TEMPLATE = "ResourceClaimTemplate"
PLAIN_NAME = re.compile("[a-z0-9.-]+")
hostile_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), max_size=8).map("".join)


def hostile_node(draw: st.DrawFn, metadata: dict[str, Any]) -> dict[str, Any]:
    """A Node whose labels, taints and advertised resources hold hostile text: the drift rule quotes them."""
    taints = [{"key": draw(hostile_text), "value": draw(hostile_text),
               "effect": draw(st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"]))}
              for _ in range(draw(st.integers(0, 2)))]
    offers = {**draw(st.dictionaries(hostile_text, st.sampled_from(["1", "8", "0"]), max_size=2)), "example.com/x": "1"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": {"taints": taints},
            "status": {"allocatable": offers, "capacity": offers}}


@st.composite
def hostile_objects(draw: st.DrawFn) -> dict[str, Any]:
    """One object of a kind with a DNS name rule, or a Node, with hostile text in every string the reports may
    quote."""
    kind = draw(st.sampled_from([*sorted(DNS_KINDS), "Node", CLAIM_TEMPLATE]))
    metadata: dict[str, Any] = {"name": draw(st.one_of(hostile_text, st.just("ok")))}
    if kind == "Node":
        metadata["labels"] = draw(st.dictionaries(hostile_text, hostile_text, max_size=2))
        return hostile_node(draw, metadata)
    if kind != "Namespace":
        metadata["namespace"] = draw(st.one_of(hostile_text, st.just("ml")))
    metadata["labels"] = draw(st.dictionaries(hostile_text, hostile_text, max_size=2))
    metadata["annotations"] = draw(st.dictionaries(hostile_text, hostile_text, max_size=2))
    obj: dict[str, Any] = {"apiVersion": DNS_KINDS.get(kind, "resource.k8s.io/v1"), "kind": kind, "metadata": metadata}
    if kind in ("Pod", "Deployment"):
        claims = [{"name": draw(hostile_text), "resourceClaimTemplateName": draw(st.one_of(hostile_text, st.just("ok")))}
                  for _ in range(draw(st.integers(0, 1)))]
        containers = [{"name": draw(hostile_text), "image": "busybox:1.36",
                       "securityContext": {"privileged": draw(st.booleans())},
                       "resources": {"limits": draw(st.dictionaries(
                           st.one_of(st.just("example.com/x"), st.just("nvidia.com/gpu"),
                                     hostile_text.map(lambda text: f"example.com/{text}")),
                           st.sampled_from(["1", "2"]), max_size=1)),
                           "claims": [{"name": draw(st.one_of(hostile_text, *(st.just(c["name"]) for c in claims)))}
                                      for _ in range(draw(st.integers(0, 1)))]}}
                      for _ in range(draw(st.integers(1, 2)))]
        pod: dict[str, Any] = {"containers": containers, "resourceClaims": claims}
        pod["nodeSelector"] = draw(st.dictionaries(hostile_text, hostile_text, max_size=1))
        pod["tolerations"] = [{"key": draw(hostile_text), "operator": "Exists"} for _ in range(draw(st.integers(0, 1)))]
        obj["spec"] = pod if kind == "Pod" else {"selector": {"matchLabels": {"app": "x"}}, "template": {
            "metadata": {"labels": draw(st.dictionaries(hostile_text, hostile_text, max_size=1))}, "spec": pod}}
    elif kind == CLAIM_TEMPLATE:  # the devices rule quotes its request's name, class and attribute
        request = {"name": draw(hostile_text), "exactly": {"deviceClassName": draw(st.one_of(
            hostile_text, st.just("gpu.nvidia.com")))}}
        obj["spec"] = {"spec": {"devices": {"requests": [request], "constraints": [{"matchAttribute": draw(st.one_of(
            hostile_text, st.just("resource.kubernetes.io/numaNode"), hostile_text.map(lambda text: f"x.io/{text}")))}]}}}
    elif kind in ("ConfigMap", "Secret"):
        obj["data" if kind == "ConfigMap" else "stringData"] = draw(st.dictionaries(hostile_text, hostile_text,
                                                                                    max_size=2))
    return obj


def file_name(text: str) -> str:
    """What of `text` a file name can hold: no NUL, `/` or surrogate (Python writes none), at most 100 bytes."""
    kept = "".join(ch for ch in text if ch not in "\x00/" and not "\ud800" <= ch <= "\udfff")
    return (kept.encode()[:100].decode(errors="ignore") or "x") + ".json"


@st.composite
def hostile_folders(draw: st.DrawFn) -> dict[str, str]:
    """File name -> JSON text of one object (the one spelling that holds NUL and lone surrogates)."""
    files: dict[str, str] = {}
    for index, obj in enumerate(draw(st.lists(hostile_objects(), min_size=1, max_size=4))):
        files[f"{index}-{file_name(draw(hostile_text))}"] = json.dumps(obj)
    return files


def write_folder(files: dict[str, str], root: Path) -> Path:
    folder = root / "manifests"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def assert_reports_hold(format_: str, text: str) -> None:
    """`text` is the report in `format_`: it parses, and prints nothing of its input raw."""
    if format_ in ("json", "sarif"):
        json.loads(text)
        assert text.isascii()
        assert format_ == "json" or sarif_problems(text) == []
        return
    found = RAW_CONTROL.search(text)
    assert found is None, f"{format_}: raw {found.group()!r} in {text[max(found.start() - 80, 0):found.end() + 80]!r}"
    text.encode("utf-8")  # no lone surrogate
    if format_ == "junit":
        ET.fromstring(text.encode("utf-8"))
        xml.dom.minidom.parseString(text.encode("utf-8"))


def assert_claims_judged(report: CheckReport) -> None:
    """Each pod's claim naming a ResourceClaimTemplate that no document of the folder is, is a `devices` finding at
    that claim, whatever the names hold."""
    templates = {document.name for document in report.documents if document.kind == CLAIM_TEMPLATE}
    found = {(f.object, f.path) for f in report.findings if f.rule == "devices"}
    for document in report.documents:
        prefix, pod = (".spec", document.obj.get("spec")) if document.kind == "Pod" else \
            (".spec.template.spec", ((document.obj.get("spec") or {}).get("template") or {}).get("spec"))
        if document.kind not in ("Pod", "Deployment") or not isinstance(pod, dict):
            continue
        for i, claim in enumerate(pod.get("resourceClaims") or []):
            name = claim.get("resourceClaimTemplateName")
            if isinstance(name, str) and name and name not in templates:
                assert (document.label, f"{prefix}.resourceClaims[{i}].resourceClaimTemplateName") in found, claim
                event("devices: a claim of no template refused")


@functools.cache
def newest_schemas() -> SchemaSet:
    """The schemas check judges a folder of manifests by (no --kube-version: the newest Kubernetes)."""
    return SchemaSet(bundled_kube_versions()[-1])


def assert_names_judged(report: CheckReport) -> None:
    """Each object the folder gave whose name no DNS grammar allows is a `names` finding at metadata.name."""
    refused = {f.object for f in report.findings if f.rule == "names" and f.path == ".metadata.name"}
    for document in report.documents:
        if document.kind in DNS_KINDS and document.name and not PLAIN_NAME.fullmatch(document.name):
            assert document.label in refused, f"{document.label!r} passed"
            event("names: a hostile name refused")


@seed(SEED)
@_settings(REPORT_EXAMPLES)
@given(files=hostile_folders())
def test_every_report_parses_and_prints_no_control_character_of_its_input(tmp_path_factory, files):
    folder = write_folder(files, tmp_path_factory.mktemp("hostile-names"))
    report = check_in_process([folder], CheckOptions(use_helm=False))
    assert len(report.files) == len(files)
    for format_, formatter in FORMATS.items():
        assert_reports_hold(format_, formatter(report))
    for finding, (line, column) in report.places.items():  # a finding's place lies within its file
        lines = Path(finding.source).read_text(encoding="utf-8").split("\n")
        assert 1 <= line <= len(lines) and 0 <= column <= len(lines[line - 1]) + 1, (finding, line, column)
    text = FORMATS["text"](report)
    assert len(text.splitlines()) == len(report.findings) + len(report.pod_security) + 1  # one line each, no more
    assert_names_judged(report)
    assert_claims_judged(report)
    judged = schema_verdict_disagreements(newest_schemas(), report.documents)
    assert not judged.disagreements, "\n".join(judged.disagreements)
    event(f"schemas: {judged.compiled} document(s) judged by both validators, {judged.refused} refused")
    event(f"reports: {len(report.documents)} document(s) read of {len(files)}")
    event(f"drift: {'some' if any(f.rule == 'drift' for f in report.findings) else 'no'} finding")


@seed(SEED)
@_settings(REPORT_EXAMPLES)
@given(files=hostile_folders(), cluster=hostile_text)
def test_every_diff_report_parses_and_prints_no_control_character_of_its_input(tmp_path_factory, files, cluster):
    charts = tmp_path_factory.mktemp("hostile-diff") / "charts"
    name = file_name(cluster)[:-len(".json")]
    name = f"x{name}" if name in (".", "..") else name
    (charts / name / "bootstrap").mkdir(parents=True)
    write_folder(files, charts / name / "bootstrap")
    old, problems = rendered_side(charts, None)
    assert {unit.cluster for unit in old.values()} == {name} and len(old) == len(files)
    assert all(unit.bootstrap and unit.path.startswith(f"{name}/bootstrap/manifests/") for unit in old.values())
    changed = compare(old, {})
    assert compare(old, old) == [] and sum(len(unit.changes) for unit in changed) == len(files)  # one object a file
    found = review(changed, old, {}, "charts")
    report = DiffReport("charts", tuple(changed), found.actions, found.notes, tuple(problems))
    text = as_text(report)
    assert_reports_hold("text", text)
    assert_reports_hold("json", as_json(report))
    assert sum(line.startswith("== cluster ") for line in text.splitlines()) == len(files)
    event(f"diff: {sum(unit.changes[0].before is not None for unit in changed)} of {len(files)} file(s) read as objects")


@seed(SEED)
@_settings(CLI_EXAMPLES)
@given(files=hostile_folders(), format_=st.sampled_from(sorted(FORMATS)))
def test_the_real_command_prints_no_control_character_of_its_input(tmp_path_factory, files, format_):
    folder = write_folder(files, tmp_path_factory.mktemp("hostile-names-cli"))
    command = [str(MPIGEN)] if MPIGEN.exists() else [sys.executable, "-m", "mpigen"]
    result = subprocess.run([*command, "check", "--no-helm", "--output", format_, str(folder)], capture_output=True,
                            timeout=SECONDS)
    stdout, stderr = result.stdout.decode("utf-8"), result.stderr.decode("utf-8")  # strict: no byte that is no UTF-8
    assert result.returncode in (0, 1) and "Traceback" not in stderr, stderr[-3000:]
    assert not RAW_CONTROL.search(stderr)
    assert_reports_hold(format_, stdout)
