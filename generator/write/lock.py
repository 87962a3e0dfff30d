"""The lock between renders: flock(2) on the output folder's own directory descriptor.

No lock file anywhere, and every spelling of the folder's path (a different TMPDIR, a relative path, a link to
it) meets the same lock, which the kernel drops when the process ends however it ends. Linux and macOS both
lock directory descriptors opened read-only (BSD flock semantics, one lock per open file). NFS is not
supported: Linux emulates flock there with POSIX locks, which refuse a read-only descriptor; render then stops
with an error saying so. Every check of what the folder holds happens under it. The commit and the moves run
with SIGINT and SIGTERM blocked (signals_deferred).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from mpigen.support.diagnostics import one_line
from mpigen.write.folder import DIR_FLAGS, _Folder
from mpigen.write.paths import WriteFailed, WriteRefused

LOCK_TIMEOUT_SECONDS = 120


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done: the commit and the moves are never cut in half by
    them (only SIGKILL can, and the next render completes that). Main thread only, where signals land."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the mask as it is, changing nothing
    try:
        # A signal that arrived just before is handled as this call returns, with the mask already changed:
        # the `finally` puts the mask back then too.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def open_output(out_dir: Path) -> int:
    try:
        return os.open(out_dir, DIR_FLAGS)
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
        fd = open_output(out_dir)
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
    folder = _Folder(out_dir, fd)
    try:
        yield folder
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(out_dir)  # only if nothing is in it
        raise
    finally:
        folder.close()
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
