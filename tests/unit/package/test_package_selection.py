"""generator/package/fleet.py with a selection (`render --manifests --cluster/--job`): the charts asked for, each
byte for byte what the whole fleet's render gives it."""

from __future__ import annotations

from mpigen.model import Selection
from mpigen.package import package_fleet


def _files(charts):
    return {chart.directory: (chart.files, chart.bootstrap) for chart in charts}


def test_a_cluster_is_packaged_whole_and_a_job_alone(example):
    whole = _files(package_fleet(example.fleet))
    cluster = _files(package_fleet(example.fleet, Selection(clusters=frozenset({"dgx-lab"}))))
    assert sorted(cluster) == sorted(d for d in whole if d.startswith("dgx-lab/"))
    assert "dgx-lab/infra" in cluster and all(cluster[d] == whole[d] for d in cluster)
    job = _files(package_fleet(example.fleet, Selection(jobs=frozenset({"pi", "cpu-pi"}))))
    assert sorted(job) == ["cpu-lab/jobs/cpu-pi", "dgx-lab/jobs/pi"] and all(job[d] == whole[d] for d in job)
    both = package_fleet(example.fleet, Selection(frozenset({"cpu-lab"}), frozenset({"pi", "cpu-pi"})))
    assert [chart.directory for chart in both] == ["cpu-lab/jobs/cpu-pi"]
