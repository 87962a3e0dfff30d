"""An output folder reached only through file descriptors: each path inside it is walked one folder at a time
with O_NOFOLLOW, so a link anywhere on the way is an error, never a way out of the folder."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from mpigen.support.diagnostics import one_line
from mpigen.write.paths import MAX_DEPTH, STAGING_DIR, WriteRefused

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO must not hang us
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _find_syncfs() -> Callable[[int], int] | None:
    """syncfs(2) from the C library, where there is one (Linux)."""
    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (AttributeError, OSError):
        return None


_syncfs = _find_syncfs()


def describe(parent_fd: int, name: str) -> str:
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
    through a link. `shown` is how messages name it.

    The folders last walked to are kept open, one chain per root (the folder itself, the staging folder), and
    the next path reuses the part they share: files arrive sorted, so thousands of files cost one `open` each
    instead of one per folder above them. A descriptor `locate` returns is valid until the next `locate` under
    the same root or `forget`. `close` (the lock does it) closes the chains."""

    def __init__(self, shown: Path, fd: int) -> None:
        self.shown = shown
        self.fd = fd
        self._chains: dict[str, list[tuple[str, int]]] = {}

    def show(self, relative: str) -> str:
        return one_line(str(self.shown / relative))

    def locate(self, relative: str, create: bool = False, root: str = "") -> tuple[int, str] | None:
        """The descriptor of the folder holding `relative` (under `root`, itself a folder of this one) and the
        last name; None if a folder on the way does not exist and `create` is off. Links refuse."""
        parts = [*([root] if root else []), *relative.split("/")]
        folders = parts[:-1]
        chain = self._chains.setdefault(root, [])
        shared = 0
        while shared < len(chain) and shared < len(folders) and chain[shared][0] == folders[shared]:
            shared += 1
        while len(chain) > shared:
            os.close(chain.pop()[1])
        current = chain[-1][1] if chain else self.fd
        for depth in range(shared, len(folders)):
            found = open_dir(current, folders[depth], partial(self.show, "/".join(parts[:depth + 1])), create)
            if found is None:
                return None
            chain.append((folders[depth], found))
            current = found
        return current, parts[-1]

    def forget(self, root: str | None = None) -> None:
        """Close the folders kept open under `root` (all roots if None): before any of them is removed."""
        for key in [root] if root is not None else list(self._chains):
            for _, fd in reversed(self._chains.pop(key, [])):
                os.close(fd)

    def close(self) -> None:
        self.forget()

    def durable(self) -> None:
        """One barrier for everything written so far on the folder's file system: syncfs(2) where the system
        has it (Linux), standing for one fsync per file at a fraction of the cost; sync(2) where the kernel
        refuses syncfs; elsewhere each file was synced as written, and this syncs the folder itself."""
        if _syncfs is not None:
            if _syncfs(self.fd) == 0:
                return
            code = ctypes.get_errno()
            if code not in (errno.ENOSYS, errno.EPERM, errno.EINVAL):  # EIO: the data did not reach the disk
                raise OSError(code, os.strerror(code), str(self.shown))
            # A kernel or sandbox without syncfs: files were not synced one by one either; sync(2) waits on Linux.
            os.sync()
            return
        os.fsync(self.fd)  # each file synced as written (create); the folder's own entries here

    def kind(self, relative: str, root: str = "") -> str | None:
        """'file', 'missing', or a refusal for anything else at `relative` (a link, a folder, a device)."""
        found = self.locate(relative, root=root)
        if found is None:
            return "missing"
        parent_fd, name = found
        try:
            mode = os.stat(name, dir_fd=parent_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return "missing"
        if stat.S_ISREG(mode):
            return "file"
        return describe(parent_fd, name)

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
        found = self.locate(relative, root=root)
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
            return read_all(fd)
        finally:
            os.close(fd)

    def create(self, relative: str, data: bytes, root: str) -> None:
        """A new file, mode 0644; its folders are made as needed. Durable only after `durable()` (or at once,
        on a system without syncfs)."""
        found = self.locate(relative, create=True, root=root)
        assert found is not None
        parent_fd, name = found
        fd = os.open(name, _CREATE_FLAGS, 0o644, dir_fd=parent_fd)
        try:
            os.fchmod(fd, 0o644)  # whatever the umask
            write_all(fd, data)
            if _syncfs is None:
                os.fsync(fd)
        finally:
            os.close(fd)

    def entries(self) -> list[str]:
        return sorted(os.listdir(self.fd))

    def files(self) -> Iterator[str]:
        """Every non-folder below this one (links too, not followed), as relative paths."""
        yield from _walk(self.fd, "", 0)


def write_all(fd: int, data: bytes) -> None:
    """All of `data`: os.write may write less than it is given."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def open_dir(parent_fd: int, name: str, shown: Callable[[], str], create: bool) -> int | None:
    """The folder `name` in `parent_fd`, made if missing and `create`; None if missing. `shown` names it in
    an error (called only then: naming every folder walked through cost a third of a render's writing)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            return None
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=parent_fd)
        return open_dir(parent_fd, name, shown, create=False)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise WriteRefused(f"refusing to write through {shown()}: it is {describe(parent_fd, name)}, "
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
        sub = os.open(name, DIR_FLAGS, dir_fd=fd)
        try:
            yield from _walk(sub, f"{prefix}{name}/", depth + 1)
        finally:
            os.close(sub)


def remove_tree(parent_fd: int, name: str, depth: int = 0) -> None:
    """Remove `name` and all below it without following a link (a link is removed, not its target)."""
    if depth > MAX_DEPTH:
        raise WriteRefused(f"{STAGING_DIR} nests deeper than {MAX_DEPTH} levels; remove it")
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent_fd)
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
                remove_tree(fd, child, depth + 1)
            else:
                os.unlink(child, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def reason(exc: OSError) -> str:
    """What the system said, and of which file, for a WriteFailed message."""
    where = f" ({one_line(str(exc.filename))})" if exc.filename is not None else ""
    return f"{exc.strerror or exc}{where}"
