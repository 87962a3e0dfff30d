"""generator/objects/labels.py and the chart's `_helpers.tpl`: the standard labels, named once by Helm's vocabulary."""

from __future__ import annotations

import re

from mpigen.objects.chartfiles import helpers_tpl
from mpigen.objects.labels import STANDARD_LABEL_KEYS, ChartRef, standard_labels
from mpigen.vocabulary import helm


def test_the_standard_labels_are_helms():
    assert standard_labels(ChartRef("pi", "pi-release")) == {
        "helm.sh/chart": "pi-0.1.0", "app.kubernetes.io/name": "pi", "app.kubernetes.io/instance": "pi-release",
        "app.kubernetes.io/managed-by": "Helm"}
    assert {helm.CHART_LABEL, helm.NAME_LABEL, helm.INSTANCE_LABEL, helm.MANAGED_BY_LABEL} == STANDARD_LABEL_KEYS


def test_the_helpers_template_writes_the_same_labels_as_the_manifests():
    """The chart's `labels` helper (what Helm renders) and `standard_labels` (what mpigen builds and `check` reads
    back) name the same keys, in the same order."""
    text = helpers_tpl(ChartRef("pi", "pi-release"))
    written = re.findall(r"^([a-z0-9./-]+): \{\{", text, flags=re.MULTILINE)
    assert written == list(standard_labels(ChartRef("pi", "pi-release")))
