#!/usr/bin/env python3
"""`make bench`: the real `mpigen` command line, timed as whole processes on generated fleets, beside `helm
template` over the same charts in the same run. Prints a table with the goals and asserts nothing (timings are
not tests).

A fleet of N jobs spreads over 50 clusters of mixed hardware, network providers, GitOps tools and gang
schedulers (the shapes of profiles/), 1-4 workers each. For each size it times: `render` into an empty folder,
the same render again and `render --check` (nothing changed; no stamp, so both compile, as CI runs them),
`render --stamp` three times (the first keeps a stamp, the next two stop at it) and `render --check` beside the
stamp, `validate`, `plan --html`, `explain` of one job, `check --no-helm` (mpigen's own renderer),
`--help`, and `helm template`, one process per chart, as a reviewer or Argo CD runs it: every chart up to
--helm-up-to jobs, else --helm-sample charts evenly spaced over the fleet (labelled sampled), compared per chart.
The cold render, `render --check` and `check --no-helm` run with `-v`, and each stage's share of the process's
time is read from the stage lines it prints (what is left is Python's start-up, imports and reporting). Beside
check stands kubeconform's published rate (no registry this project reaches packages it). Peak memory is each
process's maximum resident set. Then, once, four single fleets too big for a quadratic step: `plan` of one job of
5,000 one-node workers on 5,000 nodes, `explain` of one job of 10,000 CPU workers of 640 ranks (6,400,000 ranks),
`plan --html` of 20 pools of 100,000 nodes, and `validate` of 1,000 jobs on one Kueue cluster of 2,000 queues.

    MPIGEN_HELM3=.tools/helm3/helm python scripts/bench.py [--sizes 100,300,1000,3000] [--helm-up-to 1000]
        [--helm-sample 100] [--no-big]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLUSTERS = 50

# The goals of a 1,000-job fleet (issues "Fleet-scale speed" and "Speed at the limit"), by row.
GOALS = {"render, empty output": "<= 2 s", "render --check": "<= 1 s", "render --stamp, nothing changed": "<= 0.3 s",
         "render --check, stamp kept": "<= 0.3 s", "validate": "<= 1 s", "check --no-helm": ">= 5000 docs/s",
         "--help": "<= 0.1 s", "helm template, a process per chart": "render >= 20x faster",
         "peak memory, any command": "<= 300 MB"}

# kubeconform's own published run: no registry this project reaches (PyPI, Debian, npm) packages it, so it is
# shown beside `check` by its figure, not timed here.
KUBECONFORM = ("kubeconform, published", 50_714, 6.71, 4,
               "https://github.com/yannh/kubeconform#readme (Speed comparison with Kubeval: 50,714 resources, "
               "23,380 of them skipped for want of a schema, 6.71 s on a 4-core laptop, -n 8)")

STAGE_LINE = re.compile(r"^mpigen: ([a-z]+): [0-9]+ .* in ([0-9]+\.[0-9]+) s$", re.M)
"""A stage line of `mpigen -v` (generator/commands/verbosity.py): the stage and its seconds."""

# (name suffix, hardware, provider, GitOps tool, scheduler): five shapes, ten clusters of each.
SHAPES = (
    ("sdp", "dgx-1", "sriov-device-plugin", "argocd", "none"),
    ("sno", "dgx-1", "sriov-network-operator", "flux", "kueue"),
    ("rsh", "dgx-1", "rdma-shared", "argocd", "volcano"),
    ("hst", "dgx-1-roce", "host-network", None, "none"),
    ("cpu", "cpu-node", "tcp", "flux", "coscheduling"),
)


def cluster_profile(index: int) -> tuple[str, str, str]:
    """The name, hardware and text of the index-th cluster."""
    suffix, hardware, provider, gitops, scheduler = SHAPES[index % len(SHAPES)]
    name = f"c{index:02d}-{suffix}"
    text = [f"apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: {name}\nkubernetesVersion: \"1.31\"\n",
            "namespaces: [train]\n", f"network:\n  provider: {provider}\n",
            f"nodePools:\n  - name: pool\n    hardware: {hardware}\n    nodes: {16 if provider == 'tcp' else 8}\n"]
    if provider != "tcp":
        text.append("rails:\n")
        for rail in range(4):
            text.append(f"  - name: rail{rail}\n    nic: ib{rail}\n")
            if provider != "host-network":
                text.append(f"    ipam: {{range: 10.{index}.{rail}.0/24}}\n")
    if scheduler != "none":
        text.append(f"scheduling:\n  scheduler: {scheduler}\n")
    if gitops:
        text.append(f"gitops:\n  tool: {gitops}\n  repoURL: https://git.example.com/platform/fleet.git\n")
    return name, hardware, "".join(text)


def make_fleet(root: Path, jobs: int) -> None:
    shutil.copytree(REPO / "profiles" / "hardware", root / "hardware")
    (root / "clusters").mkdir()
    (root / "jobs").mkdir()
    clusters = [cluster_profile(i) for i in range(CLUSTERS)]
    for name, _, text in clusters:
        (root / "clusters" / f"{name}.yaml").write_text(text, encoding="utf-8")
    for i in range(jobs):
        name, hardware, text = clusters[i % CLUSTERS]
        size = f"workers: {1 + i % 4}\n"
        # A third of the jobs on other backends, where the cluster allows them: Volcano's own Job under Volcano,
        # Trainer's TrainJob (with its runtime in the infra chart) without a scheduler or under Kueue.
        if (i // CLUSTERS) % 3 == 1 and "scheduler: volcano" in text:
            size += "backend: volcano-job\n"
        elif (i // CLUSTERS) % 3 == 1 and ("scheduler: kueue" in text or "scheduler:" not in text):
            size += "backend: trainjob\n"
        if hardware == "cpu-node":
            size += 'resources: {cpu: "4", memory: 8Gi}\n'
        elif not name.endswith("hst"):
            size += f"gpusPerWorker: {(1, 2, 4, 8)[(i // CLUSTERS) % 4]}\n"
        (root / "jobs" / f"job-{i}.yaml").write_text(
            f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: job-{i}\ncluster: {name}\npool: pool\n"
            f"image: example/train:{i}\n{size}program: [python, train.py, --seed={i}]\nenv:\n  NCCL_DEBUG: INFO\n",
            encoding="utf-8")


@dataclass
class Run:
    seconds: float
    peak_mb: float
    stdout: str
    stderr: str = ""


@dataclass
class Row:
    name: str
    seconds: float | None
    peak_mb: float | None
    note: str = ""
    shares: list[tuple[str, float]] = field(default_factory=list)
    """Each stage's seconds (`mpigen -v`), the row's command's time apportioned."""


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None, exits: tuple[int, ...] = (0,)) -> Run:
    """One process, timed from start to exit, with its peak resident memory (and its stderr, for the stage lines).
    Any exit but `exits` stops the bench: the time of a process that failed measures nothing."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=stderr, env=env)
        stdout = process.stdout.read().decode() if process.stdout else ""
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        stderr.seek(0)
        said = stderr.read().decode(errors="replace")
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in exits:
        raise SystemExit(f"{' '.join(args)} exited {process.returncode}:\n{said}")
    return Run(seconds, usage.ru_maxrss / 1024, stdout, said)


def staged(name: str, timed: Run, note: str = "") -> Row:
    """A row of a command run with -v: its stages' seconds as its stage lines say them."""
    return Row(name, timed.seconds, timed.peak_mb, note,
               [(stage, float(seconds)) for stage, seconds in STAGE_LINE.findall(timed.stderr)])


def shares_text(row: Row) -> str:
    """Each stage's share of the row's whole process time, and what is left (start-up, imports, reporting)."""
    assert row.seconds
    parts = [f"{stage} {seconds / row.seconds:.0%} ({seconds:.2f} s)" for stage, seconds in row.shares]
    rest = row.seconds - sum(seconds for _, seconds in row.shares)
    return ", ".join([*parts, f"start-up and the rest {rest / row.seconds:.0%} ({rest:.2f} s)"])


def sampled(charts: list[Path], count: int) -> list[Path]:
    """`count` charts evenly spaced over `charts` (all of them where there are no more)."""
    if len(charts) <= count:
        return charts
    return [charts[i * len(charts) // count] for i in range(count)]


def bench_size(jobs: int, helm: str | None, helm_up_to: int, helm_sample: int) -> list[Row]:
    mpigen = [sys.executable, "-m", "mpigen"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        make_fleet(work / "profiles", jobs)
        render = [*mpigen, "render", "profiles", "-o", "charts"]
        cold = run([*render, "-v"], work, env)
        charts = sorted(path.parent for path in (work / "charts").rglob("Chart.yaml"))
        rows.append(staged("render, empty output", cold, f"{len(charts)} charts"))
        for name, args, note in (
                ("render, nothing changed", render, "compiles and compares"),
                ("render --check", [*render, "--check", "-v"], "as CI runs it"),
                ("render --stamp, nothing changed", [*render, "--stamp"], "compiles, then keeps a stamp"),
                ("render --stamp, nothing changed", [*render, "--stamp"], "the stamp holds"),
                ("render --stamp, nothing changed", [*render, "--stamp"], "the stamp holds, again"),
                ("render --check, stamp kept", [*render, "--check"], "")):
            rows.append(staged(name, run(args, work, env), note))
        valid = run([*mpigen, "validate", "profiles"], work, env)
        rows.append(Row("validate", valid.seconds, valid.peak_mb))
        planned = run([*mpigen, "plan", "profiles", "--html", "plan.html"], work, env)
        rows.append(Row("plan --html", planned.seconds, planned.peak_mb,
                        f"{(work / 'plan.html').stat().st_size // 1024} KiB page"))
        explained = run([*mpigen, "explain", "job-0", "-p", "profiles"], work, env)
        rows.append(Row("explain one job", explained.seconds, explained.peak_mb))
        checked = run([*mpigen, "check", "--no-helm", "charts", "-v"], work, env, exits=(0, 1))
        documents = int(m.group(1)) if (m := re.search(r"in (\d+) document", checked.stdout)) else 0
        cores = len(os.sched_getaffinity(0))
        rows.append(staged("check --no-helm", checked, f"{documents} docs, {documents / checked.seconds:.0f} docs/s, "
                           f"{documents / checked.seconds / cores:.0f} per core ({cores} cores)"))
        name, resources, seconds, its_cores, source = KUBECONFORM
        rows.append(Row(name, None, None, f"{resources / seconds:.0f} resources/s, {resources / seconds / its_cores:.0f}"
                        f" per core: {source}"))
        shown = run([*mpigen, "--help"], work, env)
        rows.append(Row("--help", shown.seconds, shown.peak_mb))
        rows.append(Row("peak memory, any command", None, max(row.peak_mb or 0 for row in rows), "mpigen's own"))
        if helm:
            timed = charts if jobs <= helm_up_to else sampled(charts, helm_sample)
            start, peak = time.perf_counter(), 0.0
            for chart in timed:
                peak = max(peak, run([helm, "template", chart.name, str(chart)], work).peak_mb)
            seconds = time.perf_counter() - start
            per_chart, ours = seconds / len(timed), cold.seconds / len(charts)
            which = f"every chart ({len(timed)})" if timed is charts else f"{len(timed)} of {len(charts)} charts, sampled"
            rows.append(Row("helm template, a process per chart", seconds, peak,
                            f"{which}: {per_chart * 1000:.0f} ms a chart, render's cold {ours * 1000:.1f} ms: "
                            f"render is {per_chart / ours:.1f}x faster a chart"))
    return rows


# Four valid fleets sized to find what grows faster than the input (issue "Super-cubic planning", "explain on huge
# jobs", the picture of a big cluster, and validation against many queues): one job of 5,000 one-node workers on a
# 5,000-node pool; one job of 10,000 CPU workers (640 ranks each: 100,000 workers' hostfile is more than etcd stores);
# one cluster of 20 pools of 100,000 nodes; 1,000 jobs on one cluster of 2,000 queues.
BIG_CPU_JOB = ("apiVersion: mpigen/v1alpha1\nkind: Job\nname: wide\ncluster: big\npool: p0\nimage: example/train:1\n"
               "program: [python, train.py]\n")


def big_fleet(root: Path, pools: int, nodes: int, job: str) -> None:
    (root / "clusters").mkdir(parents=True)
    (root / "jobs").mkdir()
    listed = "".join(f"  - name: p{i}\n    hardware: cpu-node\n    nodes: {nodes}\n" for i in range(pools))
    (root / "clusters" / "big.yaml").write_text(
        'apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: big\nkubernetesVersion: "1.32"\nnamespaces: [mpi]\n'
        f"nodePools:\n{listed}", encoding="utf-8")
    (root / "jobs" / "wide.yaml").write_text(BIG_CPU_JOB + job, encoding="utf-8")


def queue_fleet(root: Path, queues: int, jobs: int) -> None:
    """One Kueue cluster of `queues` queues in one cohort, each holding a node of a 4,000-node pool, and `jobs` jobs,
    each naming a queue."""
    (root / "clusters").mkdir(parents=True)
    (root / "jobs").mkdir()
    listed = "".join(f"    - name: q{i}\n      cohort: all\n      nodes: {{cpu: 1}}\n" for i in range(queues))
    (root / "clusters" / "queues.yaml").write_text(
        'apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: queues\nkubernetesVersion: "1.32"\nnamespaces: [mpi]\n'
        "nodePools:\n  - name: cpu\n    hardware: cpu-node\n    nodes: 4000\n    nodeLabels: {example.com/pool: cpu}\n"
        f"scheduling:\n  scheduler: kueue\n  queues:\n{listed}", encoding="utf-8")
    for i in range(jobs):
        (root / "jobs" / f"job-{i}.yaml").write_text(
            f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: job-{i}\ncluster: queues\npool: cpu\nimage: example/train:1\n"
            f'workers: {1 + i % 4}\nresources: {{cpu: "4", memory: 8Gi}}\nprogram: [python, train.py]\n'
            f"scheduling: {{queue: q{i % queues}}}\n", encoding="utf-8")


def bench_big() -> list[Row]:
    mpigen = [sys.executable, "-m", "mpigen"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        big_fleet(work / "wide", 1, 5_000, 'workers: 5000\nslotsPerWorker: 1\nresources: {cpu: "100"}\n')
        planned = run([*mpigen, "plan", "wide"], work, env)
        rows.append(Row("plan, 5,000 workers on 5,000 nodes", planned.seconds, planned.peak_mb))
        big_fleet(work / "huge", 1, 10_000, "workers: 10000\nslotsPerWorker: 640\n")
        explained = run([*mpigen, "explain", "wide", "-p", "huge"], work, env)
        rows.append(Row("explain, 10,000 workers x 640 ranks", explained.seconds, explained.peak_mb,
                        f"{len(explained.stdout) // 1024} KiB printed"))
        big_fleet(work / "pools", 20, 100_000, "workers: 100\n")
        drawn = run([*mpigen, "plan", "pools", "--html", "plan.html"], work, env)
        rows.append(Row("plan --html, 20 pools x 100,000 nodes", drawn.seconds, drawn.peak_mb,
                        f"{(work / 'plan.html').stat().st_size // 1024} KiB page"))
        queue_fleet(work / "queues", 2_000, 1_000)
        validated = run([*mpigen, "validate", "queues"], work, env)
        rows.append(Row("validate, 1,000 jobs on 2,000 queues", validated.seconds, validated.peak_mb))
    return rows


def print_row(jobs: int, row: Row) -> None:
    seconds = f"{row.seconds:8.2f}" if row.seconds is not None else " " * 8
    peak = f"{row.peak_mb:8.0f}" if row.peak_mb is not None else " " * 8
    print(f"{jobs:>5}  {row.name:<40} {seconds} {peak}  {GOALS.get(row.name, ''):<22} {row.note}", flush=True)
    if row.shares:
        print(f"{'':>5}    stages: {shares_text(row)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,300,1000,3000", help="fleet sizes in jobs, comma-separated")
    parser.add_argument("--helm-up-to", type=int, default=1000,
                        help="run `helm template` over every chart for fleets up to this many jobs, over a sample above")
    parser.add_argument("--helm-sample", type=int, default=100,
                        help="how many charts, evenly spaced, `helm template` renders above --helm-up-to")
    parser.add_argument("--no-big", action="store_true", help="leave out the four big single fleets")
    args = parser.parse_args()
    helm = os.environ.get("MPIGEN_HELM3") or shutil.which("helm")
    print(f"{'jobs':>5}  {'command':<40} {'seconds':>8} {'peak MB':>8}  {'goal (1,000 jobs)':<22} note")
    for jobs in (int(size) for size in args.sizes.split(",")):
        for row in bench_size(jobs, helm, args.helm_up_to, args.helm_sample):
            print_row(jobs, row)
    for row in [] if args.no_big else bench_big():
        print_row(1, row)


if __name__ == "__main__":
    main()
