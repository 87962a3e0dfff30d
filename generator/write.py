"""Stage 6: put chart files on disk atomically, deterministically, and prune only what mpigen owns.

The output folder carries `.mpigen-owned`, the sorted list of files the last render wrote. A render
deletes a file only if that list names it; a non-empty folder without the list is refused.

A render changes the folder as one transaction: every new file is first written into
`.mpigen-staging/` beside a plan; only once the plan is committed (an atomic rename) are the files
moved into place and the pruned ones removed. A render killed before that point leaves the folder
as it was (the next render discards the staging); one killed while moving files is completed by
the next render, which finds the committed plan. Renders into one folder take a lock, so two can
never interleave.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
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


STAGING_DIR = ".mpigen-staging"
PLAN_FILE = "plan.json"
COMMITTED_PLAN = "plan.committed.json"
LOCK_TIMEOUT_SECONDS = 120


@contextlib.contextmanager
def output_lock(out_dir: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> Iterator[None]:
    """Exclusive use of an output folder across processes. The lock file lives in the temp folder,
    keyed by the folder's real path, so the output folder holds nothing but charts."""
    key = hashlib.sha256(str(out_dir.resolve()).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"mpigen-{key}.lock"
    with lock_path.open("a") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise WriteRefused(f"another mpigen render has held {out_dir} for {timeout:.0f} s; "
                                       "wait for it to finish") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@dataclass
class TreeDiff:
    """How an output folder differs from what the profiles compile to."""

    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.missing or self.stale or self.extra)


def _ownership_bytes(files: dict[str, bytes]) -> bytes:
    return (json.dumps({"generator": "mpigen", "files": sorted(files)}, indent=2) + "\n").encode()


def compare_tree(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    """What `write_tree` would change, reading only: missing, stale and extra files (the ownership list too)."""
    wanted = {**files, OWNERSHIP_FILE: _ownership_bytes(files)}
    diff = TreeDiff()
    for path, data in sorted(wanted.items()):
        target = out_dir / path
        if not target.is_file():
            diff.missing.append(path)
        elif target.read_bytes() != data:
            diff.stale.append(path)
    if out_dir.is_dir():
        for found in sorted(out_dir.rglob("*")):
            relative = found.relative_to(out_dir).as_posix()
            if found.is_file() and relative not in wanted and not relative.startswith(f"{STAGING_DIR}/"):
                diff.extra.append(relative)
    return diff


def write_tree(out_dir: Path, files: dict[str, bytes]) -> WriteReport:
    for path in files:
        check_relative(path)
    previous = owned_files(out_dir)
    if previous is None and out_dir.exists() and any(p.name != STAGING_DIR for p in out_dir.iterdir()):
        raise WriteRefused(f"{out_dir} is not empty and holds no {OWNERSHIP_FILE}: mpigen writes only into "
                           "a folder it created; pick an empty or new folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    with output_lock(out_dir):
        recover(out_dir)
        previous = owned_files(out_dir)
        for path in previous or []:
            check_relative(path)
        for path in [*files, *(previous or [])]:
            _refuse_links(out_dir, path)
        report = WriteReport()
        moves: list[str] = []
        staging = out_dir / STAGING_DIR
        for path, data in sorted({**files, OWNERSHIP_FILE: _ownership_bytes(files)}.items()):
            target = out_dir / path
            if target.is_dir():
                raise WriteRefused(f"refusing to replace {target}: it is a folder")
            if target.is_file() and target.read_bytes() == data:
                if path != OWNERSHIP_FILE:
                    report.unchanged.append(path)
                continue
            _atomic_write(staging / path, data)
            moves.append(path)
            if path != OWNERSHIP_FILE:
                report.written.append(path)
        report.pruned = sorted(p for p in set(previous or []) - set(files) if (out_dir / p).is_file())
        if not moves and not report.pruned:
            shutil.rmtree(staging, ignore_errors=True)
            return report
        plan = json.dumps({"move": moves, "delete": report.pruned}, indent=2).encode()
        _atomic_write(staging / PLAN_FILE, plan)
        os.replace(staging / PLAN_FILE, staging / COMMITTED_PLAN)  # the commit point
        _fsync_dir(staging)
        _apply(out_dir)
        return report


def recover(out_dir: Path) -> None:
    """Finish a committed render that was interrupted, or throw away one that never committed."""
    staging = out_dir / STAGING_DIR
    if not staging.exists():
        return
    if staging.is_symlink() or not staging.is_dir():
        raise WriteRefused(f"{staging} is not a folder mpigen made; remove it")
    if (staging / COMMITTED_PLAN).is_file():
        _apply(out_dir)
    else:
        shutil.rmtree(staging)


def _apply(out_dir: Path) -> None:
    staging = out_dir / STAGING_DIR
    plan = json.loads((staging / COMMITTED_PLAN).read_text(encoding="utf-8"))
    for path in plan["move"]:
        check_relative(path)
        source = staging / path
        if source.exists():  # not yet moved before an interruption
            (out_dir / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, out_dir / path)
    for path in plan["delete"]:
        check_relative(path)
        target = out_dir / path
        if target.is_file() and not target.is_symlink():
            target.unlink()
        _remove_empty_parents(target.parent, out_dir)
    shutil.rmtree(staging)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
