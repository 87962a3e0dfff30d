"""The `mpigen` command (console script and `python -m mpigen`).

Ctrl-C and SIGTERM are taken in hand here, before click, jinja2 or jsonschema is imported: from then on
each ends the command with one line on stderr and exit code 130 (143 for SIGTERM), never a traceback.
The handler raises `Stopped`, so the code under way unwinds as for any error: a render removes its
uncommitted staging, temporary folders go away, child processes are killed. The commit and the moves of
a render defer the signal until they are done (generator/write/lock.py), so the charts are the old ones or
the new ones. Only this module may be imported before the handler is in place: keep it small.
"""

import _signal as signal  # the built-in C module: `signal` itself imports enum, a few ms more without handling
import sys


class Stopped(BaseException):
    """A signal asked the command to stop. Not a KeyboardInterrupt: click would print `Aborted!` for that."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_stopping: list[int] = []


def _stop(signum: int, _frame: object) -> None:
    """Raise `Stopped` once; a second signal during the unwinding is ignored, so the clean-up runs to its end."""
    if _stopping:
        return
    _stopping.append(signum)
    raise Stopped(signum)


def _swallowed(unraisable: "sys.UnraisableHookArgs") -> None:
    """`Stopped` raised inside a finalizer is swallowed by Python with a traceback; say nothing, exit below."""
    if not isinstance(unraisable.exc_value, Stopped):
        sys.__unraisablehook__(unraisable)


def _exit_stopped(signum: int) -> None:
    message = "interrupted" if signum == signal.SIGINT else "terminated"
    try:
        sys.stderr.write(f"error: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    sys.exit(128 + signum)


def run() -> None:
    """Install the signal handling, then import and run the command line."""
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    sys.unraisablehook = _swallowed
    try:
        try:
            from mpigen.commands.cli import main

            main(prog_name="mpigen")
        finally:  # the command is over: a signal from here on changes nothing, and must not become a traceback
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except Stopped as stopped:
        _exit_stopped(stopped.signum)
    except SystemExit:
        if _stopping:  # a signal came while the command was exiting, or its exception was swallowed
            _exit_stopped(_stopping[0])
        raise
    except BaseException:
        # A library swallowed `Stopped` (ruamel.yaml's CommentedMap.get has a bare `except:`, and returns None for a
        # key that is there), so the code went on with a wrong value and failed: the signal is what happened.
        if _stopping:
            _exit_stopped(_stopping[0])
        raise
    if _stopping:
        _exit_stopped(_stopping[0])


if __name__ == "__main__":
    run()
