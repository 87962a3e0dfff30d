"""Stage 6: put chart files on disk atomically, deterministically, and prune only what mpigen owns.

The output folder carries `.mpigen-owned`, the sorted list of files the last render wrote. A render
deletes a file only if that list names it; a non-empty folder without the list is refused.

A render changes the folder as one transaction: every new file is first written into
`.mpigen-staging/` beside a plan; only once the plan is committed (an atomic rename) are the files
moved into place and the pruned ones removed. A render that fails or is interrupted before that
point leaves the folder as it was and removes its staging (one killed outright leaves the staging,
which the next render discards); one killed while moving files is completed by the next render,
which finds the committed plan. The commit and the moves run with SIGINT and SIGTERM blocked.

Everything on disk is untrusted: a pull request can commit links, a damaged `.mpigen-owned`, or a
whole `.mpigen-staging/plan.committed.json`. So every operation goes through file descriptors: the
output folder is opened once (it must not be a link), each path inside it is walked one folder at
a time with O_NOFOLLOW, and files are read, created, renamed and removed relative to their folder's
descriptor. A link anywhere on the way is an error, never a way out of the folder. A plan found on
disk is replayed only if its shape is exactly the one mpigen writes and every path in it is a plain
relative path inside the folder, checked in the staging folder and in the output folder before
anything moves; replaying such a plan can do nothing a pull request could not do by committing
chart files itself. A plan that fails is refused and nothing is touched.

The lock is flock(2) on the output folder's own directory descriptor: no lock file anywhere, and
every spelling of the folder's path (a different TMPDIR, a relative path, a link to it) meets the
same lock, which the kernel drops when the process ends however it ends. Linux and macOS both
lock directory descriptors opened read-only (BSD flock semantics, one lock per open file). NFS is
not supported: Linux emulates flock there with POSIX locks, which refuse a read-only descriptor;
render then stops with an error saying so. Every check of what the folder holds happens under it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from generator.diagnostics import one_line

OWNERSHIP_FILE = ".mpigen-owned"
STAGING_DIR = ".mpigen-staging"
PLAN_FILE = "plan.json"
COMMITTED_PLAN = "plan.committed.json"
LOCK_TIMEOUT_SECONDS = 120
MAX_LIST_BYTES = 16 * 1024 * 1024  # an ownership list or plan larger than this is not one mpigen wrote
MAX_DEPTH = 64  # folders below the output folder; charts are a few levels deep

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO must not hang us
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class WriteError(Exception):
    """Charts could not be written; the message says why and what to do. The CLI prints it as one line."""


class WriteRefused(WriteError):
    """The output folder is not one mpigen may write to (links, foreign files, a damaged list or plan)."""


class WriteFailed(WriteError):
    """The system refused a read or a write (permissions, a full disk); the message says what state it left."""


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


@dataclass
class TreeDiff:
    """How an output folder differs from what the profiles compile to."""

    missing: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.missing or self.stale or self.extra)


def check_relative(path: object) -> str:
    """`path` if it is a plain relative path inside the output folder (canonical, no `..`, not mpigen's own
    staging folder), else WriteRefused. Every path from a chart, an ownership list or a plan passes here."""
    if not isinstance(path, str):
        raise WriteRefused(f"refusing to write {one_line(repr(path))}: a path must be a string")
    pure = PurePosixPath(path)
    if (not path or pure.is_absolute() or "\\" in path or "\x00" in path or str(pure) != path
            or ".." in pure.parts or pure.parts[0] == STAGING_DIR or len(pure.parts) > MAX_DEPTH):
        raise WriteRefused(f"refusing to write '{one_line(path)}': it is not a plain relative path inside the "
                           "output folder (it would leave it, or names mpigen's staging folder)")
    return path


def _ownership_bytes(files: dict[str, bytes]) -> bytes:
    return (json.dumps({"generator": "mpigen", "files": sorted(files)}, indent=2) + "\n").encode()


def _describe(parent_fd: int, name: str) -> str:
    """What stands at `name`, for an error message."""
    try:
        mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
    except OSError:
        return "not a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file"


class _Folder:
    """An output folder opened by descriptor: every path inside it is reached one folder at a time, never
    through a link. `shown` is how messages name it."""

    def __init__(self, shown: Path, fd: int) -> None:
        self.shown = shown
        self.fd = fd

    def show(self, relative: str) -> str:
        return one_line(str(self.shown / relative))

    @contextlib.contextmanager
    def parent(self, relative: str, create: bool = False, root: str = "") -> Iterator[tuple[int, str] | None]:
        """The descriptor of the folder holding `relative` (under `root`, itself a folder of this one) and the
        last name; None if a folder on the way does not exist and `create` is off. Links refuse."""
        parts = [*([root] if root else []), *relative.split("/")]
        opened: list[int] = []
        current = self.fd
        try:
            for depth, part in enumerate(parts[:-1]):
                found = _open_dir(current, part, self.show("/".join(parts[:depth + 1])), create)
                if found is None:
                    yield None
                    return
                opened.append(found)
                current = found
            yield current, parts[-1]
        finally:
            for fd in reversed(opened):
                os.close(fd)

    def kind(self, relative: str, root: str = "") -> str | None:
        """'file', 'missing', or a refusal for anything else at `relative` (a link, a folder, a device)."""
        with self.parent(relative, root=root) as found:
            if found is None:
                return "missing"
            parent_fd, name = found
            try:
                mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                return "missing"
            if stat.S_ISREG(mode):
                return "file"
            return _describe(parent_fd, name)

    def require_file_or_missing(self, relative: str, root: str = "") -> str:
        """Refuse a link, folder or special file where mpigen would write, move or delete a file."""
        kind = self.kind(relative, root)
        if kind not in ("file", "missing"):
            shown = self.show(f"{root}/{relative}" if root else relative)
            raise WriteRefused(f"refusing to write {shown}: it is {kind}; "
                               "replace it with a plain file, or remove it")
        return kind

    def read(self, relative: str, root: str = "", limit: int | None = None) -> bytes | None:
        """The bytes of the regular file at `relative`, None if there is none; a link or anything else refuses."""
        with self.parent(relative, root=root) as found:
            if found is None:
                return None
            parent_fd, name = found
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=parent_fd)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):
                    self.require_file_or_missing(relative, root)
                raise
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    self.require_file_or_missing(relative, root)
                if limit is not None and info.st_size > limit:
                    raise WriteRefused(f"{self.show(relative)} is {info.st_size} bytes, more than mpigen ever "
                                       "writes there; remove it")
                chunks = []
                while chunk := os.read(fd, 1 << 20):
                    chunks.append(chunk)
                return b"".join(chunks)
            finally:
                os.close(fd)

    def create(self, relative: str, data: bytes, root: str) -> None:
        """A new file, mode 0644, durable before this returns; its folders are made as needed."""
        with self.parent(relative, create=True, root=root) as found:
            assert found is not None
            parent_fd, name = found
            fd = os.open(name, _CREATE_FLAGS, 0o644, dir_fd=parent_fd)
            try:
                os.fchmod(fd, 0o644)  # whatever the umask
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)

    def entries(self) -> list[str]:
        return sorted(os.listdir(self.fd))

    def files(self) -> Iterator[str]:
        """Every non-folder below this one (links too, not followed), as relative paths."""
        yield from _walk(self.fd, "", 0)


def _open_dir(parent_fd: int, name: str, shown: str, create: bool) -> int | None:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            return None
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent_fd)
        return _open_dir(parent_fd, name, shown, create=False)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise WriteRefused(f"refusing to write through {shown}: it is {_describe(parent_fd, name)}, "
                               "not a folder; replace it with a plain folder") from None
        raise


def _walk(fd: int, prefix: str, depth: int) -> Iterator[str]:
    if depth > MAX_DEPTH:
        raise WriteRefused(f"folders nest deeper than {MAX_DEPTH} levels at '{one_line(prefix)}'; remove them")
    with os.scandir(fd) as scan:
        found = sorted((entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan)
    for name, is_dir in found:
        if not is_dir:
            yield f"{prefix}{name}"
            continue
        sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
        try:
            yield from _walk(sub, f"{prefix}{name}/", depth + 1)
        finally:
            os.close(sub)


def _remove_tree(parent_fd: int, name: str, depth: int = 0) -> None:
    """Remove `name` and all below it without following a link (a link is removed, not its target)."""
    if depth > MAX_DEPTH:
        raise WriteRefused(f"{STAGING_DIR} nests deeper than {MAX_DEPTH} levels; remove it")
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise
        os.unlink(name, dir_fd=parent_fd)
        return
    try:
        with os.scandir(fd) as scan:
            found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in scan]
        for child, is_dir in found:
            if is_dir:
                _remove_tree(fd, child, depth + 1)
            else:
                os.unlink(child, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done: the commit and the moves are never cut in half by
    them (only SIGKILL can, and the next render completes that). Main thread only, where signals land."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


# --- the lock ----------------------------------------------------------------------------------------------------------

def _open_output(out_dir: Path) -> int:
    try:
        return os.open(out_dir, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            kind = "a symbolic link" if out_dir.is_symlink() else "not a folder"
            raise WriteRefused(f"refusing to write into {one_line(str(out_dir))}: it is {kind}; "
                               "give a plain folder") from None
        raise


@contextlib.contextmanager
def output_lock(out_dir: Path, timeout: float = LOCK_TIMEOUT_SECONDS, create: bool = True) -> Iterator[_Folder]:
    """Exclusive use of an output folder across processes: flock(2) on the folder's own descriptor (see the
    module docstring). The folder is made if missing, and removed again if this made it and it stays empty."""
    while True:
        created = False
        if create:
            try:
                out_dir.mkdir(parents=True)
                created = True
            except FileExistsError:
                pass
        fd = _open_output(out_dir)
        try:
            _flock(fd, out_dir, timeout)
            here = os.stat(out_dir, follow_symlinks=False)
            mine = os.fstat(fd)
            if (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
                break  # still the folder at that path: not removed or replaced while we waited
        except FileNotFoundError:
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield _Folder(out_dir, fd)
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(out_dir)  # only if nothing is in it
        raise
    finally:
        os.close(fd)  # releases the lock


def _flock(fd: int, out_dir: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise WriteRefused(f"another mpigen render has held {one_line(str(out_dir))} for {timeout:.0f} s; "
                                   "wait for it to finish") from None
            time.sleep(0.05)
        except OSError as exc:
            raise WriteFailed(f"cannot lock {one_line(str(out_dir))}: {exc.strerror}; mpigen locks the output "
                              "folder itself with flock(2), which needs a local file system (not NFS)") from None


# --- reading what is there ---------------------------------------------------------------------------------------------

def _owned(folder: _Folder) -> list[str] | None:
    """The ownership list, every entry checked; None if there is none. Anything else than mpigen's shape refuses."""
    data = folder.read(OWNERSHIP_FILE, limit=MAX_LIST_BYTES)
    if data is None:
        return None
    problem = "it is not JSON"
    try:
        listed = json.loads(data.decode("utf-8"))
        problem = 'it is not {"generator": "mpigen", "files": [<path>, ...]}'
        if not (isinstance(listed, dict) and isinstance(listed.get("files"), list)):
            raise ValueError(problem)
        files = [check_relative(path) for path in listed["files"]]
        if OWNERSHIP_FILE in files or len(set(files)) != len(files):
            raise ValueError(problem)
    except (ValueError, UnicodeDecodeError, WriteRefused) as exc:
        detail = str(exc) if isinstance(exc, WriteRefused) else problem
        raise WriteRefused(f"{folder.show(OWNERSHIP_FILE)} is damaged ({detail}); restore it from git, "
                           "or delete the output folder and render again") from None
    return files


def owned_files(out_dir: Path) -> list[str] | None:
    """The files `.mpigen-owned` in `out_dir` lists, None if it has none; a damaged list refuses."""
    if not out_dir.exists():
        return None
    fd = _open_output(out_dir)
    try:
        return _owned(_Folder(out_dir, fd))
    finally:
        os.close(fd)


def compare_tree(out_dir: Path, files: dict[str, bytes]) -> TreeDiff:
    """What `write_tree` would change, reading only: missing, stale and extra files (the ownership list too).
    A link or folder where a file belongs is stale; links elsewhere are extra. Nothing is followed."""
    for path in files:
        check_relative(path)
    wanted = {**files, OWNERSHIP_FILE: _ownership_bytes(files)}
    diff = TreeDiff()
    if not os.path.lexists(out_dir):
        diff.missing = sorted(wanted)
        return diff
    try:
        fd = _open_output(out_dir)
        try:
            folder = _Folder(out_dir, fd)
            for path, data in sorted(wanted.items()):
                try:
                    found = folder.read(path)
                except WriteRefused:
                    diff.stale.append(path)
                    continue
                if found is None:
                    diff.missing.append(path)
                elif found != data:
                    diff.stale.append(path)
            diff.extra = [path for path in folder.files()
                          if path not in wanted and not path.startswith(f"{STAGING_DIR}/")]
        finally:
            os.close(fd)
    except OSError as exc:
        raise WriteFailed(f"cannot read {one_line(str(out_dir))}: {_reason(exc)}") from None
    return diff


# --- writing -----------------------------------------------------------------------------------------------------------

def _reason(exc: OSError) -> str:
    where = f" ({one_line(str(exc.filename))})" if exc.filename is not None else ""
    return f"{exc.strerror or exc}{where}"


def write_tree(out_dir: Path, files: dict[str, bytes]) -> WriteReport:
    """Make `out_dir` hold exactly `files` (plus the ownership list), as one transaction under the folder's lock.
    Every failure is a WriteError whose message says whether the folder was left as it was."""
    for path in files:
        check_relative(path)
        if path == OWNERSHIP_FILE:
            raise WriteRefused(f"refusing to write '{OWNERSHIP_FILE}' as a chart file: the name is mpigen's own")
    wanted = {**files, OWNERSHIP_FILE: _ownership_bytes(files)}
    state = {"committed": False}
    try:
        with output_lock(out_dir) as folder:
            return _write_locked(folder, files, wanted, state)
    except OSError as exc:
        if state["committed"]:
            raise WriteFailed(f"the render into {one_line(str(out_dir))} was committed but could not be completed: "
                              f"{_reason(exc)}; fix that and run mpigen render again to complete it") from None
        raise WriteFailed(f"cannot write the charts into {one_line(str(out_dir))}: {_reason(exc)}; "
                          "nothing was changed") from None


def _write_locked(folder: _Folder, files: dict[str, bytes], wanted: dict[str, bytes],
                  state: dict[str, bool]) -> WriteReport:
    previous = _owned(folder)
    if previous is None and [name for name in folder.entries() if name != STAGING_DIR]:
        raise WriteRefused(f"{one_line(str(folder.shown))} is not empty and holds no {OWNERSHIP_FILE}: mpigen writes "
                           "only into a folder it created; pick an empty or new folder")
    _recover(folder)
    previous = _owned(folder) or []
    for path in [*wanted, *previous]:
        folder.require_file_or_missing(path)
    report = WriteReport()
    moves: list[str] = []
    os.mkdir(STAGING_DIR, 0o755, dir_fd=folder.fd)
    try:
        for path, data in sorted(wanted.items()):
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
            _remove_tree(folder.fd, STAGING_DIR)
            return report
        plan = {"move": moves, "delete": report.pruned}
        folder.create(PLAN_FILE, json.dumps(plan, indent=2).encode(), root=STAGING_DIR)
        with _signals_deferred():
            with folder.parent(PLAN_FILE, root=STAGING_DIR) as found:
                assert found is not None
                staging_fd, name = found
                os.rename(name, COMMITTED_PLAN, src_dir_fd=staging_fd, dst_dir_fd=staging_fd)  # the commit point
                state["committed"] = True
                os.fsync(staging_fd)
            _apply(folder, plan)
    except BaseException:
        if not state["committed"]:
            with contextlib.suppress(OSError, WriteError):
                _remove_tree(folder.fd, STAGING_DIR)
        raise
    return report


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
        raise WriteRefused(f"{folder.show(STAGING_DIR)} is {_describe(folder.fd, STAGING_DIR)}, not a folder "
                           "mpigen made; remove it (and never commit it)")
    try:
        data = folder.read(COMMITTED_PLAN, root=STAGING_DIR, limit=MAX_LIST_BYTES)
    except WriteRefused as exc:
        raise _refuse_plan(folder, str(exc)) from None
    if data is None:  # never committed: nothing of it reached the charts
        with _signals_deferred():
            _remove_tree(folder.fd, STAGING_DIR)
        return
    plan = _checked_plan(folder, data)
    with _signals_deferred():
        _apply(folder, plan)


def _refuse_plan(folder: _Folder, why: str) -> WriteRefused:
    return WriteRefused(f"{folder.show(f'{STAGING_DIR}/{COMMITTED_PLAN}')} is not a plan mpigen wrote ({why}); "
                        f"nothing was changed. Unless a render into this folder was interrupted here, delete "
                        f"{folder.show(STAGING_DIR)} (it must never be committed)")


def _checked_plan(folder: _Folder, data: bytes) -> dict[str, list[str]]:
    """The plan, if it is exactly what `write_tree` commits and every step stays inside the folder; else refused,
    before anything moves."""
    try:
        plan = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise _refuse_plan(folder, "it is not JSON") from None
    if not (isinstance(plan, dict) and set(plan) == {"move", "delete"}
            and all(isinstance(plan[key], list) for key in plan)):
        raise _refuse_plan(folder, 'it is not {"move": [<path>, ...], "delete": [<path>, ...]}')
    try:
        moves = [check_relative(path) for path in plan["move"]]
        deletes = [check_relative(path) for path in plan["delete"]]
    except WriteRefused as exc:
        raise _refuse_plan(folder, str(exc)) from None
    if len(set(moves)) != len(moves) or len(set(deletes)) != len(deletes) or set(moves) & set(deletes) \
            or OWNERSHIP_FILE in deletes:
        raise _refuse_plan(folder, "it names a path twice, or deletes the ownership list")
    try:
        for path in moves:
            folder.require_file_or_missing(path, root=STAGING_DIR)
            folder.require_file_or_missing(path)
        for path in deletes:
            folder.require_file_or_missing(path)
    except WriteRefused as exc:
        raise _refuse_plan(folder, str(exc)) from None
    return {"move": moves, "delete": deletes}


def _apply(folder: _Folder, plan: dict[str, list[str]]) -> None:
    """Move each staged file into place, delete the pruned ones, drop the staging. Safe to run again after a kill."""
    for path in plan["move"]:
        with folder.parent(path, root=STAGING_DIR) as source:
            if source is None:
                continue
            source_fd, name = source
            try:
                mode = os.stat(name, dir_fd=source_fd, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue  # moved before an interruption
            if not stat.S_ISREG(mode):
                raise WriteRefused(f"refusing to move {folder.show(f'{STAGING_DIR}/{path}')} into place: it is "
                                   f"{_describe(source_fd, name)}; delete {folder.show(STAGING_DIR)}")
            folder.require_file_or_missing(path)
            with folder.parent(path, create=True) as target:
                assert target is not None
                target_fd, _ = target
                os.rename(name, name, src_dir_fd=source_fd, dst_dir_fd=target_fd)
    for path in plan["delete"]:
        _delete(folder, path)
    os.fsync(folder.fd)
    _remove_tree(folder.fd, STAGING_DIR)


def _delete(folder: _Folder, path: str) -> None:
    """Remove the file at `path` if it is one, then each folder above it that this leaves empty."""
    parts = path.split("/")
    opened = [folder.fd]
    try:
        for depth, part in enumerate(parts[:-1]):
            found = _open_dir(opened[-1], part, folder.show("/".join(parts[:depth + 1])), create=False)
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
