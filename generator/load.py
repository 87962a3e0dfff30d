"""Stage 1: read profile files into YAML trees that remember line and column of every node.

Nothing here knows what a profile means; it only refuses files that are not one YAML mapping
(bad encoding, bad YAML, duplicate keys, several documents, alias bombs, oversized files), and
paths it cannot read: a folder that cannot be listed is never taken for an empty one, since its
profiles' charts would then be pruned.

What YAML decides by a scalar's look stays the text written where no profile wants a type: keys,
timestamps, `=`. Merge keys (`<<: *base`) work, and a merged value is located where it was written.
Every scan of the text is linear in its size (files are at most 1 MiB of hostile text).
"""

from __future__ import annotations

import math
import os
import re
import stat
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import (
    CommentedMap,
    CommentedOrderedMap,
    CommentedSeq,
    CommentedSet,
    TaggedScalar,
    merge_attrib,
)
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import MantissaNoDotYAML1_1Warning, MarkedYAMLError, YAMLError, YAMLWarning
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scalarbool import ScalarBoolean

from generator.diagnostics import Diagnostic, Location
from generator.yamllimits import MAX_EXPANDED_NODES, MAX_FILE_BYTES, MAX_NESTING
from generator.yamllimits import expanded_size as _expanded_size
from generator.yamllimits import line_column as _line_column
from generator.yamllimits import too_deep as _too_deep

PROFILE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Document:
    """One profile file: its tree plus the two names it goes by.

    `path` is what the user typed (for error messages, clickable in editors); `source` is the
    path relative to the profiles folder's parent, the same on every machine (for comments in
    the output, which must be byte-identical everywhere).
    """

    path: str
    source: str
    data: CommentedMap
    lines: tuple[str, ...] = ()

    def token(self, line: int, column: int) -> str:
        """The source text of a plain scalar at (line, column): how the user wrote a number, e.g. `1.30`.

        Ends where a comment, the line or a flow collection (`,`, `]`, `}`) would end it: `16` of `[-np, 16]`.
        An anchor or tag before it (`&v 1.30`) is not part of it; an alias (`*v`) or a quoted scalar has no
        plain text here, so the answer is "" (the caller shows the value instead).
        """
        if not 0 < line <= len(self.lines):
            return ""
        text = self.lines[line - 1]
        start = column - 1
        # One pass over the line, never a slice per step (a regex such as `\s+#|\s*$` retries from every space,
        # and cutting off one `&a ` at a time copies the rest each time: both quadratic on a hostile line).
        in_property = False
        for index in range(start, len(text)):
            char = text[index]
            if in_property:  # node properties (`&anchor`, `!tag`), in either order, end at white space
                in_property = char not in " \t"
            elif char in "&!":
                in_property = True
            elif char not in " \t":
                start = index
                break
        else:
            return ""
        if text[start] in "*'\"":
            return ""
        for index in range(start, len(text)):
            char = text[index]
            if char in ",]}" or (char == "#" and text[index - 1].isspace()):
                return text[start:index].strip()
        return text[start:].strip()

    def token_at(self, where: Location) -> str:
        """The source text at a location this document gave (a merged profile's may lie in another file)."""
        return self.token(where.line, where.column)

    @property
    def kind(self) -> Any:
        return self.data.get("kind")

    def location(self, *keys: str | int, at_key: bool = False) -> Location:
        line, column = position(self.data, keys, at_key=at_key)
        return Location(self.path, line, column)


@dataclass(frozen=True)
class Unreadable:
    """A file that could not be loaded, and the kind and name it seems to declare (or None).

    Validation uses the guess to stay quiet about references to a profile whose own file is
    already reported, instead of adding a misleading "no such profile" elsewhere.
    """

    path: str
    identity: tuple[str | None, str | None]


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    file_count: int = 0


def position(tree: Any, keys: Iterable[str | int], at_key: bool = False) -> tuple[int, int]:
    """Line and column (1-based) of the node at `keys`, or of the deepest ancestor that exists.

    With `at_key`, the position of the last key itself rather than its value: where an editor
    should put the cursor for an unknown or duplicate key.
    """
    keys = list(keys)
    node = tree
    line, column = _node_position(tree)
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        if isinstance(node, CommentedMap) and key in node:
            # An empty value (`image:`) has no position of its own (ruamel gives the next token's): use its key's.
            owner = _written_in(node, key)
            if owner is not None:
                pos = owner.lc.key(key) if (last and at_key) or node[key] is None else owner.lc.value(key)
                if pos is not None and pos[0] is not None:
                    line, column = pos[0] + 1, pos[1] + 1
            node = node[key]
        elif isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node):
            pos = node.lc.item(key)
            if pos is not None and pos[0] is not None:
                line, column = pos[0] + 1, pos[1] + 1
            node = node[key]
        else:
            break
    return line, column


def _written_in(node: CommentedMap, key: Any) -> CommentedMap | None:
    """The mapping whose text holds `key`: `node` itself, or for a key brought in by a merge (`<<: *base`),
    the merged mapping it was written in, so positions point where the value was written."""
    if key in (node.lc.data or {}):  # None in a mapping of merged keys only
        return node
    return getattr(node, _MERGED_FROM, {}).get(key)


_MERGED_FROM = "_mpigen_merged_from"
"""Attribute of a mapping with merge keys: each merged key -> the mapping it was written in, built once as the
mapping is read; looking through the merged mappings on each call was quadratic with many merges and errors."""


def _index_merged_keys(mapping: CommentedMap) -> None:
    """Record where each merged key of `mapping` was written. The merged mappings were read first, so their own
    records are complete; the first mapping that has a key wins, as in YAML's merge."""
    own = mapping.lc.data or {}
    merged_from: dict[Any, CommentedMap] = {}
    for merged in getattr(mapping, merge_attrib, ()):
        inner = getattr(merged, _MERGED_FROM, {})
        for key in merged:
            if key not in own and key not in merged_from:
                merged_from[key] = inner.get(key, merged)
    setattr(mapping, _MERGED_FROM, merged_from)


def _node_position(node: Any) -> tuple[int, int]:
    lc = getattr(node, "lc", None)
    if lc is not None and lc.line is not None:
        return lc.line + 1, lc.col + 1
    return 1, 1


def discover(paths: Iterable[Path]) -> tuple[list[tuple[Path, Path]], list[Diagnostic]]:
    """Profile files under `paths`, as (file, root it was found under), sorted for determinism.

    Links are followed only while they stay inside the root; one that leads out is reported, so
    no profile silently goes missing and nothing outside the folder is read. For the same reason a
    folder that cannot be listed, and an entry that might have been a folder (a link to nothing or in a
    circle, a FIFO), are errors: skipping them would compile, and prune, as if their profiles were gone.
    """
    found: list[tuple[Path, Path]] = []
    problems: list[Diagnostic] = []
    for root in paths:
        if root.is_file():
            found.append((root, root.parent))
            continue
        if not root.is_dir():
            what = "is a FIFO, socket or device, not a file or folder" if root.exists() else "no such file or folder"
            problems.append(Diagnostic(Location(str(root)), what,
                                       "give the profiles folder, e.g. `mpigen validate profiles`"))
            continue
        real_root = root.resolve()
        seen: set[Path] = set()
        unlisted: list[OSError] = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=unlisted.append):
            real_dir = Path(dirpath).resolve()
            if real_dir in seen:
                dirnames[:] = []
                continue
            seen.add(real_dir)
            kept = []
            for name in sorted(dirnames):
                folder = Path(dirpath) / name
                if name.startswith("."):
                    continue
                problem = _leaves(folder, real_root)
                if problem:
                    problems.append(problem)
                    continue
                kept.append(name)
            dirnames[:] = kept
            for name in sorted(filenames):
                file = Path(dirpath) / name
                if name.startswith("."):
                    continue
                if not name.endswith(PROFILE_SUFFIXES):
                    problem = _not_plainly_ignorable(file, real_root)
                    if problem:
                        problems.append(problem)
                    continue
                problem = _leaves(file, real_root)
                if problem:
                    problems.append(problem)
                    continue
                found.append((file, root))
        # A folder that cannot be listed is not an empty one: skipping it would prune the charts of its profiles.
        problems += [Diagnostic(Location(str(error.filename or root)),
                                f"cannot read the folder: {error.strerror or error}",
                                "make it readable (or remove it from the profiles); nothing was compiled without it")
                     for error in unlisted]
    found.sort(key=lambda pair: pair[0].as_posix())
    return found, problems


def _not_plainly_ignorable(path: Path, real_root: Path) -> Diagnostic | None:
    """Why an entry that is not named like a profile may not be skipped: what it is cannot be known (a link to
    nothing, or round in a circle), or it is no file at all (a FIFO, socket or device). Any of these may stand
    where a folder of profiles was (`profiles/jobs`), and skipping it would prune the charts of its profiles.
    A plain file, or a link to one, is skipped as ever (README.md, notes)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return _dangling(path, str(path)) if path.is_symlink() else None  # else gone since it was listed: a file, skipped
    except OSError:
        return _leaves(path, real_root) or Diagnostic(Location(str(path)), "cannot be read",
                                                      "make it readable, or remove it")
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return Diagnostic(Location(str(path)), "is a FIFO, socket or device, not a file or folder",
                      "remove it: the profiles folder holds YAML files and folders of them")


def _dangling(link: Path, shown: str) -> Diagnostic:
    return Diagnostic(Location(shown), f"is a link to '{os.readlink(link)}', which does not exist",
                      "point the link at a profile, or remove it")


def _leaves(path: Path, real_root: Path) -> Diagnostic | None:
    """Why `path` may not be read as part of the folder at `real_root`: a link out of it, or round in a circle."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # Python < 3.13 raises RuntimeError on a loop of links
        return Diagnostic(Location(str(path)), "is a link that leads round in a circle (to itself, or through links "
                          "that point at each other)", "point the link at a profile, or remove it")
    if real.is_relative_to(real_root):
        return None
    return Diagnostic(Location(str(path)), "is a link that leads outside the profiles folder",
                      "copy the profiles into the folder instead of linking to them")


def load_paths(paths: Iterable[Path]) -> LoadResult:
    files, problems = discover(paths)
    result = LoadResult(diagnostics=problems, file_count=len(files))
    for file, root in files:
        source = _stable_source_name(file, root)
        document, diagnostics = load_file(file, str(file), source)
        result.diagnostics.extend(diagnostics)
        if document is not None:
            result.documents.append(document)
        elif file.is_file():
            result.unreadable.append(Unreadable(str(file), _guess_identity(file)))
    return result


def _stable_source_name(file: Path, root: Path) -> str:
    base = root.resolve()
    name = base.name or "profiles"
    try:
        return f"{name}/{file.resolve().relative_to(base).as_posix()}"
    except ValueError:
        return file.name


def load_file(file: Path, path: str, source: str) -> tuple[Document | None, list[Diagnostic]]:
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            return None, [Diagnostic(Location(path), "is not a regular file", "profiles must be plain YAML files")]
        if info.st_size > MAX_FILE_BYTES:
            return None, [_too_big(path, info.st_size)]
        with file.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        if file.is_symlink() and not file.exists():
            return None, [_dangling(file, path)]
        return None, [Diagnostic(Location(path), f"cannot read the file: {exc.strerror}")]
    return load_bytes(raw, path, source)


def _too_big(path: str, size: int) -> Diagnostic:
    return Diagnostic(Location(path), f"file is {size} bytes, more than the {MAX_FILE_BYTES} a profile may have",
                      "split it: one hardware, cluster or job per file")


_IDENTITY_LINE = re.compile(r"^(kind|name):[ \t]*['\"]?([A-Za-z0-9._-]+)['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)


def _guess_identity(file: Path) -> tuple[str | None, str | None]:
    """Top-level `kind:` and `name:` of a file that failed to load, read line by line."""
    try:
        with file.open("rb") as handle:
            text = handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None, None
    found = dict(m.groups() for m in _IDENTITY_LINE.finditer(text))
    return found.get("kind"), found.get("name")


MERGE_TAG = "tag:yaml.org,2002:merge"
NOT_MERGEABLE = "merge value is not a mapping"
MERGES_ITSELF = "merge value contains the mapping"
INSIDE_ITSELF = "alias inside its own anchor"
_IMPLICIT_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "null", "timestamp"))
"""Tags YAML gives a plain scalar by its look (`true`, `0x1F`, `1e3`, `~`, `2024-01-01`), not by what it means."""


class _ProfileConstructor(RoundTripConstructor):
    """ruamel's round-trip constructor, minus YAML's implicit rewrites of text no profile field wants rewritten.

    - Keys stay the text written: every key of a profile is a name (an env variable, a label, a field), and
      `true:` would otherwise come out as `True`, `1e3:` as `1000.0`, `null:` as `None`.
    - Dates and times stay text: no profile field is a timestamp, and `2024-01-01 10:00:00` in an env value or
      an image would otherwise come out as `2024-01-01T10:00:00`.
    - A plain `=` or `<<` that is a value is that text (YAML 1.2 has no `=` type; `<<` merges only as a key).
    Numbers, booleans and null stay typed: where a string belongs, the schema refuses them with the written
    text and a hint to quote it, so nothing is silently reformatted either way.
    """

    def construct_mapping(self, node: Any, maptyp: Any, deep: bool = False) -> Any:
        node.value = [(_as_text(key) if isinstance(key, ScalarNode) and key.tag in _IMPLICIT_TAGS else key, value)
                      for key, value in node.value]
        for key, value in node.value:
            merged = value.value if isinstance(value, SequenceNode) else [value]
            if key.tag == MERGE_TAG and not all(isinstance(item, MappingNode) for item in merged):
                # ruamel would point at the merged value, which for an alias is its anchor's: say it at the `<<`.
                raise ConstructorError(problem=NOT_MERGEABLE, problem_mark=key.start_mark)
            if key.tag == MERGE_TAG and any(item in self.recursive_objects for item in merged):
                # The mapping itself, or one it sits in (`a: &a {<<: *a}`): still being read, nothing to merge yet.
                raise ConstructorError(problem=MERGES_ITSELF, problem_mark=key.start_mark)
        keys = [key for key, _ in node.value]
        merge_at = next((i for i, key in enumerate(keys) if key.tag == MERGE_TAG), None)
        constructed = super().construct_mapping(node, maptyp, deep=deep)
        if merge_at is not None:  # merged keys stand where `<<` was written, as if written out there (env order)
            own = list(maptyp)[:len(keys) - 1]
            order = [*own[:merge_at], *list(maptyp)[len(keys) - 1:], *own[merge_at:]]
            for key in order:
                maptyp.move_to_end(key)
            _index_merged_keys(maptyp)
        return constructed

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        if node in self.recursive_objects and node not in self.constructed_objects:
            # An alias inside its own anchor's value (`a: &a [*a]`): ruamel makes it None, without a word.
            raise ConstructorError(problem=INSIDE_ITSELF, problem_mark=node.start_mark)
        return super().construct_object(node, deep=deep)

    def construct_yaml_map(self, node: Any) -> Iterator[CommentedMap]:
        """ruamel's, building a `_ProfileMapping`."""
        data = _ProfileMapping()
        data._yaml_set_line_col(node.start_mark.line, node.start_mark.column)
        yield data
        self.construct_mapping(node, data, deep=True)
        self.set_collection_style(data, node)

    def construct_written_text(self, node: Any, values: Any = None) -> Any:
        return self.construct_scalar(node)


class _ProfileMapping(CommentedMap):
    """A mapping as ruamel reads it, but merging into it takes constant time: ruamel's `add_referent` looks for
    the merging mapping among all earlier ones by equality (`cm not in self._ref`), so 50,000 mappings that
    merge one anchor (`<<: *base`, a 1 MiB profile) took hours. Each mapping merges once, so no check is needed."""

    __slots__ = ()

    def add_referent(self, cm: Any) -> None:
        self._ref.append(cm)


def _as_text(node: ScalarNode) -> ScalarNode:
    """The same scalar, as the string it was written as."""
    return ScalarNode("tag:yaml.org,2002:str", node.value, node.start_mark, node.end_mark, style=node.style,
                      anchor=node.anchor)


for _tag in ("timestamp", "value", "merge"):
    _ProfileConstructor.add_constructor(f"tag:yaml.org,2002:{_tag}", _ProfileConstructor.construct_written_text)
_ProfileConstructor.add_constructor("tag:yaml.org,2002:map", _ProfileConstructor.construct_yaml_map)


def load_bytes(raw: bytes, path: str, source: str) -> tuple[Document | None, list[Diagnostic]]:
    def fail(message: str, hint: str = "", line: int = 1, column: int = 1):
        return None, [Diagnostic(Location(path, line, column), message, hint)]

    if len(raw) > MAX_FILE_BYTES:
        return None, [_too_big(path, len(raw))]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = raw[:exc.start].decode("utf-8")  # valid: the decoder stopped after it
        line, column = _line_column(prefix, len(prefix))
        return fail(f"byte 0x{raw[exc.start]:02x} is not valid UTF-8", "save the file as UTF-8",
                    line, column)
    if text.startswith("\ufeff"):
        text = text[1:]
    too_deep = _too_deep(text)
    if too_deep is not None:
        what, line, column = too_deep
        return fail(f"{what} nest more than {MAX_NESTING} deep", "a profile needs no such nesting", line, column)
    yaml = YAML(typ="rt", pure=True)
    yaml.Constructor = _ProfileConstructor
    yaml.allow_duplicate_keys = False
    caught: list[warnings.WarningMessage] | None = None
    try:
        with warnings.catch_warnings(record=True) as caught:
            # The parser's warnings are the file's problems, and the first ends the parse: recording each of
            # 170,000 reused anchors on a 1 MiB line took 13 s, to report only the first.
            warnings.simplefilter("error", YAMLWarning)
            documents = list(yaml.load_all(text))
    except YAMLWarning as warning:
        _pass_on(caught)
        line, column, message, hint = _yaml_warning(warning)
        return fail(message, hint, line, column)
    except MarkedYAMLError as exc:
        mark, message, hint = _yaml_problem(exc)
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        return fail(message, hint, line, column)
    except ReaderError as exc:  # a character YAML does not allow anywhere, e.g. NUL: its position, no mark
        line, column = _line_column(text, int(exc.position))
        code = int(exc.character)
        escape = f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
        return fail(f"character U+{code:04X} is not allowed in YAML",
                    f'delete it, or write it as the escape "{escape}" inside a double-quoted string', line, column)
    except YAMLError as exc:
        return fail(f"not valid YAML: {' '.join(str(exc).split())}")
    except RecursionError:  # deeper than _too_deep counts (e.g. nesting within one flow item): no position
        return fail("lists and mappings nest too deep", "a profile needs no such nesting")
    _pass_on(caught)
    documents = [d for d in documents if d is not None]
    if not documents:
        return fail("file is empty", "a profile needs at least apiVersion, kind and name")
    if len(documents) > 1:
        line, column = _node_position(documents[1])
        return fail(f"file holds {len(documents)} YAML documents",
                    "put one profile in each file and remove the `---` separators", line, column)
    data = documents[0]
    if not isinstance(data, CommentedMap):
        return fail("a profile must be a mapping of keys to values",
                    "start with `apiVersion: mpigen/v1alpha1` and `kind:`")
    count = 1
    for key, value in data.items():  # key by key, to point at the one whose value blows the budget
        count += 1 + _expanded_size(value, MAX_EXPANDED_NODES - count)
        if count > MAX_EXPANDED_NODES:
            line, column = _one_based(data.lc.value(key))
            return fail(f"YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes",
                        "write the values out instead of nesting anchors and aliases", line, column)
    odd = _first_odd_node(data)
    if odd is not None:
        (line, column), message, hint = odd
        return fail(message, hint, line, column)
    return Document(path=path, source=source, data=data, lines=tuple(text.splitlines())), []


_MARK = re.compile(r", line (\d+), column (\d+)")


def _reused_anchor(text: str) -> tuple[str, int, int, int] | None:
    """Name, first line, and line and column of the second definition, from ruamel's duplicate-anchor warning
    (text only: the anchor's repr and both marks). Split on the fixed phrases, then one mark search in each
    part: a pattern spanning the whole message would backtrack over every character of a long anchor."""
    _, found, rest = text.partition("found duplicate anchor ")
    name, found_first, rest = rest.partition("first occurrence") if found else ("", "", "")
    first_part, found_second, second_part = rest.partition("second occurrence") if found_first else ("", "", "")
    first, second = _MARK.search(first_part), _MARK.search(second_part)
    if not (found_second and first and second):
        return None
    return name.strip(), int(first[1]), int(second[1]), int(second[2])


def _pass_on(caught: list[warnings.WarningMessage] | None) -> None:
    """Warnings other than the parser's (a library's DeprecationWarning) are not ours to judge: pass them on."""
    for warning in caught or ():
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)


def _yaml_warning(warning: Warning | str) -> tuple[int, int, str, str]:
    """Line, column, message and hint for a warning of the YAML parser, which would otherwise be printed raw,
    over several lines, beside the diagnostics (and the profile read anyway)."""
    if isinstance(warning, MantissaNoDotYAML1_1Warning):
        line, column = _one_based((warning.node.start_mark.line, warning.node.start_mark.column))
        return (line, column, f"the number {warning.flt} has no `.` in its mantissa, which YAML 1.1 requires",
                "write it with a dot (e.g. 1.0e3), or remove the `%YAML 1.1` line")
    text = str(warning)
    found = _reused_anchor(text)
    if found:
        name, first, line, column = found
        return (line, column, f"anchor &{name[1:-1]} is defined a second time (first on line {first})",
                "give each anchor its own name")
    return 1, 1, f"not valid YAML: {' '.join(text.split())}", "check the anchors and aliases, tags and directives"


def _tag_of(node: Any) -> str | None:
    """The tag written on `node` (`!secret`, `!!python/object/apply:os.system`), or None for a plain node."""
    if isinstance(node, TaggedScalar) or (isinstance(node, (CommentedMap, CommentedSeq)) and node.tag.value):
        return str(node.tag.value).replace("tag:yaml.org,2002:", "!!")
    if isinstance(node, bytes):
        return "!!binary"
    if isinstance(node, CommentedSet):
        return "!!set"
    if isinstance(node, CommentedOrderedMap):
        return "!!omap"
    return None


def _first_odd_node(data: CommentedMap) -> tuple[tuple[int, int], str, str] | None:
    """Where the tree holds what no profile needs and JSON cannot say: a tagged value or a key that is a
    list or mapping. A tag is otherwise dropped without a word (`image: !secret x` is just `x`), and a
    Python tag is a request to run code; mpigen's loader runs none, and refuses the file instead."""
    stack: list[Any] = [data]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, CommentedMap):
            for key, value in node.items():
                if not isinstance(key, str):
                    return (_one_based(node.lc.key(key)), "a key must be a plain name, not a list, mapping or "
                            "tagged value", "write the key as a word, e.g. `workers:`")
                tag = _tag_of(value)
                if tag is not None:
                    return (_one_based(node.lc.value(key)), f"YAML tag `{tag}` is not allowed in a profile",
                            "remove the tag; quote the value if it must be a string")
                stack.append(value)
        elif isinstance(node, CommentedSeq):
            for i, item in enumerate(node):
                tag = _tag_of(item)
                if tag is not None:
                    return (_one_based(node.lc.item(i)), f"YAML tag `{tag}` is not allowed in a profile",
                            "remove the tag; quote the value if it must be a string")
                stack.append(item)
    return None


def _one_based(pos: Any) -> tuple[int, int]:
    return (pos[0] + 1, pos[1] + 1) if pos is not None and pos[0] is not None else (1, 1)


def _yaml_problem(exc: MarkedYAMLError) -> tuple[Any, str, str]:
    """Where the parser's complaint should point, what it means in words, and how to fix it."""
    problem = (exc.problem or "").strip()
    context = (exc.context or "").strip()
    mark, opened = exc.problem_mark or exc.context_mark, exc.context_mark
    if "\\t" in problem or "tab" in problem or "\\t" in context:
        return mark, "a tab character is not allowed here: YAML indents with spaces", "replace the tab with spaces"
    if problem == NOT_MERGEABLE:  # `<<: 5`, `<<: [1]`, `<<: *list`
        return mark, "`<<` merges mappings into this one, but its value is not a mapping or a list of mappings", \
            "write `<<: *name` or `<<: [*a, *b]` where each anchor names a mapping, or quote `\"<<\"` for a plain key"
    if problem == MERGES_ITSELF:
        return mark, "`<<` merges a mapping into itself: the alias names this mapping, or one it is part of", \
            "merge a mapping defined outside this one"
    if problem == INSIDE_ITSELF:
        return mark, "this anchor's value holds an alias of itself, so it would never end", \
            "write the value out, or move the alias out of the anchored value"
    if "duplicate merge key" in problem:
        return mark, "`<<` appears twice in this mapping", "merge several mappings with one `<<: [*a, *b]`"
    if "duplicate key" in problem:
        return mark, f"{problem}: each key may appear once", "remove or rename one of them"
    if context == "while scanning a quoted scalar" and "end of stream" in problem and opened is not None:
        return opened, "not valid YAML: this quote is never closed", "add the closing quote"
    if context.startswith("while parsing a flow ") and opened is not None:
        bracket, closer = ("[", "]") if "sequence" in context else ("{", "}")
        if "<stream end>" in problem:
            return opened, f"not valid YAML: this `{bracket}` is never closed", f"close it with `{closer}`"
        return mark, f"not valid YAML: {problem}", (f"close the `{bracket}` of line {opened.line + 1}, column "
                                                    f"{opened.column + 1} with `{closer}` before this, or quote the "
                                                    "value if it holds `:`, `,` or brackets")
    if problem.startswith("expected <block end>"):
        return mark, "not valid YAML: this line is indented differently from the lines before it", \
            "indent the keys of one mapping, and the `-` of one list, by the same number of spaces"
    if problem.startswith("found undefined alias"):
        return mark, f"not valid YAML: {problem}", "define the anchor (`&name`) on a value before the alias, " \
            "or write the value out"
    return mark, f"not valid YAML: {problem or context or 'cannot be read'}", \
        "check the indentation and quoting on this line"


EXACT_FLOAT_INTEGERS = 2**53
"""Beyond this a float no longer holds every whole number: `1e300` stays a float (and schema maxima refuse it)."""


def to_plain(data: Any) -> Any:
    """The YAML tree as plain JSON-like values (keys are text already: see `_ProfileConstructor`).

    A whole number written as a float (`4.0`, `1e3`) is that integer: it means the same in JSON, and a chart
    must not say `replicas: 1000.0`, which Kubernetes refuses for an integer field. A boolean with an anchor
    (`&ro true`) is ruamel's int subclass: it is a bool here.
    """
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [to_plain(v) for v in data]
    if isinstance(data, (bool, ScalarBoolean)):
        return bool(data)
    if data is None:
        return None
    if isinstance(data, int):
        return int(data)
    if isinstance(data, float):
        whole = math.isfinite(data) and data.is_integer() and abs(data) <= EXACT_FLOAT_INTEGERS
        return int(data) if whole else float(data)
    return str(data)
