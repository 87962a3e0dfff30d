"""The render's transaction: stage every new file beside a plan, commit the plan with one rename, then move the
files into place and prune; and `recover`, which finishes a committed render or discards one that never
committed (the stage's docstring, generator/write/__init__.py, says why it is built so)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from mpigen.support.diagnostics import one_line
from mpigen.support.progress import Tally, tallied
from mpigen.write.folder import _Folder, describe, open_dir, reason, remove_tree
from mpigen.write.lock import output_lock, signals_deferred
from mpigen.write.ownership import ownership_bytes, read_owned
from mpigen.write.paths import (
    CACHE_DIR,
    COMMITTED_PLAN,
    MAX_LIST_BYTES,
    OWNERSHIP_FILE,
    PLAN_FILE,
    STAGING_DIR,
    WriteError,
    WriteFailed,
    WriteRefused,
    check_relative,
)
from mpigen.write.plan import checked_plan, refuse_plan
from mpigen.write.stamp import StampRequest, read_clock, record_stamp, unseal


def write_tree(out_dir: Path, files: dict[str, bytes], stamp: StampRequest | None = None,
               tally: Tally | None = None) -> WriteReport:
    """Make `out_dir` hold exactly `files` (plus the ownership list), as one transaction under the folder's lock.
    Every failure is a WriteError whose message says whether the folder was left as it was. With `stamp`, the
    folder is stamped afterwards (stamp.py) so that the same render next time has nothing to do. `tally` hears of
    the files compared and staged (most of the time); the moves into place after the commit are not counted."""
    for path in files:
        check_relative(path)
        if path == OWNERSHIP_FILE:
            raise WriteRefused(f"refusing to write '{OWNERSHIP_FILE}' as a chart file: the name is mpigen's own")
    wanted = {**files, OWNERSHIP_FILE: ownership_bytes(files)}
    state = {"committed": False}
    try:
        with output_lock(out_dir) as folder:
            report, clock_ns = _write_locked(folder, files, wanted, state, stamped=stamp is not None, tally=tally)
            if stamp is not None and clock_ns is not None:
                with contextlib.suppress(OSError, WriteError):  # a stamp is a shortcut: without one, renders compile
                    record_stamp(folder, stamp, wanted, clock_ns)
            return report
    except OSError as exc:
        if state["committed"]:
            raise WriteFailed(f"the render into {one_line(str(out_dir))} was committed but could not be completed: "
                              f"{reason(exc)}; fix that and run mpigen render again to complete it") from None
        raise WriteFailed(f"cannot write the charts into {one_line(str(out_dir))}: {reason(exc)}; "
                          "nothing was changed") from None


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


def _write_locked(folder: _Folder, files: dict[str, bytes], wanted: dict[str, bytes], state: dict[str, bool],
                  stamped: bool, tally: Tally | None = None) -> tuple[WriteReport, int | None]:
    """The transaction; with `stamped`, also the file system's clock read before any file was compared or
    written (stamp.read_clock, for record_stamp), None if it could not be read (then no stamp)."""
    previous = read_owned(folder)
    if previous is None and [name for name in folder.entries() if name not in (STAGING_DIR, CACHE_DIR)]:
        raise WriteRefused(f"{one_line(str(folder.shown))} is not empty and holds no {OWNERSHIP_FILE}: mpigen writes "
                           "only into a folder it created; pick an empty or new folder")
    _recover(folder)
    previous = read_owned(folder) or []
    for path in [*wanted, *previous]:
        folder.require_file_or_missing(path)
    report = WriteReport()
    moves: list[str] = []
    try:
        # Inside the try: a signal handled as mkdir returns raises there, and the staging it made must go too.
        os.mkdir(STAGING_DIR, 0o755, dir_fd=folder.fd)
        unseal(folder)  # the folder is changing: no stamp may vouch for it until it is stamped anew
        clock_ns = None
        if stamped:
            with contextlib.suppress(OSError, WriteError):
                clock_ns = read_clock(folder, STAGING_DIR)  # in the staging: nothing is left if the render fails
        for path, data in tallied(sorted(wanted.items()), len(wanted), tally):
            if folder.read(path) == data:
                if path != OWNERSHIP_FILE:
                    report.unchanged.append(path)
                continue
            folder.create(path, data, root=STAGING_DIR)
            moves.append(path)
            if path != OWNERSHIP_FILE:
                report.written.append(path)
        report.pruned = sorted(p for p in set(previous) - set(files) if folder.kind(p) == "file")
        if not moves and not report.pruned:
            _remove_staging(folder)
            return report, clock_ns
        plan = {"move": moves, "delete": report.pruned}
        folder.create(PLAN_FILE, json.dumps(plan, indent=2).encode(), root=STAGING_DIR)
        folder.durable()  # every staged file and the plan on disk before the commit can name them
        with signals_deferred():
            found = folder.locate(PLAN_FILE, root=STAGING_DIR)
            assert found is not None
            staging_fd, name = found
            os.rename(name, COMMITTED_PLAN, src_dir_fd=staging_fd, dst_dir_fd=staging_fd)  # the commit point
            state["committed"] = True
            os.fsync(staging_fd)
            _apply(folder, plan)
    except BaseException:
        if not state["committed"]:
            with contextlib.suppress(OSError, WriteError):
                _remove_staging(folder)
        raise
    return report, clock_ns


def recover(out_dir: Path) -> None:
    """Finish a committed render that was interrupted, or throw away one that never committed (under the lock)."""
    if not out_dir.exists():
        return
    with output_lock(out_dir, create=False) as folder:
        _recover(folder)


def _recover(folder: _Folder) -> None:
    try:
        mode = os.stat(STAGING_DIR, dir_fd=folder.fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        raise WriteRefused(f"{folder.show(STAGING_DIR)} is {describe(folder.fd, STAGING_DIR)}, not a folder "
                           "mpigen made; remove it (and never commit it)")
    try:
        data = folder.read(COMMITTED_PLAN, root=STAGING_DIR, limit=MAX_LIST_BYTES)
    except WriteRefused as exc:
        raise refuse_plan(folder, str(exc)) from None
    if data is None:  # never committed: nothing of it reached the charts
        with signals_deferred():
            unseal(folder)
            _remove_staging(folder)
        return
    plan = checked_plan(folder, data)
    with signals_deferred():
        unseal(folder)
        _apply(folder, plan)


def _apply(folder: _Folder, plan: dict[str, list[str]]) -> None:
    """Move each staged file into place, delete the pruned ones, drop the staging. Safe to run again after a kill."""
    for path in plan["move"]:
        source = folder.locate(path, root=STAGING_DIR)
        if source is None:
            continue
        source_fd, name = source
        try:
            mode = os.stat(name, dir_fd=source_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            continue  # moved before an interruption
        if not stat.S_ISREG(mode):
            raise WriteRefused(f"refusing to move {folder.show(f'{STAGING_DIR}/{path}')} into place: it is "
                               f"{describe(source_fd, name)}; delete {folder.show(STAGING_DIR)}")
        folder.require_file_or_missing(path)
        target = folder.locate(path, create=True)
        assert target is not None
        target_fd, _ = target
        os.rename(name, name, src_dir_fd=source_fd, dst_dir_fd=target_fd)
    folder.forget()  # the deletes below may remove folders kept open
    for path in plan["delete"]:
        _delete(folder, path)
    folder.durable()  # every move and delete on disk before the staging (and its plan) goes
    _remove_staging(folder)


def _remove_staging(folder: _Folder) -> None:
    folder.forget(STAGING_DIR)
    remove_tree(folder.fd, STAGING_DIR)


def _delete(folder: _Folder, path: str) -> None:
    """Remove the file at `path` if it is one, then each folder above it that this leaves empty."""
    parts = path.split("/")
    opened = [folder.fd]
    try:
        for depth, part in enumerate(parts[:-1]):
            found = open_dir(opened[-1], part, partial(folder.show, "/".join(parts[:depth + 1])), create=False)
            if found is None:
                return
            opened.append(found)
        try:
            mode = os.stat(parts[-1], dir_fd=opened[-1], follow_symlinks=False).st_mode
        except FileNotFoundError:
            mode = 0
        if stat.S_ISREG(mode):
            os.unlink(parts[-1], dir_fd=opened[-1])
        for depth in range(len(parts) - 2, -1, -1):
            try:
                os.rmdir(parts[depth], dir_fd=opened[depth])
            except OSError:
                return
    finally:
        for fd in opened[1:]:
            os.close(fd)
