"""Built-in hardware profiles, and `extends`: a Hardware profile is its base with its own values applied.

Runs between load and validate. Validation and resolve then see every merged profile as one ordinary
document; its `location()` still answers with the file and line where each value was written (the
extending file for values it sets, the base's file for inherited ones), so every later diagnostic points
at text the user can find. Built-ins are only read when a cluster or an `extends` names them, so an unused
one can never cause an error. Pure: documents in, documents and diagnostics out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from mpigen.load import ProfileFile, Unreadable, load_file
from mpigen.support.diagnostics import Diagnostic, Location, did_you_mean, with_rule
from mpigen.support.profile_rules import EXTENDS

BUILTIN_DIR = Path(__file__).parent.parent / "hardware"
BUILTIN_PREFIX = "<builtin>"
"""How diagnostics name a built-in's file (`<builtin>/dgx-a100.yaml`): the same on every machine, and plainly
not a file of the user's."""
KNOWN_KINDS = ("Hardware", "Cluster", "Job")
NOT_INHERITED = ("apiVersion", "kind", "name", "extends")
"""What every profile says for itself: its identity, and (once applied) its base."""

KeyPath = tuple[Any, ...]
"""Keys and list indexes from a profile's root to one node, as `ProfileFile.location` takes them."""


@dataclass(frozen=True)
class MergedDocument(ProfileFile):
    """A Hardware profile with `extends` applied; `data` is the whole merged profile, without `extends`.

    `origins` maps the path of every node of `data` to the unmerged document and path it was written at:
    the merged tree has no line numbers of its own, and one profile's values may come from several files.
    """

    origins: Mapping[KeyPath, tuple[ProfileFile, KeyPath]] = field(default_factory=dict)
    chain: tuple[ProfileFile, ...] = ()
    """The unmerged profiles it is made of, itself first and the base without `extends` last: what a run's
    identity reads (generator/resolve/identity.py), which counts a built-in by its name, not its facts."""

    def location(self, *keys: str | int, at_key: bool = False) -> Location:
        for depth in range(len(keys), -1, -1):
            origin = self.origins.get(tuple(keys[:depth]))
            if origin is not None:
                document, path = origin
                return document.location(*path, *keys[depth:], at_key=at_key)
        return super().location(*keys, at_key=at_key)

    def token_at(self, where: Location) -> str:
        for document, _ in self.origins.values():
            if document.path == where.path:
                return document.token(where.line, where.column)
        return ""


@dataclass
class Expansion:
    """The profiles as validation should see them: every `extends` applied, referenced built-ins added."""

    documents: list[ProfileFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    unresolved: list[Unreadable] = field(default_factory=list)
    """Hardware profiles left out because their base could not be found: validation stays quiet about
    references to them, as it does for files that failed to load."""


def builtin_names() -> tuple[str, ...]:
    """Names of the built-in hardware profiles (each file is named after the profile it holds)."""
    return tuple(sorted(path.stem for path in BUILTIN_DIR.glob("*.yaml")))


def builtin_label(name: str) -> str:
    return f"{BUILTIN_PREFIX}/{name}.yaml"


def is_builtin(document: ProfileFile) -> bool:
    return document.path.startswith(f"{BUILTIN_PREFIX}/")


def load_builtin(name: str) -> tuple[ProfileFile | None, list[Diagnostic]]:
    label = builtin_label(name)
    return load_file(BUILTIN_DIR / f"{name}.yaml", label, label)


def expand_hardware(documents: Sequence[ProfileFile], unreadable: Sequence[Unreadable] = ()) -> Expansion:
    """Apply every Hardware profile's `extends`, and add the built-ins clusters name (and yours do not shadow).

    Other documents pass through unchanged and in order; added built-ins come last, sorted by name.
    """
    return _Catalogue(documents, unreadable).expand()


class _Catalogue:
    """The profiles a name can refer to, and what has been resolved so far (each profile once)."""

    def __init__(self, documents: Sequence[ProfileFile], unreadable: Sequence[Unreadable]) -> None:
        self.documents = documents
        self.user: dict[str, ProfileFile] = {}
        for document in documents:
            name = document.data.get("name")
            if document.kind == "Hardware" and isinstance(name, str):
                self.user.setdefault(name, document)
        # Names validation already speaks of: files that could not be read, and documents of a misspelt kind
        # (likely meant as that hardware). A built-in must not silently stand in for them.
        self.quiet = {name for kind, name in (file.identity for file in unreadable)
                      if name is not None and kind in ("Hardware", None)}
        self.quiet |= {document.data["name"] for document in documents
                       if document.kind not in KNOWN_KINDS and isinstance(document.data.get("name"), str)}
        self.builtins = builtin_names()
        self.loaded: dict[str, ProfileFile | None] = {}
        self.done: dict[str, ProfileFile | None] = {}
        self.diagnostics: list[Diagnostic] = []

    def expand(self) -> Expansion:
        result = Expansion()
        for document in self.documents:
            if document.kind != "Hardware" or "extends" not in document.data:
                result.documents.append(document)
                continue
            merged = self._resolve(document)
            if merged is None:
                name = document.data.get("name")
                result.unresolved.append(Unreadable(document.path, ("Hardware", name if isinstance(name, str) else None)))
            else:
                result.documents.append(merged)
        for name in self._referenced_builtins():
            builtin = self._find(name, from_builtin=True)
            resolved = self._resolve(builtin) if builtin is not None else None
            if resolved is not None:
                result.documents.append(resolved)
            else:  # a bug in mpigen, reported where it lies; the clusters naming it need not say more
                result.unresolved.append(Unreadable(builtin_label(name), ("Hardware", name)))
        result.diagnostics = with_rule(EXTENDS, self.diagnostics)
        return result

    def _referenced_builtins(self) -> list[str]:
        """Built-ins a cluster's node pool names, where no profile of the user's (readable or not) has that name."""
        named: set[str] = set()
        for document in self.documents:
            if document.kind != "Cluster":
                continue
            pools = document.data.get("nodePools")
            for pool in pools if isinstance(pools, list) else ():
                hardware = pool.get("hardware") if isinstance(pool, dict) else None
                if isinstance(hardware, str):
                    named.add(hardware)
        return sorted(n for n in named if n in self.builtins and n not in self.user and n not in self.quiet)

    def _find(self, name: str, from_builtin: bool) -> ProfileFile | None:
        """The profile `name` refers to: the user's first, then a built-in. A built-in's own `extends` names
        built-ins only, so what a built-in is never depends on the user's files."""
        if not from_builtin and name in self.user:
            return self.user[name]
        if name not in self.builtins:
            return None
        if name not in self.loaded:
            document, problems = load_builtin(name)
            self.diagnostics.extend(problems)
            self.loaded[name] = document
        return self.loaded[name]

    def _resolve(self, start: ProfileFile) -> ProfileFile | None:
        """`start` merged onto its chain of bases, or None (reported once, where the chain breaks)."""
        chain: list[ProfileFile] = []
        document: ProfileFile | None = start
        result: ProfileFile | None = None
        while document is not None:
            if document.path in self.done:
                result = self.done[document.path]
                break
            paths = [d.path for d in chain]
            if document.path in paths:
                self._report_cycle(chain[paths.index(document.path):])
                break
            if "extends" not in document.data:
                result = self.done[document.path] = document
                break
            chain.append(document)
            document = self._base_of(document)
        for child in reversed(chain):
            result = None if result is None else merge(result, child)
            self.done[child.path] = result
        return result

    def _base_of(self, document: ProfileFile) -> ProfileFile | None:
        target = document.data["extends"]
        if not isinstance(target, str):
            self.diagnostics.append(Diagnostic(document.location("extends"),
                                               "`extends` must be the name of a hardware profile",
                                               "write the name, e.g. `extends: dgx-a100`"))
            return None
        base = self._find(target, from_builtin=is_builtin(document))
        if base is None and target not in self.quiet and target not in self.loaded:
            choices = self.builtins if is_builtin(document) else [*self.user, *self.builtins]
            self.diagnostics.append(Diagnostic(document.location("extends"),
                                               f"no hardware profile or built-in is named '{target}'",
                                               did_you_mean(target, choices)))
        return base

    def _report_cycle(self, cycle: list[ProfileFile]) -> None:
        """One error for the whole cycle, at the `extends` of its member that comes first in file order."""
        first = min(range(len(cycle)), key=lambda i: cycle[i].path)
        members = cycle[first:] + cycle[:first]
        names = [str(d.data.get("name")) for d in members]
        hint = "remove `extends` from one of them"
        if len(members) == 1 and names[0] in self.builtins:
            hint += (f"; a profile of yours named '{names[0]}' replaces the built-in of that name for all your "
                     "profiles, so to build on the built-in give yours another name")
        self.diagnostics.append(Diagnostic(members[0].location("extends", at_key=True),
                                           f"`extends` goes round in a circle: {' -> '.join([*names, names[0]])}",
                                           hint))


def merge(base: ProfileFile, child: ProfileFile) -> MergedDocument:
    """`child` applied onto `base`, which has no `extends` (any of its own is applied already).

    Mappings merge key by key; lists of mappings merge item by item by `name` (an item with a new name is
    appended); anything else in `child` replaces what `base` has. `child`'s own identity is never inherited.
    """
    merger = _Merger(base, child)
    data = CommentedMap()
    merger.origins[()] = (child, ())
    for key, value in base.data.items():
        if key in NOT_INHERITED:
            continue
        if key in child.data:
            data[key] = merger.both(value, (key,), child.data[key], (key,), (key,))
        else:
            data[key] = merger.copy(base, value, (key,), (key,))
    for key, value in child.data.items():
        if key != "extends" and key not in data:
            data[key] = merger.copy(child, value, (key,), (key,))
    chain = (child, *(base.chain if isinstance(base, MergedDocument) else (base,)))
    return MergedDocument(path=child.path, source=child.source, data=data, lines=child.lines, origins=merger.origins,
                          chain=chain)


class _Merger:
    """Builds the merged tree, recording for each node where it was written."""

    def __init__(self, base: ProfileFile, child: ProfileFile) -> None:
        self.base, self.child = base, child
        self.origins: dict[KeyPath, tuple[ProfileFile, KeyPath]] = {}

    def both(self, old: Any, old_path: KeyPath, new: Any, new_path: KeyPath, path: KeyPath) -> Any:
        """A node both profiles set."""
        if isinstance(old, dict) and isinstance(new, dict):
            self.origins[path] = (self.child, new_path)
            out = CommentedMap()
            for key, value in old.items():
                if key in new:
                    out[key] = self.both(value, (*old_path, key), new[key], (*new_path, key), (*path, key))
                else:
                    out[key] = self.copy(self.base, value, (*old_path, key), (*path, key))
            for key, value in new.items():
                if key not in old:
                    out[key] = self.copy(self.child, value, (*new_path, key), (*path, key))
            return out
        if isinstance(old, list) and isinstance(new, list) and _named(old) and all(isinstance(i, dict) for i in new):
            self.origins[path] = (self.child, new_path)
            by_name: dict[str, int] = {}
            for j, item in enumerate(new):
                if isinstance(item.get("name"), str):
                    by_name.setdefault(item["name"], j)
            listed = CommentedSeq()
            taken: set[int] = set()
            for i, item in enumerate(old):
                same = by_name.get(item["name"])
                if same is not None and same not in taken:
                    taken.add(same)
                    listed.append(self.both(item, (*old_path, i), new[same], (*new_path, same), (*path, len(listed))))
                else:
                    listed.append(self.copy(self.base, item, (*old_path, i), (*path, len(listed))))
            for j, item in enumerate(new):
                if j not in taken:
                    listed.append(self.copy(self.child, item, (*new_path, j), (*path, len(listed))))
            return listed
        return self.copy(self.child, new, new_path, path)

    def copy(self, document: ProfileFile, node: Any, source_path: KeyPath, path: KeyPath) -> Any:
        """A node only `document` sets, copied so the merged tree shares nothing with the files' trees."""
        self.origins[path] = _origin(document, source_path)
        if isinstance(node, dict):
            return CommentedMap((key, self.copy(document, value, (*source_path, key), (*path, key)))
                                for key, value in node.items())
        if isinstance(node, list):
            return CommentedSeq(self.copy(document, item, (*source_path, i), (*path, i)) for i, item in enumerate(node))
        return node


def _named(items: Iterable[Any]) -> bool:
    """A list whose items are mappings that each have a `name` (like `nics`): merged by name."""
    return all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in items)


def _origin(document: ProfileFile, path: KeyPath) -> tuple[ProfileFile, KeyPath]:
    """Where the node at `path` of `document` was written: in a merged document, in one of the files it came from."""
    if isinstance(document, MergedDocument):
        return document.origins.get(path, (document, path))
    return document, path
