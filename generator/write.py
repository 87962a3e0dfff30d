"""Stage 6: put chart files on disk atomically, deterministically, and prune only what mpigen owns.

The output folder carries `.mpigen-owned`, the sorted list of files the last render wrote. A render
deletes a file only if that list names it; a non-empty folder without the list is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

OWNERSHIP_FILE = ".mpigen-owned"


class WriteRefused(Exception):
    """The output folder is not one mpigen may write to; the message says why and what to do."""


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


def check_relative(path: str) -> None:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts or "\\" in path:
        raise WriteRefused(f"refusing to write '{path}': it would leave the output folder")


def owned_files(out_dir: Path) -> list[str] | None:
    marker = out_dir / OWNERSHIP_FILE
    if not marker.is_file():
        return None
    try:
        listed = json.loads(marker.read_text(encoding="utf-8"))["files"]
    except (ValueError, KeyError, TypeError) as exc:
        raise WriteRefused(f"{marker} is damaged ({exc}); restore it from git or delete the output folder") from exc
    return [str(p) for p in listed]


def _atomic_write(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_tree(out_dir: Path, files: dict[str, bytes]) -> WriteReport:
    for path in files:
        check_relative(path)
    previous = owned_files(out_dir)
    if previous is None and out_dir.exists() and any(out_dir.iterdir()):
        raise WriteRefused(f"{out_dir} is not empty and holds no {OWNERSHIP_FILE}: mpigen writes only into "
                           "a folder it created; pick an empty or new folder")
    for path in previous or []:
        check_relative(path)
    report = WriteReport()
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in [*files, *(previous or [])]:
        _refuse_links(out_dir, path)
    for path, data in sorted(files.items()):
        target = out_dir / path
        if target.is_file() and target.read_bytes() == data:
            report.unchanged.append(path)
            continue
        if target.is_dir():
            raise WriteRefused(f"refusing to replace {target}: it is a folder")
        _atomic_write(target, data)
        report.written.append(path)
    for path in sorted(set(previous or []) - set(files)):
        target = out_dir / path
        if target.is_file():
            target.unlink()
            report.pruned.append(path)
        _remove_empty_parents(target.parent, out_dir)
    marker = (json.dumps({"generator": "mpigen", "files": sorted(files)}, indent=2) + "\n").encode()
    marker_path = out_dir / OWNERSHIP_FILE
    if not (marker_path.is_file() and marker_path.read_bytes() == marker):
        _atomic_write(marker_path, marker)
    return report


def _refuse_links(out_dir: Path, path: str) -> None:
    """Neither the file nor any folder between it and `out_dir` may be a link: a link would carry
    writes and deletions outside the output folder."""
    current = out_dir
    for part in PurePosixPath(path).parts:
        current = current / part
        if current.is_symlink():
            raise WriteRefused(f"refusing to write through {current}: it is a symbolic link; "
                               "replace it with a plain folder or file")


def _remove_empty_parents(folder: Path, stop: Path) -> None:
    while folder != stop and folder.is_relative_to(stop):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
