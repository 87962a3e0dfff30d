"""The schema stage of `mpigen check`: every document against the schemas of its Kubernetes version (check/schemas.py),
the documents shared between both cores; and which documents the API server would stop at before it evaluates their
CRDs' CEL rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpigen.check.report import CheckReport
from mpigen.check.schema_judge import RULE, stops_crd_rules
from mpigen.check.schemas import SchemaSet, bundled_kube_versions
from mpigen.readback.findings import Finding, RenderedObject
from mpigen.support.diagnostics import Severity
from mpigen.support.parallel import split_map
from mpigen.support.progress import Tally
from mpigen.vocabulary.kubernetes import CRD_KIND

CustomSchemas = Mapping[tuple[str, str], Mapping[str, Any]]
"""The custom resources' schemas by (apiVersion, kind), as the CRD rules read them."""


@dataclass(frozen=True)
class SchemaOptions:
    """What of check's options the schema stage reads."""

    crds: tuple[Path, ...] = ()
    strict: bool = False


def check_schemas(documents: list[tuple[RenderedObject, str]], options: SchemaOptions, report: CheckReport,
                  own: frozenset[str], unselected: tuple[RenderedObject, ...] = (),
                  tally: Tally | None = None) -> CustomSchemas | None:
    """Each document against the schemas of its Kubernetes version, with the --crds and the rendered CRDs (those of
    the unselected charts too: a cluster's infra chart may install the CRD its job charts' objects are of). `own`:
    the charts mpigen compiled, in whose objects a field the server drops is an error (a warning elsewhere).

    A schema set is built only for a version some document needs (the newest when none does, so that the
    --crds are read anyway); problems reading the CRDs are the same for every version, so they are said once,
    by the first set built. Returns the custom resources' schemas (the same in every set), for the CRD rules; None
    where no set was built (no document, no --crds): mpigen's own then."""
    rendered_crds = [(d.source, d.obj) for d in (*(d for d, _ in documents), *unselected) if d.kind == CRD_KIND]
    schema_sets: dict[str, SchemaSet] = {}

    def schemas(version: str) -> SchemaSet:
        if version not in schema_sets:
            schema_set = SchemaSet(version, strict=options.strict)
            problems = schema_set.add_crds(list(options.crds)) + schema_set.add_crd_objects(rendered_crds)
            if not schema_sets:
                for problem in problems:
                    where, _, what = problem.partition(": ")
                    report.findings.append(Finding(where, "", "", what, "crds"))
            schema_sets[version] = schema_set
        return schema_sets[version]

    for version in dict.fromkeys(version for _, version in documents):  # built with each kind's validators here,
        schemas(version).prepare(d for d, wanted in documents if wanted == version)  # before both cores share them

    def check(part: Sequence[tuple[RenderedObject, str]]) -> list[list[Finding]]:
        return [schema_sets[version].check(document, document.chart in own) for document, version in part]

    for findings in split_map(check, documents, tally=tally):
        report.findings += findings
    if options.crds and not schema_sets:  # nothing to validate: the --crds folders are still read and judged
        schemas(bundled_kube_versions()[-1])
    return next(iter(schema_sets.values())).custom_schemas if schema_sets else None


def refused_before_rules(report: CheckReport) -> frozenset[tuple[str, str]]:
    """(source, object) of the documents with a schema error after which the API server evaluates no CEL rule."""
    return frozenset((f.source, f.object) for f in report.findings
                     if f.rule == RULE and f.severity is Severity.ERROR and stops_crd_rules(f.message))
