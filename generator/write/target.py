"""The one rule for every file mpigen writes where a user points it, outside an output folder: `plan --html FILE`,
`plan --svg FILE`, and the folder and files of `init DIR`.

- The path is walked as written, one component at a time from `/` (absolute) or the current folder (relative),
  with O_NOFOLLOW: a symbolic link anywhere in it is refused, never followed. A checkout is untrusted (a pull
  request can commit `site -> /dev`), and `/dev/stdout` or `/proc/self/fd/1` are links too. The current folder
  itself is where the command runs, not part of the path. Every later step works on the descriptor of the
  folder the walk ends in, so nothing swapped in after the walk can redirect the file.
- What stands at the name must be a regular file (replaced whole) or nothing (a new name): a folder, a
  character or block device, a FIFO, a socket or a link is refused. So even root cannot turn /dev/null or
  /dev/full into a page.
- Never one of the inputs, nor inside an input folder: compared by device and inode, on the very folder the
  file goes into, so a link, a hard link or a bind mount does not hide a profile.
- A file is written into a temporary file of its own beside the name (created O_EXCL, never through a link),
  then renamed over it once the name is found again to be what it was (the same regular file, or nothing): a
  reader sees the old file or the new one, and the temporary file goes whatever fails. The old file is replaced,
  never written into, so its other hard links keep their content, and the files of /proc and /sys (regular to
  stat, but no new file can be made beside them) are never touched.
  A folder of files (`init`) is created all or nothing: every file is new (O_EXCL), and a failure removes what
  was made.
- `-` (standard output where a stream is wanted) is the command line's: this module only ever writes files.

Refusals are WriteRefused, errors of the system WriteFailed; either way nothing was changed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from mpigen.support.diagnostics import one_line
from mpigen.write.folder import DIR_FLAGS, reason, write_all
from mpigen.write.lock import signals_deferred
from mpigen.write.paths import WriteError, WriteFailed, WriteRefused, check_relative

_O_PATH = getattr(os, "O_PATH", 0)  # Linux: a folder that may be searched but not listed can still be walked
_SEARCH_FLAGS = (_O_PATH or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_ANCESTORS = 4096  # folders above the target: far more than any path has


class AlreadyExists(WriteRefused):
    """A file that must be new exists already (`init`); `paths` names every one."""

    def __init__(self, message: str, paths: tuple[Path, ...]) -> None:
        super().__init__(message)
        self.paths = paths


def kind_of(mode: int) -> str:
    """What a file of this mode is, for a message."""
    kinds = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISREG, "a file"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def input_relation(target: Path, inputs: Sequence[Path]) -> tuple[Path, str] | None:
    """The input path `target` is, sits inside, or holds (links resolved), and which of the three; None if it is
    apart from them all. What a command writes must never be read back as an input, nor overwrite one."""
    try:
        where = target.resolve()
        resolved = [(path, path.resolve()) for path in inputs]
    except (OSError, RuntimeError):  # a link loop: the walk refuses it where it is
        return None
    for path, given in resolved:
        if where == given:
            return path, "is"
        if where.is_relative_to(given):
            return path, "is inside"
        if given.is_relative_to(where):
            return path, "holds"
    return None


def write_file(path: str | Path, data: bytes, inputs: Sequence[Path] = ()) -> None:
    """Put `data` at `path` by the rule above: a new name or a regular file replaced whole, never through a link,
    never over or inside `inputs`. `path` as the user wrote it (a string keeps a trailing `/`, which names a
    folder). Ctrl-C and SIGTERM wait until it is done (only SIGKILL can leave the temporary file
    `.<name>.*.mpigen-tmp` behind)."""
    shown = one_line(str(path))
    try:
        with signals_deferred(), _parent(path) as (parent_fd, name):
            if name in ("", ".", ".."):
                raise WriteRefused(f"refusing to write {shown}: it is a folder; give the name of a file")
            before = _regular_or_missing(parent_fd, name, shown)
            _refuse_inside(parent_fd, before, inputs, shown)
            _replace(parent_fd, name, data, before, shown)
    except OSError as exc:
        raise WriteFailed(f"cannot write {shown}: {reason(exc)}; nothing was written") from None
    except ValueError as exc:  # a NUL, or a surrogate no file name can hold
        raise WriteRefused(f"refusing to write {shown}: {exc}") from None


def create_files(root: Path, files: dict[str, bytes]) -> list[Path]:
    """Create the folder `root` (and the folders above it) if missing and each of `files` (paths relative to it) in
    it, all or none: each is new, and every folder on the way a plain folder, never reached through a link. If one
    exists already (AlreadyExists) or anything fails, everything this made is removed again."""
    shown = one_line(str(root))
    relatives = sorted(check_relative(relative) for relative in files)
    try:
        with signals_deferred(), _parent(root, make_missing=True) as (parent_fd, name):
            made_root = False
            if name not in ("", ".", ".."):
                try:
                    found = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
                except FileNotFoundError:
                    os.mkdir(name, 0o777, dir_fd=parent_fd)  # the umask decides, as for any folder
                    made_root = True
                else:
                    if not stat.S_ISDIR(found.st_mode):
                        raise WriteRefused(f"refusing to write into {shown}: it is {kind_of(found.st_mode)}; "
                                           "give a new name or a plain folder")
            try:
                root_fd = _open_below(parent_fd, [name or "."], shown=lambda _: shown)
                if root_fd is None:
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(root))
                try:
                    _NewTree(root, root_fd).create(relatives, files)
                finally:
                    os.close(root_fd)
            except BaseException:
                if made_root:
                    with contextlib.suppress(OSError):
                        os.rmdir(name, dir_fd=parent_fd)
                raise
    except OSError as exc:
        raise WriteFailed(f"cannot write into {shown}: {reason(exc)}; nothing was written") from None
    except ValueError as exc:
        raise WriteRefused(f"refusing to write into {shown}: {exc}") from None
    return [root / relative for relative in files]


@dataclass(frozen=True)
class _NewTree:
    """Files created below an open folder, each new; everything made is removed again if one fails."""

    root: Path
    fd: int

    def show(self, parts: list[str]) -> str:
        return one_line(str(self.root.joinpath(*parts)))

    def create(self, relatives: list[str], files: dict[str, bytes]) -> None:
        taken = [self.root / relative for relative in relatives if self._exists(relative)]
        if taken:
            shown = ", ".join(one_line(str(path)) for path in taken)
            raise AlreadyExists(f"{shown} exists already" if len(taken) == 1 else
                                f"{len(taken)} of its files exist already ({shown})", tuple(taken))
        made_folders: list[str] = []
        made_files: list[str] = []
        try:
            for relative in relatives:
                *folders, name = relative.split("/")
                parent_fd = _open_below(self.fd, folders, self.show, made=made_folders)
                assert parent_fd is not None
                try:
                    fd = os.open(name, _NEW_FILE_FLAGS, 0o666, dir_fd=parent_fd)  # the umask decides
                    made_files.append(relative)
                    try:
                        write_all(fd, files[relative])
                    finally:
                        os.close(fd)
                except OSError as exc:  # named in full: the system names only the last component
                    raise OSError(exc.errno, exc.strerror, str(self.root / relative)) from None
                finally:
                    os.close(parent_fd)
        except BaseException:
            self._remove([*made_files, *reversed(made_folders)], set(made_folders))
            raise

    def _exists(self, relative: str) -> bool:
        """Whether anything stands at `relative`; a link, or a file where a folder belongs, refuses."""
        *folders, name = relative.split("/")
        parent_fd = _open_below(self.fd, folders, self.show)
        if parent_fd is None:
            return False
        try:
            os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            return True
        except FileNotFoundError:
            return False
        finally:
            os.close(parent_fd)

    def _remove(self, relatives: list[str], folders: set[str]) -> None:
        """Remove what this made (files first, then folders deepest first), never through a link."""
        for relative in relatives:
            *above, name = relative.split("/")
            with contextlib.suppress(OSError, WriteError):
                parent_fd = _open_below(self.fd, above, self.show)
                if parent_fd is None:
                    continue
                try:
                    if relative in folders:
                        os.rmdir(name, dir_fd=parent_fd)
                    else:
                        os.unlink(name, dir_fd=parent_fd)
                finally:
                    os.close(parent_fd)


def _open_below(fd: int, parts: list[str], shown: Callable[[list[str]], str],
                made: list[str] | None = None) -> int | None:
    """A new descriptor of the folder `parts` below the folder `fd`, walked without following a link; None if a
    folder on the way is missing, unless `made` is given: then each missing one is made and noted there."""
    current = os.dup(fd)
    try:
        for depth, part in enumerate(parts):
            found = _step(current, part, partial(shown, parts[:depth + 1]))
            if found is None and made is not None:
                os.mkdir(part, 0o777, dir_fd=current)
                made.append("/".join(parts[:depth + 1]))
                found = _step(current, part, partial(shown, parts[:depth + 1]))
            if found is None:
                if made is not None:  # made, and gone at once
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown(parts[:depth + 1]))
                os.close(current)
                return None
            os.close(current)
            current = found
    except BaseException:
        os.close(current)
        raise
    return current


@contextlib.contextmanager
def _parent(path: str | Path, make_missing: bool = False) -> Iterator[tuple[int, str]]:
    """The descriptor of the folder that holds `path`, walked as written without following a link, and the last
    component of `path` ('' for `/`; `.` and `..` as written). With `make_missing`, a missing folder on the way is
    made (as `mkdir -p` would) and removed again, deepest first, if the block fails."""
    text = os.fspath(path)
    absolute = text.startswith("/")
    parts = text.split("/")[1:] if absolute else text.split("/")
    *folders, name = parts
    walked = [part for part in folders if part not in ("", ".")]
    made: list[str] = []
    start = _open_start("/" if absolute else ".")
    try:
        current = _open_below(start, walked, lambda upto: one_line(("/" if absolute else "") + "/".join(upto)),
                              made=made if make_missing else None)
        if current is None:
            raise FileNotFoundError(errno.ENOENT, "a folder on the way does not exist", os.path.dirname(text))
        try:
            yield current, name
        finally:
            os.close(current)
    except BaseException:
        for folder in reversed(made):
            *above, last = folder.split("/")
            with contextlib.suppress(OSError, WriteError):
                holder = _open_below(start, above, lambda _: "")
                if holder is not None:
                    try:
                        os.rmdir(last, dir_fd=holder)
                    finally:
                        os.close(holder)
        raise
    finally:
        os.close(start)


def _open_start(where: str) -> int:
    """`/` or the current folder, to read where it may be (so that it can be synced), else only to walk from."""
    try:
        return os.open(where, DIR_FLAGS)
    except PermissionError:
        if not _O_PATH:
            raise
        return os.open(where, _SEARCH_FLAGS)


def _step(fd: int, part: str, shown: Callable[[], str]) -> int | None:
    """The folder `part` of the folder `fd`, never through a link; None if nothing is there. Opened to read where
    it may be, else (a folder one may search but not list) only to walk through."""
    try:
        try:
            found = os.open(part, DIR_FLAGS, dir_fd=fd)
        except PermissionError:
            if not _O_PATH:
                raise
            found = os.open(part, _SEARCH_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            _refuse_non_folder(fd, part, shown)
        raise
    if not stat.S_ISDIR(os.fstat(found).st_mode):  # O_PATH may open a link itself: never walk on through one
        os.close(found)
        _refuse_non_folder(fd, part, shown)
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), shown())
    return found


def _refuse_non_folder(fd: int, part: str, shown: Callable[[], str]) -> None:
    """Refuse a link, or anything else but a folder, where the walk goes through `part`."""
    try:
        mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError:
        return
    if stat.S_ISLNK(mode):
        try:
            target = f" (to {one_line(os.readlink(part, dir_fd=fd))})"
        except OSError:
            target = ""
        raise WriteRefused(f"refusing to write through {shown()}: it is a symbolic link{target}, and mpigen never "
                           "writes through a link; give the path without it (`realpath -m PATH` prints it)") from None
    raise WriteRefused(f"refusing to write through {shown()}: it is {kind_of(mode)}, not a folder") from None


def _regular_or_missing(parent_fd: int, name: str, shown: str) -> os.stat_result | None:
    """What stands at `name`: a regular file (its stat), nothing (None), or a refusal."""
    try:
        found = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(found.st_mode):
        return found
    raise WriteRefused(f"refusing to write {shown}: it is {kind_of(found.st_mode)}; mpigen writes only a plain "
                       "file or a new name (- for standard output)")


def _identity(found: os.stat_result) -> tuple[int, int]:
    return found.st_dev, found.st_ino


def _same(a: os.stat_result | None, b: os.stat_result | None) -> bool:
    """Both nothing, or the same file."""
    return (a is None and b is None) or (a is not None and b is not None and _identity(a) == _identity(b))


def _refuse_inside(parent_fd: int, before: os.stat_result | None, inputs: Sequence[Path], shown: str) -> None:
    """Refuse a file that is an input, or goes into an input folder or a folder below one (by device and inode)."""
    given: dict[tuple[int, int], Path] = {}
    for path in inputs:
        with contextlib.suppress(OSError, ValueError):  # an input that is not there holds nothing
            given.setdefault(_identity(os.stat(path)), path)
    if not given:
        return
    if before is not None and (found := given.get(_identity(before))) is not None:
        raise WriteRefused(f"refusing to write {shown}: it is the input {one_line(str(found))}; write it beside "
                           "the profiles")
    for folder in _ancestors(parent_fd):
        if (found := given.get(folder)) is not None:
            raise WriteRefused(f"refusing to write {shown}: it is inside the input {one_line(str(found))}; "
                               "write it beside the profiles")


def _ancestors(fd: int) -> Iterator[tuple[int, int]]:
    """The device and inode of the folder `fd` and of each folder above it, up to `/`."""
    here = _identity(os.fstat(fd))
    yield here
    current = os.dup(fd)
    try:
        for _ in range(_MAX_ANCESTORS):
            try:
                above = os.open("..", _SEARCH_FLAGS, dir_fd=current)
            except OSError:
                return  # a folder above that cannot be searched: no input was read through it either
            os.close(current)
            current = above
            found = _identity(os.fstat(current))
            if found == here:
                return  # `/`: its own parent
            here = found
            yield here
    finally:
        os.close(current)


def _replace(parent_fd: int, name: str, data: bytes, before: os.stat_result | None, shown: str) -> None:
    """Write `data` into a new temporary file beside `name`, then rename it over `name` if that is still what
    `before` found (the same regular file, or nothing); the temporary file never stays."""
    temporary = f".{name[:32]}.{secrets.token_hex(6)}.mpigen-tmp"
    fd = os.open(temporary, _NEW_FILE_FLAGS, 0o600, dir_fd=parent_fd)
    try:
        try:
            os.fchmod(fd, 0o644)  # whatever the umask: a page anyone may read, as before
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if not _same(_regular_or_missing(parent_fd, name, shown), before):
            raise WriteRefused(f"refusing to write {shown}: it changed while the file was written; run again")
        os.rename(temporary, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=parent_fd)
        raise
    with contextlib.suppress(OSError):  # a folder opened only to walk through cannot be synced; the file was
        os.fsync(parent_fd)
