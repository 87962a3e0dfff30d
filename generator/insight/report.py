"""`mpigen plan` and `mpigen explain` as text for the terminal and as JSON for machines: strings from result
objects, nothing printed here."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from typing import Any

from mpigen.insight.bounds import names_text
from mpigen.insight.device_facts import claims_text
from mpigen.insight.explanation import DEFAULT, PROFILE, RULE, Explanation
from mpigen.insight.plan import NEVER, STARTS, WAITS, FleetPlan, JobPlan, PoolPlan, QueuePlan, amounts_text
from mpigen.support.diagnostics import Location, one_line

PLAN_FORMAT = 2
"""Version of `mpigen plan --output json` and `mpigen explain --output json`: raised when a field changes meaning
or goes away (new fields do not raise it). 2: a long list is cut where 1 listed it whole: explain's `ranks` past
128 ranks (the first and the last 64; `ranks_omitted` counts the rest, `rank_count` all of them, `rank_pattern` is
the rule every rank follows), plan's `waits_for` past eight jobs (`waits_for_omitted` counts the rest)."""


ORIGIN_WORDS = {PROFILE: "from ", DEFAULT: "", RULE: "because "}


def _plain(value: Any) -> Any:
    """Result objects as JSON values: dataclasses as objects, Decimals as numbers, locations as {path, line, column}."""
    if isinstance(value, Location):
        return {"path": value.path, "line": value.line, "column": value.column}
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    return value


def _json(kind: str, body: Any) -> str:
    """Pure ASCII, as check's JSON: a file name's C1 or bidi control (U+009B, U+202E) is written `\\u009b`, never raw
    to a terminal or a log that shows the output."""
    return json.dumps({"format": PLAN_FORMAT, "kind": kind, **body}, indent=2, sort_keys=False) + "\n"


def plan_json(plan: FleetPlan) -> str:
    jobs = plan.jobs
    summary = {"jobs": len(jobs), "starts": sum(j.state == STARTS for j in jobs),
               "waits": sum(j.state == WAITS for j in jobs), "never": sum(j.state == NEVER for j in jobs)}
    return _json("plan", {"summary": summary, "clusters": _plain(plan.clusters)})


def _table(rows: list[list[str]], indent: str) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def _hours(job: JobPlan) -> str:
    if job.gpu_hours is None:
        return "-"
    return f"{'<=' if job.gpu_hours_bound else ''}{_plain(job.gpu_hours)}"


def _pool_lines(pool: PoolPlan) -> list[str]:
    fit = "" if not pool.jobs else " (they fit together)" if pool.all_at_once else " (they do not fit together)"
    lines = [f"  pool {pool.name}: {pool.nodes} x {pool.hardware}"]
    if pool.live_nodes is not None and pool.live_nodes != pool.nodes:
        lines.append(f"    live nodes: {pool.live_nodes} of the {pool.nodes} claimed ({one_line(pool.live_reason)}); "
                     "the plan counts the live ones")
    lines += [f"    each node offers: {amounts_text(pool.per_node)}",
             f"    all its jobs at once ask: {amounts_text(pool.asked_at_once)}{fit}"]
    if not pool.jobs:
        return [*lines, "    no jobs"]
    rows = [["JOB", "WORKERS", "GPUS", "RANKS", "NODES", "STATE", "GPU-HOURS", "PROFILE"]]
    for job in pool.jobs:
        if job.state == NEVER and not job.worker_count:
            rows.append([job.name, "-", "-", "-", "-", job.state, "-", f"{job.location.path}:{job.location.line}"])
            continue
        rows.append([job.name, f"{job.worker_count} x {job.gpus_per_worker} GPU" if job.gpus_per_worker
                     else str(job.worker_count), str(job.gpus), str(job.ranks), str(job.nodes_alone or "-"),
                     job.state, _hours(job), f"{job.location.path}:{job.location.line}"])
    lines += _table(rows, "    ")
    for job in pool.jobs:
        if job.state == WAITS:
            held = f", held by {names_text(job.waits_for, job.waits_for_omitted)}" if job.waits_for else ""
            lines.append(f"    {job.name} waits for {job.reason}{held}")
        elif job.state == NEVER:
            lines.append(f"    {job.location}: {job.name} can never run: {one_line(job.reason)}")
    lines += [f"    {job.name} worker claims: {claims_text(job.devices)}" for job in pool.jobs
              if job.devices is not None and (job.devices.pairs or job.devices.channel)]
    return lines + [f"    {job.name} topology: {job.topology}" for job in pool.jobs if job.topology]


def _queue_lines(queues: tuple[QueuePlan, ...]) -> list[str]:
    rows = [["QUEUE", "POOL", "RESOURCE", "QUOTA", "MAY BORROW", "ASKED", ""]]
    for queue in queues:
        for line in queue.lines:
            rows.append([queue.name, line.pool or "(all)", line.resource, line.quota, line.may_borrow, line.asked,
                         "over" if line.over else ""])
    return ["  queues (asked: all their jobs at once, launchers included):", *_table(rows, "    ")]


def plan_text(plan: FleetPlan) -> str:
    lines: list[str] = []
    for cluster in plan.clusters:
        lines.append(f"cluster {cluster.name} ({cluster.path}): scheduler {cluster.scheduler}, "
                     f"network {cluster.provider}")
        for pool in cluster.pools:
            lines += _pool_lines(pool)
        if cluster.queues:
            lines += _queue_lines(cluster.queues)
        lines += [f"  note: {note}" for note in cluster.notes]
        lines.append("")
    jobs = plan.jobs
    estimated = [job.gpu_hours for job in jobs if job.gpu_hours is not None and not job.gpu_hours_bound]
    bounded = [job.gpu_hours for job in jobs if job.gpu_hours is not None and job.gpu_hours_bound]
    hours = ([f"{_plain(sum(estimated))} GPU-hours estimated ({len(estimated)} job(s))"] if estimated else []) + \
        ([f"at most {_plain(sum(bounded))} bounded by deadlines ({len(bounded)} job(s))"] if bounded else [])
    lines.append(f"{len(jobs)} job(s): {sum(j.state == STARTS for j in jobs)} start at once, "
                 f"{sum(j.state == WAITS for j in jobs)} wait, {sum(j.state == NEVER for j in jobs)} can never run"
                 + (f"; {', '.join(hours)}" if hours else ""))
    return "\n".join(lines) + "\n"


def explain_json(explanation: Explanation) -> str:
    return _json("explain", _plain(explanation))


def explain_text(explanation: Explanation) -> str:
    lines = [f"job {explanation.job} ({explanation.path}): cluster {explanation.cluster}, pool {explanation.pool}, "
             f"namespace {explanation.namespace}"]
    section = None
    for fact in explanation.facts:
        if fact.section != section:
            section = fact.section
            lines += ["", f"{section}:"]
        lines.append(f"  {fact.name} = {one_line(fact.value)}")
        lines.append(f"      {ORIGIN_WORDS[fact.origin_kind]}{one_line(fact.origin)}")
    if explanation.ranks:
        lines += ["", "ranks (rank: worker, local rank, GPU, NIC, rail; the rankfile line where there is one):"]
        previous = -1
        for rank in explanation.ranks:
            if rank.rank != previous + 1:
                lines.append(f"  ... {explanation.ranks_omitted} more ranks ({previous + 1} to {rank.rank - 1}), "
                             f"not listed: {explanation.rank_pattern}")
            previous = rank.rank
            lines.append(f"  {rank.rank}: worker {rank.worker}, local rank {rank.local_rank}, GPU {rank.gpu_text}, "
                         f"NIC {rank.nic_text}, rail {rank.rail or '-'}")
            if rank.rankfile_line:
                lines.append(f"      {rank.rankfile_line}")
        lines.append(f"  GPU and NIC: {explanation.binding_rule}")
    return "\n".join(lines) + "\n"
