"""Reading profile files: each at most MAX_FILE_BYTES, from a regular file, named the same on every machine;
and for one that fails, the kind and name it seems to declare."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from mpigen.load.discover import discover
from mpigen.load.document import LoadResult, ProfileFile, Unreadable
from mpigen.load.parse import load_bytes
from mpigen.load.reading import ProfilesFingerprint, identity_lines, read_file, source_names
from mpigen.support.diagnostics import Diagnostic, with_rule
from mpigen.support.parallel import split_map
from mpigen.support.profile_rules import FILES, YAML
from mpigen.support.progress import Tally
from mpigen.support.yamllimits import MAX_FILE_BYTES


def load_paths(paths: Iterable[Path], tally: Tally | None = None) -> LoadResult:
    """Every profile file under `paths`, read and parsed; `tally` hears how many are done, for a progress line."""
    files, problems = discover(paths)
    result = LoadResult(diagnostics=with_rule(FILES, problems), file_count=len(files))
    loaded = split_map(_load_each, list(zip((file for file, _ in files), source_names(files), strict=True)),
                       tally=tally)
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


def _load_each(files: Sequence[tuple[Path, str]]) -> list[tuple[bytes | None, str, ProfileFile | None,
                                                                 list[Diagnostic]]]:
    """Each (file, stable name) read and parsed: its bytes, stable name, tree and problems. Files are
    independent, so both cores share them (generator/support/parallel.py)."""
    loaded = []
    for file, source in files:
        raw, document, diagnostics = _read_and_parse(file, str(file), source)
        loaded.append((raw, source, document, diagnostics))
    return loaded


def load_file(file: Path, path: str, source: str) -> tuple[ProfileFile | None, list[Diagnostic]]:
    _, document, diagnostics = _read_and_parse(file, path, source)
    return document, diagnostics


def _read_and_parse(file: Path, path: str, source: str) -> tuple[bytes | None, ProfileFile | None, list[Diagnostic]]:
    """The file's bytes and tree, or why it cannot be read (rule `files`) or parsed (rule `yaml`)."""
    raw, diagnostics = read_file(file, path)
    if raw is None:
        return None, None, with_rule(FILES, diagnostics)
    document, diagnostics = load_bytes(raw, path, source)
    return raw, document, with_rule(YAML, diagnostics)


def _guess_identity(file: Path) -> tuple[str | None, str | None]:
    """Top-level `kind:` and `name:` of a file that failed to load, read line by line."""
    try:
        with file.open("rb") as handle:
            text = handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None, None
    found = identity_lines(text)
    return found.get("kind"), found.get("name")
