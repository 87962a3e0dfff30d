"""Reading profile files without parsing them: the bytes of each (within MAX_FILE_BYTES, from a regular file), the
name each goes by on every machine, and the fingerprint of them all. Nothing here imports the YAML parser, so a
render whose stamp holds (generator/write/stamp.py) reads its profiles in a few milliseconds."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from mpigen.load.discover import dangling, discover
from mpigen.support.diagnostics import Diagnostic, Location
from mpigen.support.yamllimits import MAX_FILE_BYTES

_IDENTITY_LINE = re.compile(r"^(kind|name):[ \t]*['\"]?([A-Za-z0-9._-]+)['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)


def identity_lines(text: str) -> dict[str, str]:
    """The `kind:` and `name:` a profile's text declares on lines of their own at the top level, read line by line
    without parsing (the last of each): a guess, for a file that failed to load or one only glanced at."""
    return {match.group(1): match.group(2) for match in _IDENTITY_LINE.finditer(text)}


def too_big(path: str, size: int) -> Diagnostic:
    return Diagnostic(Location(path), f"file is {size} bytes, more than the {MAX_FILE_BYTES} a profile may have",
                      "split it: one hardware, cluster or job per file")


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


def source_names(files: list[tuple[Path, Path]]) -> list[str]:
    """Each (file, root it was found under)'s stable name: its real path relative to the parent of its root's real
    path, the same on every machine (or its bare name if a link leads it elsewhere). Each root and folder is
    resolved once; a file only if it is a link (resolving each file took a third of reading a fleet)."""
    bases = {root: root.resolve() for root in {root for _, root in files}}
    real_folders: dict[Path, Path] = {}
    names = []
    for file, root in files:
        base = bases[root]
        if os.path.islink(file):
            real = file.resolve()
        else:
            folder = file.parent
            if folder not in real_folders:
                real_folders[folder] = folder.resolve()
            real = real_folders[folder] / file.name
        try:
            names.append(f"{base.name or 'profiles'}/{real.relative_to(base).as_posix()}")
        except ValueError:
            names.append(file.name)
    return names


def fingerprint_paths(paths: Iterable[Path]) -> str | None:
    """What `load_paths(paths).fingerprint` is where loading reports nothing, reading the files without parsing
    them (a render's fast path); None where discovering or reading reports anything."""
    files, problems = discover(paths)
    if problems:
        return None
    fingerprint = ProfilesFingerprint()
    for (file, _), source in zip(files, source_names(files), strict=True):
        raw, _ = read_file(file, str(file))
        if raw is None:
            return None
        fingerprint.add(str(file), source, raw)
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
