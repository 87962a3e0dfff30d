"""A loaded profile and how to point into it: the line and column of every key and value, also of a value a
merge key (`<<: *base`) brought in from where it was written."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq, merge_attrib

from mpigen.support.diagnostics import Diagnostic, Location


@dataclass(frozen=True)
class ProfileFile:
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
    documents: list[ProfileFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    file_count: int = 0
    fingerprint: str | None = None
    """The digest of every profile file read (ProfilesFingerprint); None if loading reported anything (a
    discovery problem, a file that could not be read or parsed)."""


def position(tree: Any, keys: Iterable[str | int], at_key: bool = False) -> tuple[int, int]:
    """Line and column (1-based) of the node at `keys`, or of the deepest ancestor that exists.

    With `at_key`, the position of the last key itself rather than its value: where an editor
    should put the cursor for an unknown or duplicate key.
    """
    keys = list(keys)
    node = tree
    line, column = node_position(tree)
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


def index_merged_keys(mapping: CommentedMap) -> None:
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


def node_position(node: Any) -> tuple[int, int]:
    lc = getattr(node, "lc", None)
    if lc is not None and lc.line is not None:
        return lc.line + 1, lc.col + 1
    return 1, 1


def one_based(pos: Any) -> tuple[int, int]:
    return (pos[0] + 1, pos[1] + 1) if pos is not None and pos[0] is not None else (1, 1)
