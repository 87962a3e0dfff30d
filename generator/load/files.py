"""Reading profile files: each at most MAX_FILE_BYTES, from a regular file, named the same on every machine;
and for one that fails, the kind and name it seems to declare."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from generator.diagnostics import Diagnostic, Location
from generator.load.discover import dangling, discover
from generator.load.document import LoadResult, ProfileFile, Unreadable
from generator.load.parse import load_bytes, too_big
from generator.parallel import split_map
from generator.yamllimits import MAX_FILE_BYTES


def load_paths(paths: Iterable[Path]) -> LoadResult:
    files, problems = discover(paths)
    result = LoadResult(diagnostics=problems, file_count=len(files))
    bases = _resolved_roots(files)
    loaded = split_map(_load_each, [(file, bases[root]) for file, root in files])
    fingerprint = ProfilesFingerprint()
    for (file, _), (raw, source, document, diagnostics) in zip(files, loaded, strict=True):
        if raw is not None:
            fingerprint.add(str(file), source, raw)
        result.diagnostics.extend(diagnostics)
        if document is not None:
            result.documents.append(document)
        elif file.is_file():
            result.unreadable.append(Unreadable(str(file), _guess_identity(file)))
    result.fingerprint = None if result.diagnostics else fingerprint.hexdigest()
    return result


def _load_each(files: Sequence[tuple[Path, Path]]) -> list[tuple[bytes | None, str, ProfileFile | None,
                                                                  list[Diagnostic]]]:
    """Each (file, resolved root) read and parsed: its bytes, stable name, tree and problems. Files are
    independent, so both cores share them (generator/parallel.py)."""
    loaded = []
    for file, base in files:
        source = _stable_source_name(file, base)
        raw, diagnostics = read_file(file, str(file))
        document = None
        if raw is not None:
            document, diagnostics = load_bytes(raw, str(file), source)
        loaded.append((raw, source, document, diagnostics))
    return loaded


def fingerprint_paths(paths: Iterable[Path]) -> str | None:
    """What `load_paths(paths).fingerprint` will be, reading the files without parsing them (a render's fast
    path); None where discovering or reading reports anything."""
    files, problems = discover(paths)
    if problems:
        return None
    fingerprint = ProfilesFingerprint()
    bases = _resolved_roots(files)
    for file, root in files:
        raw, _ = read_file(file, str(file))
        if raw is None:
            return None
        fingerprint.add(str(file), _stable_source_name(file, bases[root]), raw)
    return fingerprint.hexdigest()


class ProfilesFingerprint:
    """A digest of the profile files read, each by the path the user gave, its stable name and its bytes: all a
    compile's output and messages can depend on from the profiles."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256(b"mpigen profiles 1\0")

    def add(self, path: str, source: str, raw: bytes) -> None:
        for part in (path.encode("utf-8", "surrogateescape"), source.encode("utf-8", "surrogateescape")):
            self._digest.update(len(part).to_bytes(8, "big") + part)
        self._digest.update(len(raw).to_bytes(8, "big") + raw)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def _stable_source_name(file: Path, base: Path) -> str:
    """`file`'s name relative to the parent of `base`, the resolved root it was found under."""
    name = base.name or "profiles"
    try:
        return f"{name}/{file.resolve().relative_to(base).as_posix()}"
    except ValueError:
        return file.name


def _resolved_roots(files: list[tuple[Path, Path]]) -> dict[Path, Path]:
    """Each root resolved once, not once per file found under it."""
    return {root: root.resolve() for root in {root for _, root in files}}


def load_file(file: Path, path: str, source: str) -> tuple[ProfileFile | None, list[Diagnostic]]:
    raw, diagnostics = read_file(file, path)
    if raw is None:
        return None, diagnostics
    return load_bytes(raw, path, source)


def read_file(file: Path, path: str) -> tuple[bytes | None, list[Diagnostic]]:
    """The bytes of a profile file (at most one more than MAX_FILE_BYTES), or why it cannot be read."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # NONBLOCK: a FIFO must not hang us
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None, [Diagnostic(Location(path), "is not a regular file", "profiles must be plain YAML files")]
            if info.st_size > MAX_FILE_BYTES:
                return None, [too_big(path, info.st_size)]
            chunks = []
            left = MAX_FILE_BYTES + 1
            while left > 0 and (chunk := os.read(fd, left)):
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks), []
        finally:
            os.close(fd)
    except OSError as exc:
        if file.is_symlink() and not file.exists():
            return None, [dangling(file, path)]
        return None, [Diagnostic(Location(path), f"cannot read the file: {exc.strerror}")]


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
