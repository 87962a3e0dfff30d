#!/usr/bin/env python3
"""Benchmarks for `make bench`: compile and check time of the example fleet and of a large generated
one, beside `helm template` over the same charts. Prints a table; asserts nothing.

    MPIGEN_HELM3=.tools/helm3/helm python scripts/bench.py [--jobs 300]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from generator.check import CheckOptions, run_check
from generator.package import output_files
from generator.pipeline import compile_profiles
from generator.write import write_tree

REPO = Path(__file__).resolve().parent.parent


def timed(func, repeat: int = 3) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def large_fleet(root: Path, jobs: int) -> None:
    shutil.copytree(REPO / "profiles" / "hardware", root / "hardware")
    shutil.copytree(REPO / "profiles" / "clusters", root / "clusters")
    (root / "jobs").mkdir()
    for i in range(jobs):
        gpus = (1, 2, 4, 8)[i % 4]
        # Every other job on dgx-pod, where Kueue admits it through the vision team's queue.
        place = "cluster: dgx-lab\n" if i % 2 == 0 else "cluster: dgx-pod\nnamespace: team-vision\n"
        (root / "jobs" / f"job-{i}.yaml").write_text(
            "apiVersion: mpigen/v1alpha1\nkind: Job\n"
            f"name: job-{i}\n{place}pool: dgx\nimage: example/train:{i}\n"
            f"workers: {1 + i % 4}\ngpusPerWorker: {gpus}\nprogram: [python, train.py, --seed={i}]\n"
            "env:\n  NCCL_DEBUG: INFO\n",
            encoding="utf-8",
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=300)
    args = parser.parse_args()
    rows = []
    example = timed(lambda: compile_profiles([REPO / "profiles"]))
    compiled = compile_profiles([REPO / "profiles"])
    rows.append((f"compile example fleet ({compiled.profile_count} profiles, {len(compiled.charts)} charts)", example, ""))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "profiles"
        large_fleet(root, args.jobs)
        result = compile_profiles([root])
        assert result.ok, [d.format() for d in result.diagnostics[:5]]
        seconds = timed(lambda: compile_profiles([root]))
        rows.append((f"compile {args.jobs} jobs in memory", seconds, f"{args.jobs / seconds:.0f} jobs/s"))
        out = Path(tmp) / "charts"
        files = output_files(result.charts)
        first = timed(lambda: write_tree(out, files), repeat=1)
        again = timed(lambda: write_tree(out, files))
        rows.append((f"write {len(files)} files (first time)", first, ""))
        rows.append((f"write {len(files)} files (unchanged)", again, ""))
        checked = []
        seconds = timed(lambda: checked.append(run_check([out], CheckOptions(use_helm=False))), repeat=1)
        report = checked[-1]
        assert not report.errors, [f.format() for f in report.errors[:5]]
        rows.append((f"check {len(report.documents)} documents (own renderer, schemas, rules)", seconds,
                     f"{len(report.documents) / seconds:.0f} documents/s"))
        helm = os.environ.get("MPIGEN_HELM3") or shutil.which("helm")
        if helm:
            start = time.perf_counter()
            for chart in result.charts:
                subprocess.run([helm, "template", chart.ref.release, str(out / chart.directory)],
                               check=True, capture_output=True)
            seconds = time.perf_counter() - start
            rows.append((f"helm template, all {len(result.charts)} charts, one by one", seconds,
                         f"{len(result.charts) / seconds:.0f} charts/s"))
            checked = []
            seconds = timed(lambda: checked.append(run_check([out], CheckOptions(helm=helm))), repeat=1)
            report = checked[-1]
            rows.append((f"check {len(report.documents)} documents with helm lint + template", seconds,
                         f"{len(report.documents) / seconds:.0f} documents/s"))
    width = max(len(r[0]) for r in rows)
    print(f"{'benchmark':<{width}}  {'seconds':>9}  rate")
    for name, seconds, rate in rows:
        print(f"{name:<{width}}  {seconds:>9.3f}  {rate}")


if __name__ == "__main__":
    main()
