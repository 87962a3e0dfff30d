"""Where a finding is in its file: the line of its object, and of the field its JSON path names, in the template or
manifest file the object came from, so code scanning annotates the line to fix.

A chart's objects are rendered, so their lines are not the template's: the template is read again, its template
actions (`{{ ... }}`) blanked out (line and column of everything else kept), each document found by its kind and
name, and the path followed through it as far as the text holds it (a field an `include` or `toYaml` writes is at
the line of the action that writes it: its nearest written ancestor). Where nothing can be found, nothing is said.
Only the files that have findings are read, once each, within the size limits every input is read with.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _ruamel_yaml
from ruamel.yaml.error import YAMLError

from mpigen.readback.documents import is_separator
from mpigen.readback.findings import Finding
from mpigen.readback.inputs import InputError, read_text
from mpigen.readback.kubeyaml import MAX_MANIFEST_NESTING

Place = tuple[int, int]
"""Line and column, from 1."""


@dataclass
class _Node:
    """A node of a document as written: where it starts, and what it holds (a mapping's entries by key, with the key's
    place; a sequence's items; a scalar's text)."""

    place: Place
    mapping: bool = False
    entries: dict[str, tuple[Place, _Node]] = field(default_factory=dict)
    items: list[_Node] = field(default_factory=list)
    text: str | None = None
    key: _Node | None = None
    """A mapping's key that waits for its value."""

    def add(self, node: _Node) -> None:
        if not self.mapping:
            self.items.append(node)
        elif self.key is None:
            self.key = node
        else:
            if self.key.text is not None:
                self.entries.setdefault(self.key.text, (self.key.place, node))
            self.key = None

    def get(self, key: str) -> _Node | None:
        entry = self.entries.get(key)
        return entry[1] if entry else None

    def scalar(self, key: str) -> str | None:
        node = self.get(key)
        return node.text if node is not None else None


_OPEN, _CLOSE = "{{", "}}"


def _actions(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each template action, found in one pass (an unclosed `{{` runs to the end)."""
    spans = []
    at = text.find(_OPEN)
    while at >= 0:
        close = text.find(_CLOSE, at + len(_OPEN))
        end = len(text) if close < 0 else close + len(_CLOSE)
        spans.append((at, end))
        at = text.find(_OPEN, end)
    return spans


def _written_parts(text: str) -> list[str]:
    """The text outside its template actions: `{{ .Release.Name }}-worker` -> ["", "-worker"]."""
    parts, last = [], 0
    for start, end in _actions(text):
        parts.append(text[last:start])
        last = end
    return [*parts, text[last:]]


def blank_actions(text: str) -> str:
    """The template with every action (`{{ ... }}`) blanked, every other character where it was: on a line that holds
    nothing else but white space, as spaces; on a line with other text, as a plain word of `x` (a value, a key, or
    quoted text). One pass over the text."""
    spans = _actions(text)
    if not spans:
        return text
    chars = list(text)
    hidden = [False] * len(text)
    for start, end in spans:
        hidden[start:end] = [True] * (end - start)
    line_start = 0
    for line_end in [*(i for i, ch in enumerate(text) if ch == "\n"), len(text)]:
        written = any(not hidden[i] and not chars[i].isspace() for i in range(line_start, line_end))
        for i in range(line_start, line_end):
            if hidden[i]:
                chars[i] = "x" if written else " "
        line_start = line_end + 1
    return "".join(chars)


def _matches(parts: list[str], name: str) -> bool:
    """Whether `name` is the written parts with anything in place of each action between them: the first part a
    prefix, the last a suffix, the others in order between (leftmost each, which is enough). Linear in the name."""
    if len(parts) == 1:
        return name == parts[0]
    first, *middle, last = parts
    if len(name) < len(first) + len(last) or not name.startswith(first) or not name.endswith(last):
        return False
    at, stop = len(first), len(name) - len(last)
    for part in middle:
        found = name.find(part, at, stop)
        if found < 0:
            return False
        at = found + len(part)
    return True


def document_tree(text: str) -> _Node | None:
    """The first document of `text` as a tree of places, or None where it cannot be read as YAML (or nests deeper
    than any manifest may)."""
    parser = _ruamel_yaml.CParser(text)
    stack: list[_Node] = []
    try:
        while True:
            event = parser.get_event()
            name = type(event).__name__
            if name in ("StreamEndEvent", "DocumentEndEvent"):
                return None
            place = (event.start_mark.line + 1, event.start_mark.column + 1)
            if name in ("SequenceStartEvent", "MappingStartEvent"):
                if len(stack) >= MAX_MANIFEST_NESTING:
                    return None
                stack.append(_Node(place, mapping=name == "MappingStartEvent"))
                continue
            if name in ("SequenceEndEvent", "MappingEndEvent"):
                node = stack.pop()
            elif name in ("ScalarEvent", "AliasEvent"):
                node = _Node(place, text=getattr(event, "value", None))
            else:
                continue
            if not stack:
                return node
            stack[-1].add(node)
    except YAMLError:
        return None
    finally:
        parser.dispose()


@dataclass(frozen=True)
class _Document:
    """One document of a file: where its text starts, the text, and what it is (kind, and `metadata.name` as written,
    in the parts between its template actions, each of which may render to anything)."""

    first_line: int
    text: str
    kind: str | None = None
    name: list[str] | None = None

    def tree(self) -> _Node | None:
        """The document as a tree of places in its file, read when a finding asks (and not kept: a file of many
        findings holds one document's tree at a time)."""
        return _offset(document_tree(blank_actions(self.text)), self.first_line - 1)


def _identity(text: str) -> tuple[str | None, Place | None]:
    """A document's `kind`, and the place of its `metadata.name` value, from the parser's events without building
    anything; it stops as soon as it has both (they come first in any object written by hand or by a tool)."""
    parser = _ruamel_yaml.CParser(text)
    frames: list[list[Any]] = []  # per open collection: [is mapping, expects a key, last key, role]
    kind: str | None = None
    name: Place | None = None
    try:
        while kind is None or name is None:
            event = parser.get_event()
            kind_of_event = type(event).__name__
            if kind_of_event in ("StreamEndEvent", "DocumentEndEvent") or len(frames) > MAX_MANIFEST_NESTING:
                break
            parent = frames[-1] if frames else None
            is_value = parent is not None and parent[0] and not parent[1]
            role = parent[3] if parent is not None and is_value else ""
            if kind_of_event in ("MappingStartEvent", "SequenceStartEvent"):
                inner = "metadata" if role == "root" and parent and parent[2] == "metadata" else ""
                frames.append([kind_of_event == "MappingStartEvent", True, None, "root" if not frames else inner])
                continue
            if kind_of_event in ("MappingEndEvent", "SequenceEndEvent"):
                frames.pop()
                parent = frames[-1] if frames else None
            elif kind_of_event in ("ScalarEvent", "AliasEvent"):
                value = getattr(event, "value", None)
                if parent is not None and parent[0] and parent[1]:
                    parent[2] = value
                elif role == "root" and parent and parent[2] == "kind":
                    kind = value
                elif role == "metadata" and parent and parent[2] == "name":
                    name = (event.start_mark.line + 1, event.start_mark.column + 1)
            else:
                continue
            if parent is not None and parent[0]:
                parent[1] = not parent[1]
    except YAMLError:
        pass
    finally:
        parser.dispose()
    return kind, name


def _name_parts(text: str, place: Place | None) -> list[str] | None:
    if place is None:
        return None
    line, column = place
    written = text.split("\n", line)[line - 1][column - 1:].strip()
    if len(written) > 1 and written[0] in "'\"" and written[-1] == written[0]:
        written = written[1:-1]
    return _written_parts(written)


def _documents(text: str) -> list[_Document]:
    """The file's documents (split as Kubernetes splits a stream), each with its kind and name."""
    documents: list[_Document] = []
    lines: list[str] = []
    first = 1
    for number, line in enumerate([*text.split("\n"), "---"], start=1):
        if is_separator(line):
            chunk = "\n".join(lines)
            kind, name = _identity(blank_actions(chunk)) if any(s.strip() for s in lines) else (None, None)
            documents.append(_Document(first, chunk, kind, _name_parts(chunk, name)))
            lines, first = [], number + 1
        else:
            lines.append(line)
    return documents


def _offset(tree: _Node | None, lines: int) -> _Node | None:
    """The tree with every place moved down `lines` lines (a document's lines counted from its file's start)."""
    if tree is None or not lines:
        return tree
    stack = [tree]
    while stack:
        node = stack.pop()
        node.place = (node.place[0] + lines, node.place[1])
        if node.entries:
            node.entries = {key: ((at[0] + lines, at[1]), value) for key, (at, value) in node.entries.items()}
        stack += [value for _, value in node.entries.values()] + node.items
    return tree


def _path_segments(path: str) -> list[str | int]:
    """`.spec.containers[0]["nvidia.com/gpu"]` -> ["spec", "containers", 0, "nvidia.com/gpu"]; an unquoted key may
    hold dots (schema findings write `.metadata.labels.app.kubernetes.io/name`): `_follow` joins them back. One pass;
    what cannot be read ends the path there."""
    segments: list[str | int] = []
    at = 0
    while at < len(path):
        if path[at] == ".":
            end = at + 1
            while end < len(path) and path[end] not in ".[":
                end += 1
            segments.append(path[at + 1:end])
        elif path.startswith('["', at):
            end = at + 2
            while end < len(path) and path[end] != '"':
                end += 2 if path[end] == "\\" else 1
            if not path.startswith('"]', end):
                break
            try:
                segments.append(json.loads(path[at + 1:end + 1]))
            except ValueError:
                break
            end += 2
        elif path[at] == "[":
            end = at + 1
            while end < len(path) and path[end].isdigit():
                end += 1
            if end == at + 1 or not path.startswith("]", end):
                break
            segments.append(int(path[at + 1:end]))
            end += 1
        else:
            break
        at = end
    return segments


def _follow(node: _Node, segments: list[str | int]) -> Place:
    """The place of the deepest part of the path the text holds: a mapping entry's key, a sequence's item."""
    place = node.place
    at = 0
    while at < len(segments):
        segment = segments[at]
        if isinstance(segment, int):
            if segment >= len(node.items):
                break
            node = node.items[segment]
            place, at = node.place, at + 1
            continue
        for end in range(at + 1, min(at + _DOTTED_PARTS, len(segments)) + 1):  # the key, then with dotted ones after
            parts = segments[at:end]
            if not all(isinstance(part, str) for part in parts):
                break
            key = ".".join(str(part) for part in parts)
            if key in node.entries:
                place, node = node.entries[key]
                at = end
                break
        else:
            break
        if at < end:
            break
    return place


_DOTTED_PARTS = 16
"""How many segments of a path written with unquoted dots (`app.kubernetes.io/name`) one key may be made of: more
than any real key has, and few enough that a hostile path of dots costs a bounded multiple of its length."""


_PATTERNED_NAMES = 64
"""How many documents of one kind whose names a template writes are tried against a rendered name: past that, the
first document of the kind stands for them (a finding still lands in the right document's kind, at worst in another
document of it), so a file of many findings costs a bounded multiple of its size."""


class _File:
    """One file's documents, read when a finding first asks, and indexed by kind and name."""

    def __init__(self, text: str) -> None:
        self.documents = _documents(text)
        self.named: dict[tuple[str, str], int] = {}
        self.patterned: dict[str, list[int]] = {}
        self.first: dict[str, int] = {}
        for index, document in enumerate(self.documents):
            if document.kind is None:
                continue
            self.first.setdefault(document.kind, index)
            if document.name is not None and len(document.name) == 1:
                self.named.setdefault((document.kind, document.name[0]), index)
            elif document.name is not None:
                self.patterned.setdefault(document.kind, []).append(index)

    def document_of(self, label: str, numbered: bool) -> int | None:
        """The document an object label names; `numbered`: `document N` counts this file's documents."""
        if label.startswith("document "):
            number = label[len("document "):]
            index = int(number) - 1 if numbered and number.isdigit() and len(number) < 10 else -1
            return index if 0 <= index < len(self.documents) else None
        kind, _, name = label.partition("/")
        if (kind, name) in self.named:
            return self.named[kind, name]
        patterned = self.patterned.get(kind, [])[:_PATTERNED_NAMES]
        return next((index for index in patterned if _matches(self.documents[index].name or [], name)),
                    self.first.get(kind))


def place_findings(findings: Iterable[Finding], manifest_files: Iterable[str]) -> dict[Finding, Place]:
    """Each finding's line and column (0: the line only) in its file, where it can be found: its own (`Finding.line`),
    else the object's document (by kind and name; `document N` by number in a manifest file, whose text is what was
    read), then the field its path names. Each file with findings is read once, within the manifest size limit, and
    each of its documents with findings parsed once more."""
    manifests = set(manifest_files)
    asked: dict[str, list[Finding]] = {}
    places: dict[Finding, Place] = {}
    for finding in findings:
        if finding.line:
            places[finding] = (finding.line, finding.column)
        elif finding.object and finding.object != "(file)":
            asked.setdefault(finding.source, []).append(finding)
    for source, found in asked.items():
        file = _read(source)
        if file is None:
            continue
        by_document: dict[int, list[Finding]] = {}
        for finding in found:
            index = file.document_of(finding.object, source in manifests)
            if index is not None:
                by_document.setdefault(index, []).append(finding)
        for index, placed in by_document.items():
            document = file.documents[index]
            tree = document.tree()
            for finding in placed:
                places[finding] = (document.first_line, 0) if tree is None else _follow(
                    tree, _path_segments(finding.path))
    return places


def _read(source: str) -> _File | None:
    path = Path(source)
    if path.suffix == ".json" or not path.is_file():
        return None
    try:
        return _File(read_text(path))
    except (InputError, OSError):
        return None
