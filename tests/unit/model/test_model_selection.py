"""generator/model/selection.py: `--cluster` and `--job` narrow, and a name that is not there is named with the
closest ones."""

from __future__ import annotations

from mpigen.model import EVERYTHING, Selection

CLUSTERS = ("dgx-lab", "dgx-pod", "cpu-lab")
JOBS = (("pi", "dgx-lab"), ("pi", "cpu-lab"), ("resnet50-dgx", "dgx-lab"))


def test_no_filter_holds_everything():
    assert EVERYTHING.everything and EVERYTHING.whole_clusters
    assert EVERYTHING.has_job("any", "where") and EVERYTHING.unknown(CLUSTERS, JOBS) == []


def test_each_filter_narrows():
    both = Selection(frozenset({"dgx-lab"}), frozenset({"pi"}))
    assert both.has_job("pi", "dgx-lab") and not both.has_job("pi", "cpu-lab") and not both.has_job("x", "dgx-lab")
    assert not both.whole_clusters and Selection(frozenset({"dgx-lab"})).whole_clusters


def test_unknown_names_come_with_the_closest_ones():
    assert Selection(frozenset({"dgx-lb"}), frozenset({"resnet50"})).unknown(CLUSTERS, JOBS) == [
        "--cluster dgx-lb: no such cluster; did you mean 'dgx-lab' or 'dgx-pod'?",
        "--job resnet50: no such job; did you mean 'resnet50-dgx'?"]
    assert Selection(frozenset({"cpu-lab"}), frozenset({"resnet50-dgx"})).unknown(CLUSTERS, JOBS) == [
        "--job resnet50-dgx: no such job on the chosen cluster(s); expected one of 'pi'"]
    assert Selection(jobs=frozenset({"zzz"})).unknown(CLUSTERS, JOBS) == [
        "--job zzz: no such job; expected one of 'pi', 'resnet50-dgx'"]
