"""The charts' objects as one YAML stream (`mpigen render --manifests`), straight from the built objects, no Helm.

The tests hold `helm template` of every chart with default values to be equal to this.
"""

from __future__ import annotations

from mpigen.objects.chartfiles import template_path
from mpigen.package.chart import Chart
from mpigen.support import yamlio


def manifest_stream(charts: list[Chart]) -> str:
    """Every chart's objects as one multi-document YAML stream, each headed by its source."""
    parts = []
    for chart in charts:
        for manifest in chart.manifests:
            parts.append(f"---\n# Source: {chart.directory}/{template_path(manifest.template)}\n{yamlio.dump(manifest.obj)}")
    return "".join(parts)
