"""Replaying a plan found on disk: only one of exactly the shape mpigen writes, every path in it a plain relative
path inside the folder, checked in the staging folder and in the output folder before anything moves. Replaying
such a plan can do nothing a pull request could not do by committing chart files itself."""

from __future__ import annotations

import json

from mpigen.write.folder import _Folder
from mpigen.write.paths import COMMITTED_PLAN, OWNERSHIP_FILE, STAGING_DIR, WriteRefused, check_relative


def refuse_plan(folder: _Folder, why: str) -> WriteRefused:
    return WriteRefused(f"{folder.show(f'{STAGING_DIR}/{COMMITTED_PLAN}')} is not a plan mpigen wrote ({why}); "
                        f"nothing was changed. Unless a render into this folder was interrupted here, delete "
                        f"{folder.show(STAGING_DIR)} (it must never be committed)")


def checked_plan(folder: _Folder, data: bytes) -> dict[str, list[str]]:
    """The plan, if it is exactly what `write_tree` commits and every step stays inside the folder; else refused,
    before anything moves."""
    try:
        plan = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise refuse_plan(folder, "it is not JSON") from None
    if not (isinstance(plan, dict) and set(plan) == {"move", "delete"}
            and all(isinstance(plan[key], list) for key in plan)):
        raise refuse_plan(folder, 'it is not {"move": [<path>, ...], "delete": [<path>, ...]}')
    try:
        moves = [check_relative(path) for path in plan["move"]]
        deletes = [check_relative(path) for path in plan["delete"]]
    except WriteRefused as exc:
        raise refuse_plan(folder, str(exc)) from None
    if len(set(moves)) != len(moves) or len(set(deletes)) != len(deletes) or set(moves) & set(deletes) \
            or OWNERSHIP_FILE in deletes:
        raise refuse_plan(folder, "it names a path twice, or deletes the ownership list")
    try:
        for path in moves:
            folder.require_file_or_missing(path, root=STAGING_DIR)
            folder.require_file_or_missing(path)
        for path in deletes:
            folder.require_file_or_missing(path)
    except WriteRefused as exc:
        raise refuse_plan(folder, str(exc)) from None
    return {"move": moves, "delete": deletes}
