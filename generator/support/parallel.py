"""Both cores for work made of independent items: the second half of the items in a forked child, the first
half here, the results joined in order, so the answer is the same as doing all of them here.

Only on Linux with two or more cores free to this process and no other thread running (fork copies one thread
only), on Python 3.11 or newer (3.10 pickles a YAML mapping without its slots). The child computes and pickles
its half into a pipe and exits; it never writes a file and dies silently on Ctrl-C or SIGTERM (the parent
reports those). Anything that goes wrong, no child to be had, an exception, a crash or a signal in it, only
means the parent does that half itself: the same results, the same exceptions, just slower.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MINIMUM_WEIGHT = 64
"""Less work than this (in items, or in what `weight` counts) is done here: forking and pickling cost more."""


shared = {True: 0, False: 0}
"""How many splits used the child's half (True) and how many did it here after all (False), in this process."""


def available() -> bool:
    """Linux, two cores, one thread, and a Python whose pickles keep every attribute of a YAML tree (3.11 on)."""
    if sys.platform != "linux" or threading.active_count() != 1 or sys.version_info < (3, 11):
        return False
    return len(os.sched_getaffinity(0)) >= 2


def split_map(work: Callable[[Sequence[Item]], list[Result]], items: Sequence[Item],
              weight: Callable[[Item], int] | None = None) -> list[Result]:
    """`work(items)`, with the second half of `items` (by `weight`, else by count) done in a forked child where
    that can help."""
    weights = [weight(item) for item in items] if weight else [1] * len(items)
    total = sum(weights)
    if total < MINIMUM_WEIGHT or len(items) < 2 or not available():
        return work(items)
    middle, done = 0, 0
    while middle < len(items) - 1 and 2 * (done + weights[middle]) <= total:
        done += weights[middle]
        middle += 1
    middle = max(middle, 1)
    try:
        read_fd, write_fd = os.pipe()
    except OSError:
        return work(items)
    try:
        pid = os.fork()
    except OSError:  # no process to be had (a container's limit, memory): all of it here
        os.close(read_fd)
        os.close(write_fd)
        return work(items)
    if pid == 0:  # the child: never returns
        status = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.close(read_fd)
            data = pickle.dumps(work(items[middle:]), protocol=pickle.HIGHEST_PROTOCOL)
            with open(write_fd, "wb") as pipe:
                pipe.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(write_fd)
    try:
        first = work(items[:middle])
        with open(read_fd, "rb", closefd=False) as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        pid = 0
        second: list[Result] | None = None
        if status == 0:
            try:
                second = pickle.loads(data)
            except Exception:  # a child cut short: do its half here
                second = None
        shared[second is not None] += 1
        return first + (second if second is not None else work(items[middle:]))
    finally:
        os.close(read_fd)
        if pid:  # this process is unwinding (an exception, a signal): the child's half is no longer wanted
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
