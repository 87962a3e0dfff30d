"""Whatever a log holds, `mpigen verify` judges it or refuses it with one LogError line; never another exception, and
no report it writes holds a raw control character or fails to parse. Random edits of the real logs
(tests/data/verify/), judged by an acceptance job of their kind: a few examples from a fixed seed in CI,
MPIGEN_FUZZ_EXAMPLES from its seed under `make fuzz`."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

from conftest import RAW_CONTROL, log_text
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mpigen.commands.pipeline import CompileResult
from mpigen.verify import LogError, Verdict, verify_log
from mpigen.verify.logtext import log_of
from mpigen.verify.report import verdict_json, verdict_junit, verdict_text

EXAMPLES = int(os.environ["MPIGEN_FUZZ_EXAMPLES"]) if "MPIGEN_FUZZ_EXAMPLES" in os.environ else 40
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or 20_261_128)
SAMPLES = tuple(log_text(name) for name in ("dranet-h200-all-reduce.log", "dranet-b200-all-gather.log",
                                            "dranet-b200-all-gather-cut.log", "perftest-edr-rail0.log"))
WORDS = ("#", "# nThread 1 nGpus 1 minBytes 8 maxBytes ", "#  Rank ", " Group ", " Pid ", " on ", " device ",
         "[0x1a]", "#       size         count      type   redop    root", " i_min", "# Out of bounds values : ",
         "# Avg bus bandwidth    : ", "nan", "inf", "1e309", "-1", "N/A", "float", "sum", "none", "  ", "\t", "\n",
         "\r\n", "\x1b[2J", "\u202e", "\x00", "RDMA_Write BW Test", "RDMA_Read Latency Test", " Device         : ",
         " Link type       : ", " #bytes     #iterations    BW peak[Gb/sec]    BW average[MiB/sec]",
         " #bytes #iterations    t_min[usec]", "mpigen perftest: rail ", ", rank ", "9" * 30, "0.00", "65536")
TOKENS = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=40).map("".join)
EDITED = st.tuples(st.sampled_from(SAMPLES), st.integers(0, 10_000), st.integers(0, 300), TOKENS).map(
    lambda edit: edit[0][:edit[1] % (len(edit[0]) + 1)] + edit[3] + edit[0][edit[1] % (len(edit[0]) + 1) + edit[2]:])
JOBS = ("accept-h200-all-reduce-pair", "accept-b200-all-gather-pair", "accept-h200-perftest-rail0")


@seed(SEED)
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=st.one_of(EDITED, TOKENS), job=st.sampled_from(JOBS))
def test_any_log_is_judged_or_refused_in_one_line(verify_fleet: CompileResult, text: str, job: str) -> None:
    assert verify_fleet.fleet is not None
    chosen = next(candidate for candidate in verify_fleet.fleet.acceptance if candidate.name == job)
    try:
        judged = verify_log(chosen, log_of("fuzz.log", text.encode("utf-8", "surrogatepass")))
    except LogError as exc:
        assert str(exc).startswith("fuzz.log: ") and "\n" not in str(exc) and not RAW_CONTROL.search(str(exc))
        return
    assert judged.judgements and all(judgement.summary for judgement in judged.judgements)
    verdict = Verdict(chosen.name, chosen.cluster.name, "fuzz", (judged,))
    outputs = (verdict_text(verdict), verdict_json(verdict), verdict_junit(verdict))
    for output in outputs:
        assert not RAW_CONTROL.search(output)
    assert json.loads(outputs[1])["passed"] is verdict.passed
    assert len(ET.fromstring(outputs[2]).findall("testsuite/testcase")) == len(judged.judgements)
