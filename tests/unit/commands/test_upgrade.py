"""generator/commands/upgrade.py: which release compiled the charts on disk, and the runs the new charts rename."""

from __future__ import annotations

import pytest

from mpigen.commands.upgrade import CompiledBy, RenamedRun, Upgrade, release_key, upgrade_of
from mpigen.continuity.committed import LEGACY_RELEASE
from mpigen.objects import chartfiles
from mpigen.support import yamlio


def _chart_yaml(release: str | None, run: str | None = None, source: str | None = "profiles/x.yaml") -> bytes:
    annotations = {**({chartfiles.SOURCE: source} if source else {}),
                   **({chartfiles.RELEASE: release} if release else {}), **({chartfiles.MPIJOB: run} if run else {})}
    return yamlio.dump({"apiVersion": "v2", "name": "c", "version": "0.1.0", "annotations": annotations}).encode()


def test_charts_without_a_release_are_the_first_releases_and_an_unchanged_run_is_not_renamed():
    found = {"a/infra/Chart.yaml": _chart_yaml(None), "a/jobs/pi/Chart.yaml": _chart_yaml(None, "pi-1234567")}
    files = {"a/infra/Chart.yaml": _chart_yaml("0.2.0"), "a/jobs/pi/Chart.yaml": _chart_yaml("0.2.0", "pi-1234567")}
    assert upgrade_of(found, files, "0.2.0") == Upgrade(
        "0.2.0", (CompiledBy(LEGACY_RELEASE, False, False, ("a/infra", "a/jobs/pi")),), ())


def test_charts_are_grouped_by_release_in_release_order_and_a_newer_one_is_said_so():
    found = {"a/Chart.yaml": _chart_yaml("0.10.0"), "b/Chart.yaml": _chart_yaml("0.9.1"),
             "c/Chart.yaml": _chart_yaml("0.9.1"), "d/Chart.yaml": _chart_yaml("0.3.0")}
    files = {path: _chart_yaml("0.3.0", source="profiles/y.yaml") for path in found}
    upgrade = upgrade_of(found, files, "0.3.0")
    assert upgrade is not None and upgrade.compiled_by == (CompiledBy("0.9.1", True, True, ("b", "c")),
                                                           CompiledBy("0.10.0", True, True, ("a",)))


def test_a_renamed_run_is_listed_old_to_new_whatever_release_compiled_it():
    found = {"j/Chart.yaml": _chart_yaml("0.1.5", "pi-1111111"), "k/Chart.yaml": _chart_yaml("0.2.0", "bert-2222222")}
    files = {"j/Chart.yaml": _chart_yaml("0.2.0", "pi-3333333"), "k/Chart.yaml": _chart_yaml("0.2.0", "bert-4444444")}
    upgrade = upgrade_of(found, files, "0.2.0")
    assert upgrade is not None and upgrade.compiled_by == (CompiledBy("0.1.5", True, False, ("j",)),)
    assert upgrade.renamed == (RenamedRun("j", "pi-1111111", "pi-3333333"), RenamedRun("k", "bert-2222222", "bert-4444444"))


@pytest.mark.parametrize("data", [b"", b"{{ not: yaml", b"- a list\n", b"\xff\xfe", _chart_yaml("0.1.0", source=None),
                                  b"annotations: [" * 200])
def test_a_chart_yaml_mpigen_did_not_write_or_that_cannot_be_read_is_left_to_the_stale_list(data):
    assert upgrade_of({"c/Chart.yaml": data}, {"c/Chart.yaml": _chart_yaml("0.2.0")}, "0.2.0") is None


def test_charts_of_this_release_or_gone_from_the_output_bring_no_summary():
    found = {"c/Chart.yaml": _chart_yaml("0.2.0", "pi-1111111"), "gone/Chart.yaml": _chart_yaml("0.1.0")}
    assert upgrade_of(found, {"c/Chart.yaml": _chart_yaml("0.2.0", "pi-2222222")}, "0.2.0") is None


def test_release_key_orders_numerically_and_refuses_other_spellings():
    assert release_key("0.10.2") == (0, 10, 2) > release_key("0.9.9")
    assert release_key("0.2.0rc1") is None and release_key("") is None
