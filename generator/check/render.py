"""Turn check targets into documents: charts rendered by Helm (or, for charts mpigen compiled and
no Helm at hand, by mpigen's own renderer), and plain manifest files read as they are."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from generator import yamlio
from generator.build.labels import ChartRef, standard_labels
from generator.check.findings import Document, Finding, NodeShape
from generator.diagnostics import Severity

HELM_TIMEOUT = 120
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class ChartInfo:
    """A chart folder and what its Chart.yaml says; `display` is the folder as the user named it."""

    path: Path
    display: str
    name: str
    annotations: dict[str, str]

    @property
    def compiled_by_mpigen(self) -> bool:
        return "mpigen/source" in self.annotations

    @property
    def kubernetes_version(self) -> str | None:
        return self.annotations.get("mpigen/kubernetes-version")

    @property
    def node_shape(self) -> NodeShape | None:
        raw = self.annotations.get("mpigen/node-resources")
        if raw is None:
            return None
        try:
            resources = json.loads(raw)
        except ValueError:
            return None
        return NodeShape(self.annotations.get("mpigen/cluster", ""), self.annotations.get("mpigen/pool", ""),
                         {str(k): v for k, v in resources.items()} if isinstance(resources, dict) else {})


@dataclass
class Targets:
    charts: list[ChartInfo] = field(default_factory=list)
    manifests: list[Path] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)


def _safe_yaml() -> YAML:
    yaml = YAML(typ="safe")  # the C parser of ruamel.yaml.clib when installed; same results, ~10x faster
    yaml.allow_duplicate_keys = False
    return yaml


def read_chart(path: Path, display: str) -> ChartInfo | Finding:
    try:
        meta = _safe_yaml().load((path / "Chart.yaml").read_text(encoding="utf-8"))
    except (OSError, YAMLError, UnicodeDecodeError) as exc:
        return Finding(f"{display}/Chart.yaml", "", "", f"cannot read Chart.yaml: {exc}", "chart")
    if not isinstance(meta, dict):
        return Finding(f"{display}/Chart.yaml", "", "", "Chart.yaml is not a mapping", "chart")
    annotations = meta.get("annotations") or {}
    return ChartInfo(path, display, str(meta.get("name", path.name)),
                     {str(k): str(v) for k, v in annotations.items()} if isinstance(annotations, dict) else {})


def discover(paths: list[Path]) -> Targets:
    """Chart folders (those holding Chart.yaml) and manifest files under `paths`, in a stable order."""
    targets = Targets()
    for root in paths:
        display = root.as_posix().rstrip("/") or "."
        if root.is_file():
            targets.manifests.append(root)
            continue
        if not root.is_dir():
            targets.problems.append(Finding(display, "", "", "no such file or folder", "usage"))
            continue
        seen: set[Path] = set()
        for folder, subfolders, files in os.walk(root, followlinks=True):
            here = Path(folder)
            if here.resolve() in seen:
                subfolders[:] = []
                continue
            seen.add(here.resolve())
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            if "Chart.yaml" in files:
                subfolders[:] = []  # a chart's own files (templates, subcharts) are Helm's to read
                relative = here.relative_to(root).as_posix()
                info = read_chart(here, display if relative == "." else f"{display}/{relative}")
                (targets.problems if isinstance(info, Finding) else targets.charts).append(info)
                continue
            targets.manifests += [here / name for name in sorted(files)
                                  if name.endswith(MANIFEST_SUFFIXES) and not name.startswith(".")]
    targets.charts.sort(key=lambda chart: chart.display)
    return targets


_SEPARATOR = re.compile(r"^---(?:[ \t]+#.*)?[ \t]*$", re.MULTILINE)


def _objects(obj: Any) -> list[Any]:
    """A document, or the items of a `kind: List` (what `kubectl get -o yaml` writes)."""
    if isinstance(obj, dict) and str(obj.get("kind", "")).endswith("List") and isinstance(obj.get("items"), list):
        return list(obj["items"])
    if isinstance(obj, list):
        return obj
    return [obj]


def _documents_of(obj: Any, where: str, label: str, chart: str) -> tuple[list[Document], list[Finding]]:
    documents: list[Document] = []
    findings: list[Finding] = []
    for item in _objects(obj):
        if not isinstance(item, dict):
            findings.append(Finding(where, label, "", "a manifest must be a mapping", "yaml"))
        elif "apiVersion" not in item and "kind" not in item:
            findings.append(Finding(where, label, "", "not a Kubernetes object (no apiVersion or kind): skipped",
                                    "yaml", Severity.WARNING))
        else:
            documents.append(Document(where, item, chart))
    return documents, findings


def parse_documents(text: str, source: str, chart: str = "") -> tuple[list[Document], list[Finding]]:
    """Documents of a multi-document YAML stream; Helm's `# Source:` comments name each one's template."""
    documents: list[Document] = []
    findings: list[Finding] = []
    for number, chunk in enumerate(_SEPARATOR.split(text)):
        match = re.search(r"^# Source: [^/\n]+/(.+)$", chunk, flags=re.MULTILINE)
        where = f"{chart}/{match.group(1)}" if (chart and match) else source
        try:
            obj = _safe_yaml().load(chunk)
        except YAMLError as exc:
            findings.append(Finding(where, f"document {number + 1}", "", f"not valid YAML: {exc}", "yaml"))
            continue
        if obj is None:
            continue
        docs, problems = _documents_of(obj, where, f"document {number + 1}", chart)
        documents += docs
        findings += problems
    return documents, findings


def read_manifest_file(path: Path) -> tuple[list[Document], list[Finding]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Finding(path.as_posix(), "", "", f"cannot read: {exc}", "yaml")]
    if path.suffix == ".json":
        try:
            obj = json.loads(text)
        except ValueError as exc:
            return [], [Finding(path.as_posix(), "", "", f"not valid JSON: {exc}", "yaml")]
        return _documents_of(obj, path.as_posix(), "document 1", "")
    return parse_documents(text, path.as_posix())


# --- Helm ----------------------------------------------------------------------------------------

def find_helm(explicit: str | None) -> str | None:
    if explicit:
        return explicit if Path(explicit).exists() or shutil.which(explicit) else None
    return shutil.which("helm")


def _run(command: list[str]) -> subprocess.CompletedProcess[str] | str:
    """The finished process, or why it could not run."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=HELM_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return f"did not finish within {HELM_TIMEOUT} s"
    except OSError as exc:
        return f"cannot run {command[0]}: {exc.strerror or exc}"


def helm_version(helm: str) -> str:
    """`v3.17.3`, or '' when the program does not answer like Helm."""
    out = _run([helm, "version", "--template", "{{.Version}}"])
    if isinstance(out, str) or out.returncode != 0:
        return ""
    version = out.stdout.strip()
    return version if re.fullmatch(r"v\d+\.\d+\.\d+\S*", version) else ""


def _error_lines(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line.startswith(("[ERROR]", "[WARNING]", "Error:"))
            and not re.search(r"\d+ chart\(s\) linted", line)]


def helm_lint(helm: str, chart: ChartInfo) -> list[Finding]:
    out = _run([helm, "lint", "--strict", str(chart.path)])
    if isinstance(out, str):
        return [Finding(chart.display, "", "", f"helm lint --strict: {out}", "lint")]
    if out.returncode == 0:
        return []
    return [Finding(chart.display, "", "", f"helm lint --strict: {line}", "lint")
            for line in _error_lines(out.stdout + "\n" + out.stderr) or ["failed"]]


def helm_template(helm: str, chart: ChartInfo, kube_version: str | None) -> tuple[list[Document], list[Finding]]:
    """`helm template` as Argo CD runs it: release named after the chart, CRDs included."""
    command = [helm, "template", chart.name, str(chart.path), "--include-crds"]
    if kube_version:
        command += ["--kube-version", kube_version]
    out = _run(command)
    if isinstance(out, str):
        return [], [Finding(chart.display, "", "", f"helm template: {out}", "render")]
    if out.returncode != 0:
        lines = _error_lines(out.stderr) or out.stderr.strip().splitlines()[-1:] or ["failed"]
        return [], [Finding(chart.display, "", "", f"helm template: {line}", "render") for line in lines]
    return parse_documents(out.stdout, chart.display, chart.display)


# --- mpigen's own renderer -----------------------------------------------------------------------

class Unsupported(Exception):
    """A template action mpigen never writes: only Helm can render this chart."""


_ACTION = re.compile(r"\{\{(-?)\s*(\"\{\{\"|.*?)\s*(-?)\}\}", re.DOTALL)
_HOSTFILE_FORMAT = re.compile(r'\{\{ printf ("(?:[^"\\]|\\.)*") \$i \}\}')
_RANKFILE_FORMAT = re.compile(r'\{\{ printf ("(?:[^"\\]|\\.)*") \(add \(mul \$i (\d+)\) (\d+)\) \$i \}\}')


def _helper_lines(name: str, helpers: str, workers: int) -> str:
    """The lines the hostfile or rankfile helper prints for `workers` workers."""
    if name == "hostfile":
        found = _HOSTFILE_FORMAT.search(helpers)
        if not found:
            raise Unsupported("hostfile helper without the printf mpigen writes")
        line = json.loads(found.group(1)).replace("%d", "{}")
        return "\n".join(line.format(i) for i in range(workers))
    formats = [(json.loads(f), int(slots), int(local)) for f, slots, local in _RANKFILE_FORMAT.findall(helpers)]
    if not formats:
        raise Unsupported("rankfile helper without the printf lines mpigen writes")
    return "\n".join(f.replace("%d", "{}").format(i * slots + local, i)
                     for i in range(workers) for f, slots, local in formats)


def _action(expression: str, values: dict[str, Any], chart: ChartInfo, helpers: str, version: str) -> str:
    if expression == '"{{"':
        return "{{"
    if expression == "int .Values.workers":
        return str(int(values["workers"]))
    if expression == ".Values.suspend":
        return "true" if values["suspend"] else "false"
    if expression == ".Values.image | toJson":
        return json.dumps(values["image"])
    match = re.fullmatch(r"mul \(int \.Values\.workers\) (\d+) \| toString \| quote", expression)
    if match:
        return json.dumps(str(int(values["workers"]) * int(match.group(1))))
    match = re.fullmatch(r'include "[^"]+\.(labels|hostfile|rankfile)" \. (\| trim )?\| nindent (\d+)', expression)
    if match:
        pad = " " * int(match.group(3))
        if match.group(1) == "labels":
            text = yamlio.dump(standard_labels(ChartRef(chart.name, chart.name, version))).rstrip("\n")
        else:
            text = _helper_lines(match.group(1), helpers, int(values["workers"]))
        return "\n" + "\n".join(pad + part if part else part for part in text.split("\n"))
    raise Unsupported(f"template action `{{{{ {expression} }}}}`")


def render_template_text(text: str, values: dict[str, Any], chart: ChartInfo, helpers: str, version: str) -> str:
    """Evaluate the few template actions mpigen writes, with Go's whitespace trimming."""
    out: list[str] = []
    position = 0
    trim_next = False
    for match in _ACTION.finditer(text):
        literal = text[position:match.start()]
        if trim_next:
            literal = literal.lstrip()
        if match.group(1):
            literal = literal.rstrip()
        out.append(literal)
        out.append(_action(match.group(2).strip(), values, chart, helpers, version))
        trim_next = bool(match.group(3))
        position = match.end()
    tail = text[position:]
    out.append(tail.lstrip() if trim_next else tail)
    return "".join(out)


def own_render(chart: ChartInfo) -> tuple[list[Document], list[Finding]]:
    """What `helm template <name> <chart>` gives, for charts mpigen compiled; the tests hold both equal."""
    try:
        meta = _safe_yaml().load((chart.path / "Chart.yaml").read_text(encoding="utf-8"))
        values = _safe_yaml().load((chart.path / "values.yaml").read_text(encoding="utf-8")) or {}
        helpers_file = chart.path / "templates" / "_helpers.tpl"
        helpers = helpers_file.read_text(encoding="utf-8") if helpers_file.exists() else ""
        documents: list[Document] = []
        findings: list[Finding] = []
        for template in sorted((chart.path / "templates").glob("*.yaml")):
            text = render_template_text(template.read_text(encoding="utf-8"), values, chart, helpers,
                                        str(meta.get("version", "")))
            docs, problems = parse_documents(text, f"{chart.display}/templates/{template.name}", chart.display)
            documents += [Document(f"{chart.display}/templates/{template.name}", d.obj, chart.display) for d in docs]
            findings += problems
        return documents, findings
    except Unsupported as exc:
        return [], [Finding(chart.display, "", "", f"cannot render without helm: {exc}; install helm or pass --helm",
                            "render")]
    except (OSError, YAMLError, KeyError, TypeError, ValueError) as exc:
        return [], [Finding(chart.display, "", "", f"cannot render without helm: {exc}", "render")]
