"""The stages that share their work between two processes (loading, packaging, check's rendering and schema
validation) give exactly what doing it all in one process gives: the same trees, charts, findings and errors."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO

from mpigen.check import CheckOptions, run_check
from mpigen.commands.pipeline import compile_profiles
from mpigen.load import load_paths
from mpigen.package import output_files
from mpigen.support import parallel
from mpigen.write import write_tree

pytestmark = [pytest.mark.skipif(not parallel.available(), reason="needs Linux, two cores and one thread"),
              pytest.mark.usefixtures("parse_every_time")]  # each way parses every file (conftest.ParseMemo)


def _bench():
    spec = importlib.util.spec_from_file_location("bench", REPO / "scripts" / "bench.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench", module)  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    """`make bench`'s fleet of 120 jobs over 50 clusters."""
    root = tmp_path_factory.mktemp("fleet") / "profiles"
    _bench().make_fleet(root, 120)
    return root


def _both_ways(monkeypatch, run):
    before = parallel.shared[True]
    shared = run()
    assert parallel.shared[True] > before, "the work was not shared: nothing here was compared"
    monkeypatch.setattr(parallel, "available", lambda: False)
    alone = run()
    monkeypatch.undo()
    return shared, alone


def test_loading_a_fleet_with_broken_files_gives_the_same_trees_and_errors(fleet, tmp_path, monkeypatch):
    broken = tmp_path / "profiles"
    shutil.copytree(fleet, broken)
    (broken / "jobs" / "job-99.yaml").write_text("kind: Job\nname: [unclosed\n", encoding="utf-8")  # in the child's half
    (broken / "jobs" / "job-98.yaml").write_bytes(b"kind: Job\nname: \xff\n")
    (broken / "jobs" / "job-0.yaml").write_text("kind: Job\nname: a\nname: b\n", encoding="utf-8")  # in ours
    shared, alone = _both_ways(monkeypatch, lambda: load_paths([broken]))
    assert [d.format() for d in shared.diagnostics] == [d.format() for d in alone.diagnostics]
    assert len(shared.diagnostics) == 3
    assert [(d.path, d.source, d.data, d.lines) for d in shared.documents] == \
        [(d.path, d.source, d.data, d.lines) for d in alone.documents]
    assert [d.data.lc.value("name") for d in shared.documents] == [d.data.lc.value("name") for d in alone.documents]
    assert shared.unreadable == alone.unreadable and shared.fingerprint is None


def test_validating_a_fleet_with_wrong_profiles_gives_the_same_errors(fleet, tmp_path, monkeypatch):
    wrong = tmp_path / "profiles"
    shutil.copytree(fleet, wrong)
    for name, old, new in (("job-0", "workers: 1", "workers: many"), ("job-99", "pool: pool", "pool: nowhere"),
                           ("job-97", "image: example/train:97", "image: \"bad\\u202eimage\"")):
        job = wrong / "jobs" / f"{name}.yaml"
        job.write_text(job.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    shared, alone = _both_ways(monkeypatch, lambda: compile_profiles([wrong]))
    assert [d.format() for d in shared.diagnostics] == [d.format() for d in alone.diagnostics]
    assert {d.location.path.rsplit("/", 1)[-1] for d in shared.diagnostics} >= {"job-0.yaml", "job-99.yaml",
                                                                               "job-97.yaml"}


def test_a_fleet_compiles_to_the_same_charts_and_checks_to_the_same_findings(fleet, tmp_path, monkeypatch):
    shared, alone = _both_ways(monkeypatch, lambda: compile_profiles([fleet]))
    assert shared.ok and shared.fingerprint == alone.fingerprint is not None
    assert output_files(shared.charts) == output_files(alone.charts)
    write_tree(tmp_path / "charts", output_files(shared.charts))
    options = CheckOptions(helm=None, use_helm=False, kube_version=None, crds=(), context=(), strict=False)
    checked, checked_alone = _both_ways(monkeypatch, lambda: run_check([tmp_path / "charts"], options))
    assert checked.findings == checked_alone.findings and len(checked.documents) == len(checked_alone.documents) > 300
