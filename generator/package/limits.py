"""The limits a chart must keep to be loaded by Helm and stored by a cluster, checked before anything is written."""

from __future__ import annotations

from mpigen.objects import chartfiles
from mpigen.package.chart import Chart
from mpigen.support import yamlio
from mpigen.support.diagnostics import Diagnostic, Location, raises
from mpigen.support.profile_rules import CHART_LIMITS
from mpigen.vocabulary.kubernetes import ETCD_MAX_REQUEST_BYTES, OBJECT_BOUND

HELM_MAX_FILE_BYTES = 5 * 1024 * 1024
"""Helm 3 and 4 refuse to load a chart holding a file larger than this (`chart file "x" is larger than the
maximum file size 5242880`), so such a chart must never be written."""


@raises(CHART_LIMITS)
def oversized_files(charts: list[Chart], paths: dict[str, str]) -> list[Diagnostic]:
    """A chart file Helm would refuse to load, or an object a cluster would refuse to store, as an
    error at the profile it comes from (`paths`: each profile's path as the user gave it, by its `source`).
    Profile strings reach a template once per container and at most twice their length (see `template`),
    so only a profile near its 1 MiB limit, copied into several containers, comes close. The hostfile ConfigMap is
    the exception, a loop that writes a line per worker and per rank: validation bounds its lines (and those of the
    controllers' own hostfiles) from the job's size, `validate.sizing.check_hostfile_size`."""
    found = []
    for chart in charts:
        where = Location(paths.get(chart.source, chart.source))
        for path, text in chart.files:
            if len(text) * 4 <= HELM_MAX_FILE_BYTES:  # a character is at most 4 bytes
                continue
            size = len(text.encode("utf-8"))
            if size > HELM_MAX_FILE_BYTES:
                found.append(Diagnostic(
                    where, f"chart file {chart.directory}/{path} would be {size:,} bytes, over Helm's limit of "
                    f"{HELM_MAX_FILE_BYTES:,} bytes per chart file, so Helm could not load the chart", _SHORTEN))
        if sum(len(text) for path, text in chart.files if path.startswith(chartfiles.TEMPLATES + "/")) * 4 <= OBJECT_BOUND:
            continue  # an object is rendered from its template's text, which is no shorter (hostfiles aside)
        for manifest in chart.manifests:
            size = len(yamlio.dump(manifest.obj).encode("utf-8"))
            if size > OBJECT_BOUND:
                obj = manifest.obj
                found.append(Diagnostic(
                    where, f"{obj['kind']} {obj['metadata']['name']} of chart {chart.directory} would be {size:,} "
                    f"bytes, more than etcd stores in one object by default ({ETCD_MAX_REQUEST_BYTES:,} bytes), so "
                    "applying it would fail with `etcdserver: request is too large`", _SHORTEN))
    return found


_SHORTEN = "shorten the long strings of this profile (env values, program, mpirunArgs)"
