"""The stamp: a record, kept in the output folder, that proves the folder is what a render with a given key left.

A render asked to (`render --stamp`) writes `.mpigen-cache/stamp` after its transaction: its key
(generator/commands/freshness.py), the messages it gave, and the inode, size, mtime and ctime of every file and folder it
owns, with each file's digest. The next render with the same key stats those and, if every one is as recorded,
has nothing to compile or write.

The folder is untrusted (a pull request can commit a stamp that names hand-edited charts), so a stamp is
believed only beside its seal, `.mpigen-cache/seal`: the inode and ctime the stamp file itself got when this
machine wrote it. A checkout, a copy or an edit gives the stamp a new inode or ctime, which no one can choose
(the kernel sets ctime), so a stamp that did not come from a render here is ignored, and the render compiles.

A file changed within the clock tick it was stated in keeps its ctime. So the stamp reads the file system's own
clock (the ctime of a file it writes, `.mpigen-cache/clock`) before stating anything, and an entry whose ctime is
not older than that (less RACY_NS, or a whole second where the file system keeps whole seconds) is checked by
content next time (a file against its digest, a folder against its entries), as git does with "racily clean"
index entries. A file changed since the render began (its ctime is no older than the clock read then) is read
back when stamped, through the descriptor it is stated by, and must hold what the render meant. A stamp is
written only where every folder holds exactly what the render owns (a file left beside the charts would be an
`extra:` of `render --check`). The cache folder ignores itself (`.gitignore`: `*`), so it is never committed by
accident, and holds nothing but CACHE_FILES (anything else there is an `extra:` too).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpigen.write.folder import _CREATE_FLAGS, _READ_FLAGS, _Folder, open_dir, read_all, write_all
from mpigen.write.lock import output_lock
from mpigen.write.paths import CACHE_DIR, MAX_LIST_BYTES, STAGING_DIR, WriteError

STAMP_FILE = "stamp"
SEAL_FILE = "seal"
CLOCK_FILE = "clock"
STAGED_CLOCK_FILE = ".mpigen-clock"  # in a render's staging folder, where no chart path can be: clusters are DNS labels
IGNORE_FILE = ".gitignore"
CACHE_FILES = frozenset(name for base in (STAMP_FILE, SEAL_FILE, CLOCK_FILE, IGNORE_FILE) for name in (base, f"{base}.new"))
"""Every name mpigen writes in the cache folder (`.new`: one being replaced)."""
STAMP_FORMAT = 1
RACY_NS = 20_000_000
"""Slack for an entry's ctime against the clock read before stating (both the file system's clock, so any
change after the stat has a ctime at least the clock's): a few kernel ticks."""
COARSE_RACY_NS = 1_000_000_000
"""The same where times come in whole seconds (ext3, HFS+, some network file systems)."""
_IGNORE_ALL = b"# mpigen's cache of the last render, never committed\n*\n"


@dataclass(frozen=True)
class StampRequest:
    """What the stamp of a render records besides the files: its key, its chart count and its messages."""

    key: str
    charts: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Stamp:
    """A stamp found to hold: the render it records left the folder exactly as it is."""

    charts: int
    files: int
    """Chart files, the ownership list not counted (as a render's report counts them)."""
    notes: tuple[str, ...]


def fresh_stamp(out_dir: Path, key: str, refresh: bool = False) -> Stamp | None:
    """The stamp of `out_dir` if its key is `key` and every file and folder it records is as it was; else None
    (the render compiles). With `refresh`, entries it had to check by content are stamped anew (a render may;
    `render --check` writes nothing)."""
    if not out_dir.is_dir() or out_dir.is_symlink():
        return None
    try:
        with output_lock(out_dir, create=False) as folder:
            return _fresh(folder, key, refresh)
    except (OSError, WriteError, ValueError, KeyError, TypeError):
        return None  # anything unexpected: not fresh, and the full render reports what is wrong


def unseal(folder: _Folder) -> None:
    """Make the stamp unbelievable before the folder changes (a render that dies half-way leaves no seal)."""
    cache_fd = _open(folder, CACHE_DIR, create=False)
    if cache_fd is None:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(SEAL_FILE, dir_fd=cache_fd)
    finally:
        os.close(cache_fd)


def read_clock(folder: _Folder, where: str = CACHE_DIR) -> int:
    """The file system's clock now: the ctime of a file written in the folder `where` (the cache folder, made if
    missing, or a render's staging folder, which goes with it). Read before a render compares or writes
    anything, so that every change after has a ctime at least this."""
    dir_fd = _open(folder, where, create=where == CACHE_DIR)
    if dir_fd is None:
        raise FileNotFoundError(where)
    name = CLOCK_FILE if where == CACHE_DIR else STAGED_CLOCK_FILE
    try:
        _replace(dir_fd, name, b"")
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_ctime_ns
    finally:
        os.close(dir_fd)


def record_stamp(folder: _Folder, request: StampRequest, files: dict[str, bytes], since_ns: int) -> None:
    """Stamp the folder as holding exactly `files` (every owned file, the ownership list too), as they are now.
    `since_ns` is the clock read (read_clock) before the render compared or wrote any of them: a file changed
    since then is read back and must hold what the render meant, or there is no stamp."""
    _record(folder, request, {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}, since_ns)


def _record(folder: _Folder, request: StampRequest, digests: dict[str, str], since_ns: int) -> None:
    cache_fd = _open(folder, CACHE_DIR, create=True)
    assert cache_fd is not None
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(SEAL_FILE, dir_fd=cache_fd)
        if folder.read(IGNORE_FILE, root=CACHE_DIR, limit=4096) != _IGNORE_ALL:
            _replace(cache_fd, IGNORE_FILE, _IGNORE_ALL)
        # Every stat after the cache folder exists (making it changes the output folder's mtime) and after this
        # clock, which the stamp keeps: a change after a stat gets a ctime at least this.
        clock_ns = read_clock(folder)
        entries = []
        for path, digest in sorted(digests.items()):
            found = _settled_stat(folder, path, digest, since_ns)
            if found is None:
                return  # changed since the render looked at it: no stamp may vouch for it
            entries.append([path, *found, digest])
        folders = sorted({ancestor for path in digests for ancestor in _ancestors(path)})
        folder_entries = [["", *_folder_stat(os.fstat(folder.fd))],
                          *([path, *_folder_stat(os.stat(path, dir_fd=folder.fd, follow_symlinks=False))]
                            for path in folders)]
        document = {"stamp": STAMP_FORMAT, "key": request.key, "charts": request.charts, "notes": list(request.notes),
                    "clock_ns": clock_ns, "files": entries, "folders": folder_entries}
        if not _folders_hold_only(folder, ["", *folders], document) or not _cache_holds_only_its_own(cache_fd):
            return  # files beside the charts: `render --check` must list them, so no stamp may vouch for this
        _replace(cache_fd, STAMP_FILE, json.dumps(document, separators=(",", ":")).encode())
        info = os.stat(STAMP_FILE, dir_fd=cache_fd, follow_symlinks=False)
        _replace(cache_fd, SEAL_FILE, json.dumps(_seal_of(info)).encode())
    finally:
        os.close(cache_fd)


def _settled_stat(folder: _Folder, path: str, digest: str, since_ns: int) -> list[int] | None:
    """The stat to record for the file at `path`: as it is, if unchanged since `since_ns` (the render compared or
    wrote it after that, so it holds what the render meant); else its stat and bytes read through one descriptor,
    if those bytes are the ones meant (`digest`); None if not, or if it is no regular file."""
    found = os.stat(path, dir_fd=folder.fd, follow_symlinks=False)
    if not stat.S_ISREG(found.st_mode):
        return None
    if not _racy(found.st_ctime_ns, since_ns):
        return _file_stat_of(found)
    located = folder.locate(path)
    if located is None:
        return None
    parent_fd, name = located
    fd = os.open(name, _READ_FLAGS, dir_fd=parent_fd)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or hashlib.sha256(read_all(fd)).hexdigest() != digest:
            return None
        return _file_stat_of(found)
    finally:
        os.close(fd)


def _open(folder: _Folder, where: str, create: bool) -> int | None:
    """The folder `where` of the output folder (its cache or staging), never through a link; None if missing."""
    return open_dir(folder.fd, where, lambda: folder.show(where), create=create)


def _cache_holds_only_its_own(cache_fd: int) -> bool:
    return set(os.listdir(cache_fd)) <= CACHE_FILES


def _fresh(folder: _Folder, key: str, refresh: bool) -> Stamp | None:
    verified = _verify(folder, key)
    if verified is None:
        return None
    stamp, document, racy = verified
    if refresh and racy:  # stamped anew: a file changed since the old stamp's clock is read back (_settled_stat)
        digests = {path: digest for path, *_, digest in document["files"]}
        _record(folder, StampRequest(key, stamp.charts, stamp.notes), digests, int(document["clock_ns"]))
    return stamp


def _verify(folder: _Folder, key: str) -> tuple[Stamp, dict[str, Any], bool] | None:
    """The sealed stamp with this key and its document if every entry holds, and whether some were racy
    (checked by content); None otherwise."""
    if _holds(folder, STAGING_DIR):
        return None  # a render's staging: a committed plan waits there (the next render changes the folder)
    cache_fd = _open(folder, CACHE_DIR, create=False)
    if cache_fd is None:
        return None
    try:
        if not _cache_holds_only_its_own(cache_fd):
            return None
        seal = json.loads(folder.read(SEAL_FILE, root=CACHE_DIR, limit=4096) or b"null")
        fd = os.open(STAMP_FILE, _READ_FLAGS, dir_fd=cache_fd)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or seal != _seal_of(info) or info.st_size > MAX_LIST_BYTES:
                return None
            document: dict[str, Any] = json.loads(read_all(fd))
        finally:
            os.close(fd)
    finally:
        os.close(cache_fd)
    if document.get("stamp") != STAMP_FORMAT or document.get("key") != key:
        return None
    clock_ns = int(document["clock_ns"])
    racy_files: list[tuple[str, str]] = []
    for path, ino, size, mtime, ctime, digest in document["files"]:
        found = os.stat(path, dir_fd=folder.fd, follow_symlinks=False)
        if not stat.S_ISREG(found.st_mode) or _file_stat_of(found) != [ino, size, mtime, ctime]:
            return None
        if _racy(ctime, clock_ns):
            racy_files.append((path, digest))
    racy_folders: list[str] = []
    for path, ino, mtime, ctime in document["folders"]:
        found = os.fstat(folder.fd) if path == "" else os.stat(path, dir_fd=folder.fd, follow_symlinks=False)
        if not stat.S_ISDIR(found.st_mode) or _folder_stat(found) != [ino, mtime, ctime]:
            return None
        if _racy(ctime, clock_ns):
            racy_folders.append(path)
    # Every folder on each path was just found to be the recorded folder (not a link), so the paths above led
    # where they did when stamped. Now the entries a change within their clock tick could hide.
    for path, digest in racy_files:
        data = folder.read(path)
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            return None
    if racy_folders and not _folders_hold_only(folder, racy_folders, document):
        return None
    stamp = Stamp(charts=int(document["charts"]), files=len(document["files"]) - 1,
                  notes=tuple(str(note) for note in document["notes"]))
    return stamp, document, bool(racy_files or racy_folders)


def _holds(folder: _Folder, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _racy(ctime_ns: int, clock_ns: int) -> bool:
    """Whether a change after the entry was stated could have left its ctime as recorded."""
    whole_seconds = ctime_ns % 1_000_000_000 == 0 or clock_ns % 1_000_000_000 == 0
    return ctime_ns >= clock_ns - (COARSE_RACY_NS if whole_seconds else RACY_NS)


def _folders_hold_only(folder: _Folder, racy: list[str], document: dict[str, Any]) -> bool:
    """Each folder in `racy` holds exactly the files and folders the stamp records in it (the output folder
    also its cache folder)."""
    expected: dict[str, set[str]] = {path: set() for path, *_ in document["folders"]}
    expected[""].add(CACHE_DIR)
    for path in [*(entry[0] for entry in document["files"]), *(entry[0] for entry in document["folders"])]:
        if path:
            parent, _, name = path.rpartition("/")
            expected[parent].add(name)
    for path in racy:
        fd = folder.fd if path == "" else _open(folder, path, create=False)
        if fd is None:
            return False
        try:
            if set(os.listdir(fd)) != expected[path]:
                return False
        finally:
            if fd != folder.fd:
                os.close(fd)
    return True


def _ancestors(path: str) -> list[str]:
    """The folders above `path` inside the output folder: `a/b/c` gives `a/b` and `a`."""
    found = []
    while "/" in path:
        path = path.rpartition("/")[0]
        found.append(path)
    return found


def _file_stat_of(found: os.stat_result) -> list[int]:
    return [found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns]


def _folder_stat(found: os.stat_result) -> list[int]:
    return [found.st_ino, found.st_mtime_ns, found.st_ctime_ns]


def _seal_of(info: os.stat_result) -> dict[str, int]:
    return {"dev": info.st_dev, "ino": info.st_ino, "size": info.st_size, "ctime_ns": info.st_ctime_ns}


def _replace(dir_fd: int, name: str, data: bytes) -> None:
    """Write `name` in the folder at `dir_fd` whole, through a fresh file renamed over it (never through a link)."""
    temporary = f"{name}.new"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary, dir_fd=dir_fd)
    fd = os.open(temporary, _CREATE_FLAGS, 0o644, dir_fd=dir_fd)
    try:
        write_all(fd, data)
    finally:
        os.close(fd)
    os.rename(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)

