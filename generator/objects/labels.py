"""Standard `app.kubernetes.io/*` labels, exactly as the chart's `_helpers.tpl` writes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mpigen.vocabulary import helm

CHART_VERSION = "0.1.0"


@dataclass(frozen=True)
class ChartRef:
    """Which chart an object belongs to and the Helm release it is rendered as."""

    name: str
    release: str
    version: str = CHART_VERSION


def chart_label(chart: ChartRef) -> str:
    return f"{chart.name}-{chart.version}".replace("+", "_")[:63].rstrip("-")


def standard_labels(chart: ChartRef) -> dict[str, str]:
    return {
        helm.CHART_LABEL: chart_label(chart),
        helm.NAME_LABEL: chart.name,
        helm.INSTANCE_LABEL: chart.release,
        helm.MANAGED_BY_LABEL: helm.MANAGED_BY_HELM,
    }


STANDARD_LABEL_KEYS = frozenset(standard_labels(ChartRef("chart", "release")))


def metadata(name: str, chart: ChartRef, namespace: str | None = None,
             annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = standard_labels(chart)
    if annotations:
        meta["annotations"] = annotations
    return meta
