"""Both cores for work made of independent items: the second half of the items in a forked child, the first
half here, the results joined in order, so the answer is the same as doing all of them here.

Only on Linux with two or more cores free to this process and no other thread running (fork copies one thread
only), on Python 3.11 or newer (3.10 pickles a YAML mapping without its slots). The child computes and pickles
its half into a pipe and exits; it never writes a file and dies silently on Ctrl-C or SIGTERM (the parent
reports those). Anything that goes wrong, no child to be had, an exception, a crash or a signal in it, only
means the parent does that half itself: the same results, the same exceptions, just slower.

Given a `tally` (a command showing how far it is), each side works in steps of about a fiftieth of its half and
counts the weight it has done: the child into a word of memory both processes share, the parent in itself, and
the parent alone tells the tally (both counts) after each of its steps and while it waits for the child.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import select
import signal
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from mpigen.support.progress import Tally

Item = TypeVar("Item")
Result = TypeVar("Result")

MINIMUM_WEIGHT = 64
"""Less work than this (in items, or in what `weight` counts) is done here: forking and pickling cost more."""

STEPS = 50
"""Given a tally, each side's items go to `work` in about this many steps, each counted as it is done."""
WAIT_STEP = 0.1
"""Given a tally, how often (seconds) the parent, done with its half, tells the child's count while it waits."""


shared = {True: 0, False: 0}
"""How many splits used the child's half (True) and how many did it here after all (False), in this process."""


def available() -> bool:
    """Linux, two cores, one thread, and a Python whose pickles keep every attribute of a YAML tree (3.11 on)."""
    if sys.platform != "linux" or threading.active_count() != 1 or sys.version_info < (3, 11):
        return False
    return len(os.sched_getaffinity(0)) >= 2


def split_map(work: Callable[[Sequence[Item]], list[Result]], items: Sequence[Item],
              weight: Callable[[Item], int] | None = None, tally: Tally | None = None) -> list[Result]:
    """`work(items)`, with the second half of `items` (by `weight`, else by count) done in a forked child where
    that can help. `tally` hears the weight done of the whole as the items are done (see above)."""
    weights = [weight(item) for item in items] if weight else [1] * len(items)
    total = sum(weights)
    alone = None if tally is None else _Counts(tally, total, None).here
    if total < MINIMUM_WEIGHT or len(items) < 2 or not available():
        return _in_steps(work, items, weights, alone)
    middle, done = 0, 0
    while middle < len(items) - 1 and 2 * (done + weights[middle]) <= total:
        done += weights[middle]
        middle += 1
    middle = max(middle, 1)
    try:
        counts = None if tally is None else _Counts(tally, total, mmap.mmap(-1, 8))
        read_fd, write_fd = os.pipe()
    except OSError:
        return _in_steps(work, items, weights, alone)
    try:
        pid = os.fork()
    except OSError:  # no process to be had (a container's limit, memory): all of it here
        os.close(read_fd)
        os.close(write_fd)
        return _in_steps(work, items, weights, alone)
    if pid == 0:  # the child: never returns
        status = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.close(read_fd)
            counted = counts.in_child if counts is not None else None
            data = pickle.dumps(_in_steps(work, items[middle:], weights[middle:], counted), protocol=pickle.HIGHEST_PROTOCOL)
            with open(write_fd, "wb") as pipe:
                pipe.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(write_fd)
    try:
        first = _in_steps(work, items[:middle], weights[:middle], counts.here if counts is not None else None)
        data = _read_all(read_fd, counts.tell if counts is not None else None)
        _, status = os.waitpid(pid, 0)
        pid = 0
        second: list[Result] | None = None
        if status == 0:
            try:
                second = pickle.loads(data)
            except Exception:  # a child cut short: do its half here
                second = None
        shared[second is not None] += 1
        results = first + (second if second is not None else work(items[middle:]))
        if tally is not None:
            tally(total, total)
        return results
    finally:
        os.close(read_fd)
        if counts is not None:
            counts.close()
        if pid:  # this process is unwinding (an exception, a signal): the child's half is no longer wanted
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


def _in_steps(work: Callable[[Sequence[Item]], list[Result]], items: Sequence[Item], weights: Sequence[int],
              counted: Callable[[int], None] | None) -> list[Result]:
    """`work(items)`: in one go without `counted`, else in about STEPS steps, `counted` told the weight done after
    each. The same results either way: `work` maps items to results one for one."""
    if counted is None:
        return work(items)
    results: list[Result] = []
    size, done = max(1, -(-len(items) // STEPS)), 0
    for start in range(0, len(items), size):
        results += work(items[start:start + size])
        done += sum(weights[start:start + size])
        counted(done)
    return results


def _read_all(fd: int, told: Callable[[], None] | None) -> bytes:
    """Everything the child writes into the pipe, to its end; `told` called every WAIT_STEP seconds meanwhile."""
    if told is None:
        with open(fd, "rb", closefd=False) as pipe:
            return pipe.read()
    told()
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([fd], [], [], WAIT_STEP)
        if not ready:
            told()
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


class _Counts:
    """The weight each side has done, told together to the tally by the parent. The child's count lives in one word
    of anonymous memory both processes share (`memory`: a fork keeps a shared mapping shared); one read half-written
    would only show a wrong number for a moment."""

    def __init__(self, tally: Tally, total: int, memory: mmap.mmap | None) -> None:
        self._tally, self._total, self._memory, self._here = tally, total, memory, 0

    def here(self, done: int) -> None:
        """The parent has done `done` of its items' weight."""
        self._here = done
        self.tell()

    def in_child(self, done: int) -> None:
        """The child has done `done` of its items' weight: set where the parent reads it, nothing printed."""
        if self._memory is not None:
            struct.pack_into("q", self._memory, 0, done)

    def tell(self) -> None:
        child = struct.unpack_from("q", self._memory, 0)[0] if self._memory is not None else 0
        self._tally(self._here + child, self._total)

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
