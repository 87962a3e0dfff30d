"""`mpigen verify`'s work below the command line: read each log as the tool the acceptance job runs, and judge it.
A log of the other tool is a miss (another job's log); a log of neither cannot be judged at all (LogError)."""

from __future__ import annotations

from collections.abc import Sequence

from mpigen.model import Job, stated
from mpigen.verify.judgement import Judgement, LogVerdict, Miss, Verdict
from mpigen.verify.logtext import Log, LogError
from mpigen.verify.nccl_judge import judge_nccl_tests
from mpigen.verify.nccl_tests import parse_nccl_tests
from mpigen.verify.perftest import parse_perftest
from mpigen.verify.perftest_judge import judge_perftest

NCCL_TESTS = "nccl-tests"
PERFTEST = "perftest"


def verify_log(job: Job, log: Log) -> LogVerdict:
    """One log of an acceptance job (`job.acceptance` is set), judged."""
    acceptance = stated(job.acceptance)
    if acceptance.collective is not None:
        nccl = parse_nccl_tests(log)
        if nccl.found:
            return LogVerdict(log.name, f"{NCCL_TESTS} {nccl.program or acceptance.collective.collective}",
                              judge_nccl_tests(job, nccl))
        wanted, other = NCCL_TESTS, parse_perftest(log).found and PERFTEST
        what = "no `# nThread` header, `#  Rank` line or table"
    else:
        perftest = parse_perftest(log)
        if perftest.found:
            return LogVerdict(log.name, PERFTEST, judge_perftest(job, perftest))
        wanted, other = PERFTEST, parse_nccl_tests(log).found and NCCL_TESTS
        what = "no `... BW Test` or `... Latency Test` header, nor a table of results"
    if other:
        return LogVerdict(log.name, other, (Judgement("tool", f"{other} output", Miss.OTHER_JOB,
                                                      expected=f"{wanted} output: job {job.name} runs {wanted}"),))
    raise LogError(log.name, f"no {wanted} output ({what}); give the log of job {job.name}'s launcher")


def verify_logs(job: Job, logs: Sequence[Log]) -> Verdict:
    """Every log of one acceptance job judged (LogError for the first that holds nothing to judge)."""
    return Verdict(job.name, job.cluster.name, stated(job.acceptance).what,
                   tuple(verify_log(job, log) for log in logs))
