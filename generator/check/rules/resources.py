"""Device-plugin resources (GPUs, VFs) as the API server takes them: it refuses the object otherwise."""

from __future__ import annotations

from mpigen.check.rules.goerrors import go_quote
from mpigen.check.rules.pods import is_extended_resource, pod_templates
from mpigen.check.rules.reading import as_dict, path_of
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.vocabulary.kubernetes import whole_quantity

RULE_RESOURCES = "resources"


def check_extended_resources(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """Device-plugin resources (GPUs, VFs) as the API server takes them: whole numbers, with a limit,
    and a request equal to it (they cannot be overcommitted). Needs nothing beyond the documents."""
    findings: list[Finding] = []
    for document in documents:
        for template in pod_templates(document):
            for path, container in [*template.containers, *template.init_containers]:
                resources = as_dict(container.get("resources")) or {}
                limits = as_dict(resources.get("limits")) or {}
                requests = as_dict(resources.get("requests")) or {}
                for section, values in (("limits", limits), ("requests", requests)):
                    for name, value in values.items():
                        if not isinstance(name, str) or not is_extended_resource(name):
                            continue
                        where = path_of((*path, "resources", section, name))
                        if whole_quantity(value) is None:
                            findings.append(finding(document, where, f"{where[1:]}: Invalid value: {go_quote(str(value))}: "
                                                    "must be an integer", RULE_RESOURCES))
                        elif section == "requests" and name not in limits:
                            findings.append(finding(document, where, f"{where[1:]}: Forbidden: Limit must be set for "
                                                    "non overcommitable resources", RULE_RESOURCES))
                        elif section == "requests" and whole_quantity(limits[name]) not in (None, whole_quantity(value)):
                            findings.append(finding(document, where, f"{where[1:]}: Invalid value: {go_quote(str(value))}: "
                                                    f"must be equal to {name} limit of {limits[name]}", RULE_RESOURCES))
    return findings
