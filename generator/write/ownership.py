"""`.mpigen-owned`: the sorted list of files the last render wrote. A render deletes a file only if that list
names it; a list of any other shape than mpigen's is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mpigen.write.folder import _Folder
from mpigen.write.lock import open_output
from mpigen.write.paths import MAX_LIST_BYTES, OWNERSHIP_FILE, WriteRefused, check_relative


def ownership_bytes(files: dict[str, bytes]) -> bytes:
    return (json.dumps({"generator": "mpigen", "files": sorted(files)}, indent=2) + "\n").encode()


def read_owned(folder: _Folder) -> list[str] | None:
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
    fd = open_output(out_dir)
    folder = _Folder(out_dir, fd)
    try:
        return read_owned(folder)
    finally:
        folder.close()
        os.close(fd)
