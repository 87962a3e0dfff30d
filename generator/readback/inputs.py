"""What `mpigen check` lets itself and Helm read: regular files of bounded size, inside the folders the
user named. Pull requests are hostile input: a manifest that is a link to `/dev/zero`, a FIFO that never
ends, a chart file that is a link to the runner's secrets, or a folder link out of the repository must be
a finding, never a hang, a crash or a leak."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpigen.support.yamllimits import MAX_DOCUMENT_BYTES, MAX_NESTING

__all__ = ["MAX_DOCUMENT_BYTES"]  # one object: where check reads it, beside the limits of its own
MAX_MANIFEST_FILE_BYTES = 16 * 1024 * 1024
"""One manifest file or one chart's `helm template` output: several objects, each within its own limit."""
MAX_CHART_FILES = 10_000
MAX_CHART_BYTES = 64 * 1024 * 1024
"""A chart folder Helm may read: far above any real chart (Helm itself refuses a chart archive over 100 MiB
once unpacked), far below what would hang a CI runner."""


class InputError(Exception):
    """A file check will not read; the message says why and what to do."""


def read_bytes(path: Path, limit: int) -> bytes:
    """The file's bytes, if it is a regular file of at most `limit` bytes. Opened without blocking, so a
    FIFO cannot hang the read, and judged by the opened file itself, so a link swapped after the check
    cannot feed a device in."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if path.is_symlink() and not path.exists():
            raise InputError(f"is a link to '{os.readlink(path)}', which does not exist") from exc
        raise InputError(f"cannot read: {exc.strerror or exc}") from exc
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise InputError("is a folder, not a file" if stat.S_ISDIR(info.st_mode) else
                         "is not a regular file (a device, FIFO or socket, or a link to one); check reads only "
                         "plain files")
    with os.fdopen(descriptor, "rb") as handle:
        if info.st_size > limit:
            raise InputError(f"file is {info.st_size} bytes, more than the {limit} check reads")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"file is over {limit} bytes, more than check reads")
    return data


def decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read: byte 0x{data[exc.start]:02x} at offset {exc.start} is not valid UTF-8; "
                         "save the file as UTF-8") from exc
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: Path, limit: int = MAX_MANIFEST_FILE_BYTES) -> str:
    return decode(read_bytes(path, limit))


def json_too_deep(text: str, limit: int = MAX_NESTING) -> int | None:
    """Offset where JSON arrays and objects first nest deeper than `limit`, outside strings: Python's json
    module recurses once per level. One pass; exact for JSON (strings and their escapes are skipped)."""
    depth = 0
    in_string = False
    escaped = False
    for index, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return index
        elif ch in "]}":
            depth -= 1
    return None


def load_json(text: str, limit: int) -> Any:
    """JSON within `limit` levels of nesting; ValueError otherwise."""
    where = json_too_deep(text, limit)
    if where is not None:
        raise ValueError(f"arrays and objects nest more than {limit} deep (at offset {where})")
    return json.loads(text)


def inside(path: Path, root: Path) -> bool:
    """Whether `path`, every link followed, lies within `root` (itself resolved)."""
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):
        return False
    return True


@dataclass(frozen=True)
class Refusal:
    """A file or folder check will not hand on, and why (relative to the folder it was found in)."""

    path: str
    why: str


def chart_refusals(chart: Path) -> list[Refusal]:
    """Everything in a chart folder Helm must not be given: links that leave the chart or name a folder
    (Helm follows both), anything but regular files and folders, and more files or bytes than any chart has.

    Walks without following links, one entry at a time, stopping at the first bound.
    """
    root = chart.resolve()
    refusals: list[Refusal] = []
    count = 0
    total = 0
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            refusals.append(Refusal(Path(folder).relative_to(root).as_posix(), f"cannot list: {exc.strerror}"))
            continue
        for entry in entries:
            count += 1
            relative = Path(entry.path).relative_to(root).as_posix()
            if count > MAX_CHART_FILES:
                return [*refusals, Refusal(".", f"holds more than {MAX_CHART_FILES} files; no chart needs so many")]
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(entry.path)
                if not inside(Path(entry.path), root):
                    refusals.append(Refusal(relative, f"is a link to '{target}', outside the chart; "
                                                      "Helm would read it: copy the file into the chart"))
                    continue
                try:
                    info = os.stat(entry.path)
                except OSError:
                    refusals.append(Refusal(relative, f"is a link to '{target}', which does not exist"))
                    continue
                if stat.S_ISDIR(info.st_mode):
                    refusals.append(Refusal(relative, f"is a link to the folder '{target}'; Helm would follow it "
                                                      "(and loop, if it leads back): make it a folder"))
                    continue
            if stat.S_ISDIR(info.st_mode):
                pending.append(Path(entry.path))
            elif stat.S_ISREG(info.st_mode):
                total += info.st_size
                if total > MAX_CHART_BYTES:
                    return [*refusals, Refusal(".", f"holds more than {MAX_CHART_BYTES} bytes; no chart needs so "
                                                    "much")]
            else:
                refusals.append(Refusal(relative, "is not a regular file (a device, FIFO or socket, or a link to "
                                                  "one); Helm would read it forever or fail"))
    return refusals
