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

The pieces: paths.py (mpigen's own names, the errors, the path check), folder.py (the folder by descriptor),
lock.py (the lock, and signals held off), ownership.py (`.mpigen-owned`), plan.py (checking a plan found on
disk before it is replayed), compare.py (`render --check`), stamp.py (`render --stamp`: the sealed record that
lets an unchanged render stop early), transaction.py (the transaction itself). target.py is the rule for the files
a user points a command at outside an output folder (`plan --html FILE`, `init DIR`).
"""

from __future__ import annotations

from mpigen.write.compare import TreeDiff, compare_tree
from mpigen.write.lock import output_lock
from mpigen.write.ownership import owned_files
from mpigen.write.paths import (
    CACHE_DIR,
    COMMITTED_PLAN,
    OWNERSHIP_FILE,
    STAGING_DIR,
    WriteError,
    WriteFailed,
    WriteRefused,
    check_relative,
)
from mpigen.write.stamp import Stamp, StampRequest, fresh_stamp
from mpigen.write.transaction import WriteReport, recover, write_tree

__all__ = ["CACHE_DIR", "COMMITTED_PLAN", "OWNERSHIP_FILE", "STAGING_DIR", "Stamp", "StampRequest",
           "TreeDiff", "WriteError", "WriteFailed", "WriteRefused", "WriteReport", "check_relative", "compare_tree",
           "fresh_stamp", "output_lock", "owned_files", "recover", "write_tree"]
