"""Reading profile files: each at most MAX_FILE_BYTES, from a regular file, named the same on every machine;
and for one that fails, the kind and name it seems to declare."""

from __future__ import annotations

import re
import stat
from collections.abc import Iterable
from pathlib import Path

from generator.diagnostics import Diagnostic, Location
from generator.load.discover import dangling, discover
from generator.load.document import LoadResult, ProfileFile, Unreadable
from generator.load.parse import load_bytes, too_big
from generator.yamllimits import MAX_FILE_BYTES


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


def load_file(file: Path, path: str, source: str) -> tuple[ProfileFile | None, list[Diagnostic]]:
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            return None, [Diagnostic(Location(path), "is not a regular file", "profiles must be plain YAML files")]
        if info.st_size > MAX_FILE_BYTES:
            return None, [too_big(path, info.st_size)]
        with file.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        if file.is_symlink() and not file.exists():
            return None, [dangling(file, path)]
        return None, [Diagnostic(Location(path), f"cannot read the file: {exc.strerror}")]
    return load_bytes(raw, path, source)


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
