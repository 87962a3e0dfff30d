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
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

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


_ACTION = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_SEGMENT = re.compile(r'\.([^.\[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def blank_actions(text: str) -> str:
    """The template with every action (`{{ ... }}`) blanked, keeping every other character where it was: an action alone
    on its line becomes spaces, one inside a line a plain word of `x` (a value, a key, or quoted text)."""
    def blank(match: re.Match[str]) -> str:
        start, end = match.span()
        before = text[text.rfind("\n", 0, start) + 1:start]
        line_end = text.find("\n", end)
        after = text[end:] if line_end < 0 else text[end:line_end]
        filler = " " if not before.strip() and not after.strip() else "x"
        return "".join("\n" if ch == "\n" else filler for ch in match.group())
    return _ACTION.sub(blank, text)


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
    first_line: int
    """The line of the file the document's text starts at."""
    tree: _Node | None
    name: re.Pattern[str] | None = None
    """What `metadata.name` may render to: its text as written, each template action in it matching anything."""


def _name_pattern(tree: _Node | None, lines: list[str], first_line: int) -> re.Pattern[str] | None:
    metadata = tree.get("metadata") if tree is not None else None
    name = metadata.get("name") if metadata is not None else None
    if name is None or name.items or name.entries:
        return None
    line, column = name.place
    written = lines[line - first_line][column - 1:].strip()
    if len(written) > 1 and written[0] in "'\"" and written[-1] == written[0]:
        written = written[1:-1]
    parts = _ACTION.split(written)
    return re.compile(".*".join(re.escape(part) for part in parts), re.DOTALL)


def _documents(text: str) -> list[_Document]:
    """The file's documents (split as Kubernetes splits a stream), each read with its template actions blanked."""
    documents: list[_Document] = []
    lines: list[str] = []
    first = 1
    for number, line in enumerate([*text.split("\n"), "---"], start=1):
        if is_separator(line):
            tree = document_tree(blank_actions("\n".join(lines))) if any(s.strip() for s in lines) else None
            tree = _offset(tree, first - 1)
            documents.append(_Document(first, tree, _name_pattern(tree, lines, first)))
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
    hold dots (schema findings write `.metadata.labels.app.kubernetes.io/name`): `_follow` joins them back."""
    segments: list[str | int] = []
    for match in _SEGMENT.finditer(path):
        key, index, quoted = match.groups()
        segments.append(key if key is not None else int(index) if index is not None else json.loads(quoted))
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
        for end in range(at + 1, len(segments) + 1):  # the key as one segment, then with the dotted ones after it
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


class _File:
    """One file's documents, read when a finding first asks."""

    def __init__(self, text: str) -> None:
        self.documents = _documents(text)

    def place(self, finding: Finding, numbered: bool) -> Place | None:
        """Where the finding's object (and field) is; `numbered`: `document N` counts this file's documents."""
        document = self._object(finding.object, numbered)
        if document is None:
            return None
        if document.tree is None:
            return (document.first_line, 0)
        return _follow(document.tree, _path_segments(finding.path))

    def _object(self, label: str, numbered: bool) -> _Document | None:
        if label.startswith("document "):
            number = label[len("document "):]
            index = int(number) - 1 if numbered and number.isdigit() else -1
            return self.documents[index] if 0 <= index < len(self.documents) else None
        kind, _, name = label.partition("/")
        found = [document for document in self.documents if document.tree is not None
                 and document.tree.scalar("kind") == kind]
        named = [document for document in found if document.name is not None and document.name.fullmatch(name)]
        chosen = named or found
        return chosen[0] if chosen else None


def place_findings(findings: Iterable[Finding], manifest_files: Iterable[str]) -> dict[Finding, Place]:
    """Each finding's line and column (0: the line only) in its file, where it can be found: the object's document
    (by kind and name; `document N` by number in a manifest file, whose text is what was read), then the field its
    path names. Files are read once each, within the manifest size limit."""
    manifests = set(manifest_files)
    files: dict[str, _File | None] = {}
    places: dict[Finding, Place] = {}
    for finding in findings:
        if not finding.object or finding.object == "(file)":
            continue
        if finding.source not in files:
            files[finding.source] = _read(finding.source)
        file = files[finding.source]
        place = file.place(finding, finding.source in manifests) if file is not None else None
        if place is not None:
            places[finding] = place
    return places


def _read(source: str) -> _File | None:
    path = Path(source)
    if path.suffix == ".json" or not path.is_file():
        return None
    try:
        return _File(read_text(path))
    except (InputError, OSError):
        return None
