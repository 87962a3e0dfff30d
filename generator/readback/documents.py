"""Rendered text to documents, read as Kubernetes reads it (kubectl, Argo CD): `---` splitting, `kind: List`
items, size limits, and Helm's `# Source:` comments naming each document's template. Helm's output,
mpigen's own renderer's and plain manifest files all go through here, so all are judged alike.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from ruamel.yaml.error import YAMLError

from mpigen.readback import kubeyaml
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.readback.inputs import MAX_DOCUMENT_BYTES, MAX_MANIFEST_FILE_BYTES, InputError, load_json, read_text
from mpigen.readback.kubeyaml import MAX_MANIFEST_NESTING, KubeYAMLError
from mpigen.support.diagnostics import Severity


def load_yaml_file(path: Path, limit: int = MAX_DOCUMENT_BYTES) -> Any:
    """The first document of a small YAML file (Chart.yaml, values.yaml) as Helm reads it; raises InputError."""
    return load_yaml_text(read_text(path, limit))


def load_yaml_text(text: str) -> Any:
    """The first document of a small YAML text read already (within a size limit) as Helm reads it; raises
    InputError."""
    try:
        documents = kubeyaml.load_all(text)
    except KubeYAMLError as exc:
        raise InputError(f"line {exc.line}: {exc.message}" if exc.line else exc.message) from exc
    except YAMLError as exc:
        raise InputError(f"not valid YAML: {' '.join(str(exc).split())}") from exc
    return documents[0] if documents else None


def is_separator(line: str) -> bool:
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
        if is_separator(line):  # the line break before it ends the document's last line, as kubectl reads it
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


_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _may_be_list(text: str) -> bool:
    """Whether a text may hold a `kind: List` (YAML or JSON: a line `kind: List`, `"kind": "NodeList"` anywhere, as
    compact JSON puts it): only such a document is read past one object's size. Each candidate is looked at once,
    never backtracked over, so the scan is linear whatever the text."""
    for line in text.splitlines():
        rest = line.lstrip()
        rest = rest[1:].lstrip() if rest[:1] in ("{", ",") else rest
        rest = rest[1:] if rest[:1] in ("'", '"') else rest
        if rest.startswith("kind") and _names_a_list(rest[4:]):
            return True
    start = text.find('"kind"')
    while start >= 0:
        if _names_a_list(text[start + 6:start + 6 + 300]):
            return True
        start = text.find('"kind"', start + 6)
    return False


def _names_a_list(after_key: str) -> bool:
    """Whether the text after a `kind` key is `: List` (or `: "NodeList"`, ...), quotes and blanks allowed."""
    rest = after_key[1:] if after_key[:1] in ("'", '"') else after_key
    rest = rest.lstrip(" \t")
    if not rest.startswith(":"):
        return False
    value = rest[1:].lstrip(" \t")
    value = value[1:] if value[:1] in ("'", '"') else value
    end = 0
    while end < len(value) and end < 256 and value[end] in _WORD:
        end += 1
    return value[:end].endswith("List")


def _is_list(obj: Any) -> bool:
    """A `kind: List` (what `kubectl get -o yaml` writes, or an API's `NodeList`): many objects, not one."""
    return isinstance(obj, dict) and str(obj.get("kind", "")).endswith("List") and isinstance(obj.get("items"), list)


def _too_big(where: str, label: str) -> Finding:
    """One object over the size the API server takes (a List of many is bounded by the file's size instead: an
    export of a big cluster's Nodes is one List document)."""
    return Finding(where, label, "", f"document is over {MAX_DOCUMENT_BYTES} bytes, more than the Kubernetes API "
                   "server accepts", "yaml")


def _objects(obj: Any) -> list[Any]:
    """A document, or the items of a `kind: List` (what `kubectl get -o yaml` writes)."""
    if _is_list(obj):
        return list(obj["items"])
    if isinstance(obj, list):
        return obj
    return [obj]


def _documents_of(obj: Any, where: str, label: str, chart: str) -> tuple[list[RenderedObject], list[Finding]]:
    documents: list[RenderedObject] = []
    findings: list[Finding] = []
    for item in _objects(obj):
        if not isinstance(item, dict):
            findings.append(Finding(where, label, "", "a manifest must be a mapping", "yaml"))
        elif "apiVersion" not in item and "kind" not in item:
            findings.append(Finding(where, label, "", "not a Kubernetes object (no apiVersion or kind): skipped",
                                    "yaml", Severity.WARNING))
        else:
            documents.append(RenderedObject(where, item, chart))
    return documents, findings


def _holds_nothing(chunk: str) -> bool:
    """Blank lines and comments only (Helm's output between templates): nothing to hand the parser."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in chunk.split("\n"))


def parse_documents(text: str, source: str, chart: str = "") -> tuple[list[RenderedObject], list[Finding]]:
    """Documents of a multi-document YAML stream, read as Kubernetes reads them; Helm's `# Source:`
    comments name each one's template."""
    documents: list[RenderedObject] = []
    findings: list[Finding] = []
    for number, (chunk, template) in enumerate(split_documents(text)):
        if _holds_nothing(chunk):
            continue
        where = f"{chart}/{template}" if (chart and template) else source
        label = f"document {number + 1}"
        too_big = len(chunk) > MAX_DOCUMENT_BYTES and len(chunk.encode("utf-8")) > MAX_DOCUMENT_BYTES
        if too_big and not _may_be_list(chunk):
            findings.append(_too_big(where, label))
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
            if too_big and not _is_list(obj):
                findings.append(_too_big(where, label))
                continue
            docs, problems = _documents_of(obj, where, label, chart)
            documents += docs
            findings += problems
    return documents, findings


def read_manifest_file(path: Path) -> tuple[list[RenderedObject], list[Finding]]:
    try:
        text = read_text(path, MAX_MANIFEST_FILE_BYTES)
    except InputError as exc:
        return [], [Finding(path.as_posix(), "", "", str(exc), "yaml")]
    return parse_manifest(text, path.as_posix())


def parse_manifest(text: str, source: str) -> tuple[list[RenderedObject], list[Finding]]:
    """The objects of a manifest file's text, read as kubectl reads the file `source` names: JSON by its suffix,
    else a YAML stream."""
    if PurePosixPath(source).suffix == ".json":
        too_big = len(text) > MAX_DOCUMENT_BYTES
        if too_big and not _may_be_list(text):
            return [], [_too_big(source, "")]
        try:
            obj = load_json(text, MAX_MANIFEST_NESTING)
        except ValueError as exc:
            return [], [Finding(source, "", "", f"not valid JSON: {exc}", "yaml")]
        if too_big and not _is_list(obj):
            return [], [_too_big(source, "")]
        return _documents_of(obj, source, "document 1", "")
    return parse_documents(text, source)
