"""`mpigen verify`: the logs of a fabric acceptance job (nccl-tests, perftest) read as `kubectl logs` gives them and
judged against the floors derived from the hardware (model/floors.py)."""

from __future__ import annotations

from mpigen.verify.judgement import Judgement, LogVerdict, Miss, Verdict
from mpigen.verify.logtext import Log, LogError, read_log
from mpigen.verify.run import verify_log, verify_logs

__all__ = ["Judgement", "Log", "LogError", "LogVerdict", "Miss", "Verdict", "read_log", "verify_log", "verify_logs"]
