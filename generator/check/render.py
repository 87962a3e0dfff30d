"""Turn check targets into documents: charts rendered by Helm (or, for charts mpigen compiled and
no Helm at hand, by mpigen's own renderer), and plain manifest files read as they are."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from generator import yamlio
from generator.check import kubeyaml
from generator.check.findings import Document, Finding, NodeShape
from generator.check.inputs import (
    MAX_DOCUMENT_BYTES,
    MAX_MANIFEST_FILE_BYTES,
    InputError,
    chart_refusals,
    inside,
    load_json,
    read_text,
)
from generator.check.kubeyaml import MAX_MANIFEST_NESTING, KubeYAMLError
from generator.diagnostics import Severity
from generator.manifests.labels import ChartRef, standard_labels
from generator.package import _helpers as package_helpers

HELM_TIMEOUT = 120
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
MAX_RELEASE_NAME = 53
PLACEHOLDER_RELEASE = "release-name"
"""What `helm template` calls a release it is given no name for."""
_RELEASE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclass(frozen=True)
class ChartInfo:
    """A chart folder and what its Chart.yaml says; `display` is the folder as the user named it."""

    path: Path
    display: str
    name: str
    annotations: dict[str, str]

    @property
    def has_valid_name(self) -> bool:
        """Whether Helm takes the name as a release name (what Argo CD and check render the chart as)."""
        return len(self.name) <= MAX_RELEASE_NAME and _RELEASE_NAME.fullmatch(self.name) is not None

    @property
    def release(self) -> str:
        """The release name to render with: the chart's name, once validated, else Helm's placeholder."""
        return self.name if self.has_valid_name else PLACEHOLDER_RELEASE

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


def load_yaml_file(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> Any:
    """The first document of a small YAML file (Chart.yaml, values.yaml) as Helm reads it; raises InputError."""
    text = read_text(path, limit)
    try:
        documents = kubeyaml.load_all(text)
    except KubeYAMLError as exc:
        raise InputError(f"line {exc.line}: {exc.message}" if exc.line else exc.message) from exc
    except YAMLError as exc:
        raise InputError(f"not valid YAML: {' '.join(str(exc).split())}") from exc
    return documents[0] if documents else None


def read_chart(path: Path, display: str) -> ChartInfo | Finding:
    try:
        meta = load_yaml_file(path / "Chart.yaml")
    except InputError as exc:
        return Finding(f"{display}/Chart.yaml", "", "", f"cannot read Chart.yaml: {exc}", "chart")
    if not isinstance(meta, dict):
        return Finding(f"{display}/Chart.yaml", "", "", "Chart.yaml is not a mapping", "chart")
    annotations = meta.get("annotations") or {}
    name = meta.get("name", path.name)
    return ChartInfo(path, display, name if isinstance(name, str) else str(name),
                     {str(k): str(v) for k, v in annotations.items()} if isinstance(annotations, dict) else {})


def chart_name_findings(chart: ChartInfo) -> list[Finding]:
    """A chart name Helm would not take as a release name is an error: never an argument to Helm."""
    if chart.has_valid_name:
        return []
    shown = json.dumps(chart.name[:80])
    return [Finding(f"{chart.display}/Chart.yaml", "", "", f"name {shown} is not a valid Helm release name "
                    f"(lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most "
                    f"{MAX_RELEASE_NAME} characters); rename the chart. Checked as release `{PLACEHOLDER_RELEASE}`",
                    "chart")]


def _walk(root: Path, display: str, charts: bool) -> tuple[list[Path], list[Path], list[Finding]]:
    """Chart folders (when `charts`), manifest files and refused links under `root`, in a stable order:
    a folder's files before its subfolders'. Hidden files and folders are read too (kubectl applies a
    `.pod.yaml`, and `apply -R` walks hidden folders), all but `.git`; links are followed only while they
    stay inside `root`, and each folder is read once."""
    base = root.resolve()
    chart_folders: list[Path] = []
    files: list[Path] = []
    problems: list[Finding] = []
    seen: set[Path] = set()
    pending = [root]
    while pending:
        here = pending.pop()
        real = here.resolve()
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted((e for e in os.scandir(here) if e.name != ".git"), key=lambda e: e.name)
        except OSError as exc:
            problems.append(Finding(_shown(here, root, display), "", "", f"cannot list: {exc.strerror}", "input"))
            continue
        if charts and any(e.name == "Chart.yaml" for e in entries):
            chart_folders.append(here)  # a chart's own files (templates, subcharts) are Helm's to read
            continue
        folders: list[Path] = []
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink() and not inside(path, base):
                problems.append(Finding(_shown(path, root, display), "", "", f"is a link to '{os.readlink(path)}', "
                                        f"outside {display}: not checked. Argo CD refuses such links too: copy the "
                                        "file in instead", "input"))
            elif entry.is_dir():
                folders.append(path)
            elif entry.name.endswith(MANIFEST_SUFFIXES):
                files.append(path)
        pending += reversed(folders)
    return chart_folders, files, problems


def _shown(path: Path, root: Path, display: str) -> str:
    relative = path.relative_to(root).as_posix()
    return display if relative == "." else f"{display}/{relative}"


def manifest_files(root: Path) -> tuple[list[Path], list[Finding]]:
    """Every manifest file under `root` (a file, or a folder searched without leaving it)."""
    if root.is_file():
        return [root], []
    _, files, problems = _walk(root, root.as_posix(), charts=False)
    return files, problems


def discover(paths: list[Path]) -> Targets:
    """Chart folders (those holding Chart.yaml) and manifest files under `paths`, in a stable order."""
    targets = Targets()
    for root in paths:
        display = root.as_posix().rstrip("/") or "."
        if root.exists() and not root.is_dir():  # a FIFO or device too: reading it says why it is refused
            targets.manifests.append(root)
            continue
        if not root.is_dir():
            targets.problems.append(Finding(display, "", "", "no such file or folder", "usage"))
            continue
        chart_folders, files, problems = _walk(root, display, charts=True)
        targets.manifests += files
        targets.problems += problems
        for folder in chart_folders:
            info = read_chart(folder, _shown(folder, root, display))
            (targets.problems if isinstance(info, Finding) else targets.charts).append(info)
    targets.charts.sort(key=lambda chart: chart.display)
    return targets


def _is_separator(line: str) -> bool:
    """`---` alone, or followed by a comment: where Kubernetes' YAMLReader (kubectl, Argo CD) splits a stream
    into documents (it refuses any other text after the `---`; the YAML parser then judges this one)."""
    if not line.startswith("---"):
        return False
    rest = line[3:].strip()
    return not rest or rest.startswith("#")


def split_documents(text: str) -> list[tuple[str, str | None]]:
    """Chunks between `---` lines, each with the template its Helm `# Source:` comment names. One pass."""
    chunks: list[tuple[str, str | None]] = []
    lines: list[str] = []
    source: str | None = None
    for line in text.split("\n"):
        if _is_separator(line):  # the line break before it ends the document's last line, as kubectl reads it
            chunks.append(("\n".join(lines) + "\n", source))
            lines, source = [], None
            continue
        if source is None and line.startswith(_SOURCE):
            named = line[len(_SOURCE):]
            slash = named.find("/")
            if slash > 0 and slash + 1 < len(named):
                source = named[slash + 1:]
        lines.append(line)
    chunks.append(("\n".join(lines), source))
    return chunks


_SOURCE = "# Source: "


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


def _holds_nothing(chunk: str) -> bool:
    """Blank lines and comments only (Helm's output between templates): nothing to hand the parser."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in chunk.split("\n"))


def parse_documents(text: str, source: str, chart: str = "") -> tuple[list[Document], list[Finding]]:
    """Documents of a multi-document YAML stream, read as Kubernetes reads them; Helm's `# Source:`
    comments name each one's template."""
    documents: list[Document] = []
    findings: list[Finding] = []
    for number, (chunk, template) in enumerate(split_documents(text)):
        if _holds_nothing(chunk):
            continue
        where = f"{chart}/{template}" if (chart and template) else source
        label = f"document {number + 1}"
        if len(chunk) > MAX_DOCUMENT_BYTES and len(chunk.encode("utf-8")) > MAX_DOCUMENT_BYTES:
            findings.append(Finding(where, label, "", f"document is over {MAX_DOCUMENT_BYTES} bytes, more than the "
                                    "Kubernetes API server accepts", "yaml"))
            continue
        try:
            objs = kubeyaml.load_all(chunk)
        except KubeYAMLError as exc:
            at = f"line {exc.line} of the document: " if exc.line else ""
            findings.append(Finding(where, label, "", f"{at}{exc.message}", "yaml"))
            continue
        except YAMLError as exc:
            findings.append(Finding(where, label, "", f"not valid YAML: {exc}", "yaml"))
            continue
        for obj in objs:
            if obj is None:
                continue
            docs, problems = _documents_of(obj, where, label, chart)
            documents += docs
            findings += problems
    return documents, findings


def read_manifest_file(path: Path) -> tuple[list[Document], list[Finding]]:
    try:
        text = read_text(path, MAX_MANIFEST_FILE_BYTES)
    except InputError as exc:
        return [], [Finding(path.as_posix(), "", "", str(exc), "yaml")]
    if path.suffix == ".json":
        if len(text) > MAX_DOCUMENT_BYTES:
            return [], [Finding(path.as_posix(), "", "", f"document is over {MAX_DOCUMENT_BYTES} bytes, more than "
                                "the Kubernetes API server accepts", "yaml")]
        try:
            obj = load_json(text, MAX_MANIFEST_NESTING)
        except ValueError as exc:
            return [], [Finding(path.as_posix(), "", "", f"not valid JSON: {exc}", "yaml")]
        return _documents_of(obj, path.as_posix(), "document 1", "")
    return parse_documents(text, path.as_posix())


# --- Helm ----------------------------------------------------------------------------------------

def find_helm(explicit: str | None) -> str | None:
    if explicit:
        return explicit if Path(explicit).exists() or shutil.which(explicit) else None
    return shutil.which("helm")


@dataclass(frozen=True)
class _Finished:
    returncode: int
    stdout: str
    stderr: str


MAX_HELM_STDERR = 1024 * 1024


def _run(command: list[str]) -> _Finished | str:
    """The finished process, or why it could not run or was stopped: each stream is read within a bound
    (a hostile chart can make Helm print without end), and the process is killed past it or the timeout."""
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
    except OSError as exc:
        return f"cannot run {command[0]}: {exc.strerror or exc}"
    over: list[str] = []

    def pump(stream: Any, into: bytearray, limit: int, name: str) -> None:
        while chunk := stream.read1(65536):
            if len(into) + len(chunk) > limit:
                over.append(f"printed more than {limit} bytes on {name}; no chart's objects are so large")
                process.kill()
                break
            into += chunk
        stream.close()

    out, err = bytearray(), bytearray()
    readers = [threading.Thread(target=pump, args=(process.stdout, out, MAX_MANIFEST_FILE_BYTES, "stdout")),
               threading.Thread(target=pump, args=(process.stderr, err, MAX_HELM_STDERR, "stderr"))]
    for reader in readers:
        reader.start()
    try:
        returncode = process.wait(timeout=HELM_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        over.append(f"did not finish within {HELM_TIMEOUT} s")
        returncode = -1
    for reader in readers:
        reader.join()
    if over:
        return over[0]
    try:
        stdout = out.decode("utf-8")
    except UnicodeDecodeError:
        return "printed bytes that are not UTF-8"
    return _Finished(returncode, stdout, err.decode("utf-8", errors="replace"))


def helm_version(helm: str) -> str:
    """`v3.17.3`, or '' when the program does not answer like Helm."""
    out = _run([helm, "version", "--template", "{{.Version}}"])
    if isinstance(out, str) or out.returncode != 0:
        return ""
    version = out.stdout.strip()
    return version if re.fullmatch(r"v\d+\.\d+\.\d+\S*", version) else ""


def _counts_lint_summary(line: str) -> bool:
    """Whether the line holds Helm's `N chart(s) linted` summary (searched without backtracking)."""
    start = line.find(_LINTED)
    while start != -1:
        if start > 0 and line[start - 1].isdigit():
            return True
        start = line.find(_LINTED, start + 1)
    return False


_LINTED = " chart(s) linted"


def _error_lines(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line.startswith(("[ERROR]", "[WARNING]", "Error:"))
            and not _counts_lint_summary(line)]


def chart_refusal_findings(chart: ChartInfo) -> list[Finding]:
    """What in the chart folder neither Helm nor mpigen may read (see inputs.chart_refusals)."""
    return [Finding(f"{chart.display}/{r.path}" if r.path != "." else chart.display, "", "",
                    f"{r.why}; the chart is not rendered", "render") for r in chart_refusals(chart.path)]


def _chart_argument(chart: ChartInfo) -> str:
    """The chart folder as Helm must see it: absolute, so it never reads as a flag or a repository name."""
    return os.path.abspath(chart.path)


def helm_lint(helm: str, chart: ChartInfo) -> list[Finding]:
    if chart_refusals(chart.path):
        return []  # helm_template reports them; Helm gets nothing to read
    out = _run([helm, "lint", "--strict", "--", _chart_argument(chart)])
    if isinstance(out, str):
        return [Finding(chart.display, "", "", f"helm lint --strict: {out}", "lint")]
    if out.returncode == 0:
        return []
    return [Finding(chart.display, "", "", f"helm lint --strict: {line}", "lint")
            for line in _error_lines(out.stdout + "\n" + out.stderr) or ["failed"]]


def helm_template(helm: str, chart: ChartInfo, kube_version: str | None) -> tuple[list[Document], list[Finding]]:
    """`helm template` as Argo CD runs it: release named after the chart, CRDs and hooks included.

    Only values mpigen checked follow `--`: the release name (the chart's, when Helm would take it) and
    the chart's absolute path; nothing from a file can be read as a flag.
    """
    refusals = chart_refusal_findings(chart)
    if refusals:
        return [], refusals
    command = [helm, "template", "--include-crds"]
    if kube_version:
        command += ["--kube-version", kube_version]
    out = _run([*command, "--", chart.release, _chart_argument(chart)])
    if isinstance(out, str):
        return [], [Finding(chart.display, "", "", f"helm template: {out}", "render")]
    if out.returncode != 0:
        lines = _error_lines(out.stderr) or out.stderr.strip().splitlines()[-1:] or ["failed"]
        return [], [Finding(chart.display, "", "", f"helm template: {line}", "render") for line in lines]
    return parse_documents(out.stdout, chart.display, chart.display)


# --- mpigen's own renderer -----------------------------------------------------------------------

class Unsupported(Exception):
    """Something mpigen never writes: only Helm can render this chart as Argo CD will."""


_TEMPLATE_ALLOWED = ("_helpers.tpl", "NOTES.txt")
_CHART_ALLOWED = {"Chart.yaml": False, "values.yaml": False, "values.schema.json": False, "templates": True}
_SEMVER = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")
_PRINTF = r'"(?:[^"\\\n]|\\.)*"'
_HOSTFILE_DEFINE = re.compile(
    r'\n\{\{/\* Hostfile lines, one per worker, exactly as mpi-operator names its workers\. \*/\}\}\n'
    r'\{\{- define "(?P<name>[^"\n]+)\.hostfile" -\}\}\n'
    r"\{\{- range \$i := until \(int \.Values\.workers\) \}\}\n"
    rf"\{{\{{ printf (?P<format>{_PRINTF}) \$i \}}\}}\n"
    r"\{\{- end \}\}\n\{\{- end \}\}\n")
_RANKFILE_DEFINE = re.compile(
    r"\n\{\{/\* Rankfile lines: local rank i of worker w is rank w\*(?P<slots>[0-9]+)\+i, bound to the socket of "
    r"GPU i's NIC\. \*/\}\}\n"
    r'\{\{- define "(?P<name>[^"\n]+)\.rankfile" -\}\}\n'
    r"\{\{- range \$i := until \(int \.Values\.workers\) \}\}\n"
    rf"(?P<lines>(?:\{{\{{ printf {_PRINTF} \(add \(mul \$i [0-9]+\) [0-9]+\) \$i \}}\}}\n)+)"
    r"\{\{- end \}\}\n\{\{- end \}\}\n")
_RANKFILE_LINE = re.compile(rf"\{{\{{ printf ({_PRINTF}) \(add \(mul \$i ([0-9]+)\) ([0-9]+)\) \$i \}}\}}\n")


def _go_format(literal: str, verbs: int) -> str:
    """A printf format mpigen writes, as a Python format: a Go string literal that is also JSON, holding
    `verbs` times `%d` and no other verb or brace (anything else Go and Python would read apart)."""
    try:
        text = json.loads(literal)
    except ValueError as exc:
        raise Unsupported("printf format mpigen does not write") from exc
    if text.count("%") != verbs or text.count("%d") != verbs or "{" in text or "}" in text or "\\" in literal:
        raise Unsupported("printf format mpigen does not write")
    return text.replace("%d", "{}")


@dataclass(frozen=True)
class _Helpers:
    """What the `_helpers.tpl` mpigen writes defines: the hostfile line and the rankfile lines."""

    hostfile: str | None = None
    rankfile: tuple[tuple[str, int, int], ...] = ()


def _parse_helpers(text: str, name: str) -> _Helpers:
    """The helpers of a chart named `name`, if the file is exactly what mpigen writes; Unsupported otherwise
    (a helper of another shape renders another thing under Helm, e.g. extra objects from `labels`)."""
    prefix = package_helpers(ChartRef(name, name))
    if not text.startswith(prefix):
        raise Unsupported("_helpers.tpl is not the one mpigen writes")
    rest = text[len(prefix):]
    if not rest:
        return _Helpers()
    hostfile = _HOSTFILE_DEFINE.match(rest)
    if not hostfile or hostfile.group("name") != name:
        raise Unsupported("_helpers.tpl is not the one mpigen writes")
    line = _go_format(hostfile.group("format"), 1)
    rest = rest[hostfile.end():]
    if not rest:
        return _Helpers(line)
    rankfile = _RANKFILE_DEFINE.fullmatch(rest)
    if not rankfile or rankfile.group("name") != name:
        raise Unsupported("_helpers.tpl is not the one mpigen writes")
    lines = tuple((_go_format(f, 2), int(slots), int(local))
                  for f, slots, local in _RANKFILE_LINE.findall(rankfile.group("lines")))
    return _Helpers(line, lines)


def _helper_lines(which: str, helpers: _Helpers, workers: int) -> str:
    """The lines the hostfile or rankfile helper prints for `workers` workers."""
    if which == "hostfile":
        if helpers.hostfile is None:
            raise Unsupported("include of a hostfile helper the chart does not define")
        return "\n".join(helpers.hostfile.format(i) for i in range(workers))
    if not helpers.rankfile:
        raise Unsupported("include of a rankfile helper the chart does not define")
    return "\n".join(f.format(i * slots + local, i) for i in range(workers) for f, slots, local in helpers.rankfile)


_INCLUDE = re.compile(r'include "(?P<name>[^"]+)\.(?P<helper>labels|hostfile|rankfile)" \. (?P<trim>\| trim )?'
                      r"\| nindent (?P<indent>[0-9]{1,3})")
_MUL = re.compile(r"mul \(int \.Values\.workers\) ([0-9]{1,6}) \| toString \| quote")


def _action(expression: str, values: dict[str, Any], chart: ChartInfo, helpers: _Helpers, version: str) -> str:
    literal = _go_string(expression)
    if literal is not None:
        return literal
    if expression == "int .Values.workers":
        return str(values["workers"])
    if expression == ".Values.suspend":
        return "true" if values["suspend"] else "false"
    if expression == ".Values.image | toJson":
        return json.dumps(values["image"])
    match = _MUL.fullmatch(expression)
    if match:
        return json.dumps(str(values["workers"] * int(match.group(1))))
    match = _INCLUDE.fullmatch(expression)
    if match and match.group("name") == chart.name:
        pad = " " * int(match.group("indent"))
        if match.group("helper") == "labels":
            text = yamlio.dump(standard_labels(ChartRef(chart.name, chart.name, version))).rstrip("\n")
        else:
            text = _helper_lines(match.group("helper"), helpers, values["workers"])
        return "\n" + "\n".join(pad + part if part else part for part in text.split("\n"))
    raise Unsupported(f"template action `{{{{ {expression[:80]} }}}}`")


_GO_SPACE = " \t\r\n"


_GO_QUOTED = re.compile(r'"(?:[^"\\\n]|\\["\\r])*"')
_GO_UNQUOTE = re.compile(r'\\(["\\r])')


def _go_string(expression: str) -> str | None:
    """The text of a Go string literal of the forms mpigen writes (a raw string, or a quoted one whose only
    escapes are of a backslash, a double quote and a carriage return), or None when `expression` is not one."""
    if len(expression) >= 2 and expression[0] == expression[-1] == "`" and "`" not in expression[1:-1]:
        return expression[1:-1].replace("\r", "")
    if _GO_QUOTED.fullmatch(expression):
        return _GO_UNQUOTE.sub(lambda m: "\r" if m.group(1) == "r" else m.group(1), expression[1:-1])
    return None


def template_actions(text: str) -> list[tuple[int, int, bool, str, bool]]:
    """Each `{{ ... }}` of a Go template: start, end, trim before, expression, trim after. One pass with
    `str.find`: an action ends at the first `}}` after its `{{` and past a string literal it starts with (Go
    reads a `}}` inside a string as part of it; mpigen's literal lines are such actions). Go's trim markers
    are `{{- ` and ` -}}`, with the space."""
    actions: list[tuple[int, int, bool, str, bool]] = []
    position = 0
    while (start := text.find("{{", position)) != -1:
        inner = start + 2
        close = text.find("}}", _after_string(text, inner))
        if close == -1:
            raise Unsupported("a template action that never closes")
        body = text[inner:close]
        trim_before = body.startswith("-") and len(body) > 1 and body[1] in _GO_SPACE
        trim_after = body.endswith("-") and len(body) > 1 and body[-2] in _GO_SPACE
        expression = body[1 if trim_before else 0:len(body) - 1 if trim_after else len(body)].strip(_GO_SPACE)
        actions.append((start, close + 2, trim_before, expression, trim_after))
        position = close + 2
    return actions


def _after_string(text: str, inner: int) -> int:
    """Where to look for an action's `}}`: past the string literal it starts with (mpigen's escaped braces
    and literal lines), else at once. A string that does not end on its line is no action mpigen writes."""
    at = inner + 2 if text.startswith("- ", inner) else inner
    while at < len(text) and text[at] in _GO_SPACE and at - inner < 8:
        at += 1
    if at >= len(text) or text[at] not in "`\"":
        return inner
    line_end = text.find("\n", at)
    line_end = len(text) if line_end == -1 else line_end
    if text[at] == "`":
        end = text.find("`", at + 1, line_end)
        return inner if end == -1 else end + 1
    quoted = _GO_QUOTED.match(text, at, line_end)
    return inner if quoted is None else quoted.end()


def render_template_text(text: str, values: dict[str, Any], chart: ChartInfo, helpers: _Helpers,
                         version: str) -> str:
    """Evaluate the few template actions mpigen writes, with Go's whitespace trimming."""
    out: list[str] = []
    position = 0
    trim_next = False
    for start, end, trim_before, expression, trim_after in template_actions(text):
        literal = text[position:start]
        if trim_next:
            literal = literal.lstrip(_GO_SPACE)
        if trim_before:
            literal = literal.rstrip(_GO_SPACE)
        out.append(literal)
        out.append(_action(expression, values, chart, helpers, version))
        trim_next = trim_after
        position = end
    tail = text[position:]
    out.append(tail.lstrip(_GO_SPACE) if trim_next else tail)
    return "".join(out)


def _own_layout(chart: ChartInfo) -> list[str]:
    """The templates to render, if the chart folder holds only what mpigen writes, as regular files;
    Unsupported otherwise. Helm renders every file of templates/ and its subfolders (any suffix), subcharts
    in charts/, and crds/: a chart holding more than mpigen's own renderer reads is Helm's to render."""
    try:
        entries = {e.name: e for e in os.scandir(chart.path)}
        for name, entry in entries.items():
            if name not in _CHART_ALLOWED or entry.is_symlink() or entry.is_dir() != _CHART_ALLOWED[name]:
                raise Unsupported(f"`{name[:80]}` is not a file mpigen writes in a chart")
        for required in ("Chart.yaml", "values.yaml", "templates"):
            if required not in entries:
                raise Unsupported(f"no {required}")
        templates: list[str] = []
        for entry in os.scandir(chart.path / "templates"):
            if entry.is_symlink() or not entry.is_file():
                raise Unsupported(f"`templates/{entry.name[:80]}` is not a file mpigen writes")
            if entry.name in _TEMPLATE_ALLOWED:
                continue
            if not entry.name.endswith(".yaml") or entry.name.startswith(("_", ".")):
                raise Unsupported(f"`templates/{entry.name[:80]}` is not a file mpigen writes")
            templates.append(entry.name)
    except OSError as exc:
        raise Unsupported(f"cannot list the chart: {exc.strerror}") from exc
    return sorted(templates)


def _own_values(chart: ChartInfo) -> tuple[dict[str, Any], str]:
    """values.yaml and the chart version, if they hold what mpigen writes (values of other types would
    print otherwise under Go's template functions than under Python's)."""
    meta = load_yaml_file(chart.path / "Chart.yaml")
    if not isinstance(meta, dict) or meta.get("apiVersion") != "v2" or "dependencies" in meta:
        raise Unsupported("Chart.yaml is not the one mpigen writes (apiVersion v2, no dependencies)")
    version = meta.get("version")
    if not isinstance(version, str) or not _SEMVER.fullmatch(version):
        raise Unsupported("Chart.yaml's version is not the MAJOR.MINOR.PATCH mpigen writes")
    values = load_yaml_file(chart.path / "values.yaml") or {}
    if not isinstance(values, dict):
        raise Unsupported("values.yaml is not a mapping")
    checks = {"workers": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10_000,
              "suspend": lambda v: isinstance(v, bool), "image": lambda v: isinstance(v, str)}
    for key, check in checks.items():
        if key in values and not check(values[key]):
            raise Unsupported(f"values.yaml: {key} is not of the type mpigen writes")
    return values, version


def own_render(chart: ChartInfo) -> tuple[list[Document], list[Finding]]:
    """What `helm template <name> <chart>` gives, for charts mpigen compiled; the tests hold both equal.
    Refuses (a `render` finding) any chart holding something it would not render exactly as Helm does."""
    refusals = chart_refusal_findings(chart)
    if refusals:
        return [], refusals
    try:
        if not chart.has_valid_name:
            raise Unsupported("a chart name mpigen does not write")
        templates = _own_layout(chart)
        values, version = _own_values(chart)
        helpers_file = chart.path / "templates" / "_helpers.tpl"
        helpers = _parse_helpers(read_text(helpers_file, MAX_DOCUMENT_BYTES), chart.name) \
            if helpers_file.exists() else _Helpers()
        documents: list[Document] = []
        findings: list[Finding] = []
        for template in templates:
            text = render_template_text(read_text(chart.path / "templates" / template, MAX_DOCUMENT_BYTES), values,
                                        chart, helpers, version)
            source = f"{chart.display}/templates/{template}"
            docs, problems = parse_documents(text, source, chart.display)
            documents += [Document(source, d.obj, chart.display) for d in docs]
            findings += problems
        return documents, findings
    except Unsupported as exc:
        return [], [Finding(chart.display, "", "", f"cannot render without helm: {exc}; install helm or pass --helm",
                            "render")]
    except (InputError, KeyError, TypeError, ValueError) as exc:
        return [], [Finding(chart.display, "", "", f"cannot render without helm: {exc}", "render")]
