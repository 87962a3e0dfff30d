"""A pod's spec as the API server judges it beyond the schemas (which have no port ranges, no env-var-name rule and
no restartPolicy per kind): every container has an image, ports in range with a known protocol, env var names the
server takes in the document's Kubernetes version, mounts of declared volumes at paths of their own; and the pod's
restartPolicy is one its kind's controller can run.

Sources: kubernetes pkg/apis/core/validation/validation.go @ 000f26050b9be6fb3d79fae95e06b47fc96128cd
(validateContainerCommon: `image` Required; validateContainerPorts: containerPort Required and IsValidPortNum,
hostPort IsValidPortNum where set, protocol one of SCTP, TCP, UDP; ValidateEnv and ValidateEnvFrom: IsEnvVarName, or
IsRelaxedEnvVarName under RelaxedEnvironmentVariableValidation; ValidateVolumeMounts: a mount's name `Not found` among
the volumes, its mountPath Required and `must be unique`; validateRestartPolicy), pkg/apis/batch/validation/
validation.go @ 3989b18586203eb366257fa4c8e9c0d605ec41df (validateJobSpec: a Job's pods `OnFailure` or `Never`, and
only `Never` with a podFailurePolicy; a CronJob's jobTemplate likewise) and pkg/apis/apps/validation/validation.go
@ 2dd1588c490775be7cd90d0afc59c6dcef07032a (Deployments, ReplicaSets, StatefulSets and DaemonSets run `Always`;
ReplicationControllers likewise, in core's ValidatePodTemplateSpecForRC). A restartPolicy left out is `Always`
after defaulting, which a Job refuses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mpigen.check.rules.goerrors import field_invalid, field_not_supported, go_json_string, go_quote
from mpigen.check.rules.pods import PodTemplate, is_training_runtime, is_volcano_job, pod_templates, refused_later
from mpigen.check.rules.reading import Path, as_dict, as_int, as_str, path_of
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.vocabulary.server_values import RELAXED_ENV_VAR_NAMES_FROM, env_var_name_problems, inclusive_range_error

RULE_POD_SPEC = "pod-spec"

PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
MAX_PORT = 65535
POD_RESTART_POLICIES = ("Always", "OnFailure", "Never")
JOB_RESTART_POLICIES = ("OnFailure", "Never")
_ALWAYS = "Always"
_REPLICATED_KINDS = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("apps", "DaemonSet"),
                     ("", "ReplicationController")}
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


def relaxed_env_names(version: str) -> bool:
    """Whether the API server of this Kubernetes version takes any printable ASCII env var name but '=' (by default);
    an unknown version ('') is taken to be the newest."""
    match = _VERSION.match(version.strip())
    return match is None or (int(match[1]), int(match[2])) >= RELAXED_ENV_VAR_NAMES_FROM


class _Report:
    """The findings of one pod template, each worded as the API server words it, with what it costs a custom
    resource's pods."""

    def __init__(self, template: PodTemplate) -> None:
        self.document = template.document
        self.after = refused_later(template.document)
        self.findings: list[Finding] = []

    def __call__(self, parts: Path, message: str) -> None:
        self.findings.append(finding(self.document, path_of(parts), message + self.after, RULE_POD_SPEC))


def _field(parts: Path) -> str:
    return path_of(parts)[1:]


def _items(holder: dict[str, Any], key: str, at: Path) -> list[tuple[Path, dict[str, Any]]]:
    items = holder.get(key)
    return [((*at, key, i), item) for i, item in enumerate(items if isinstance(items, list) else [])
            if isinstance(item, dict)]


def _check_ports(container: dict[str, Any], at: Path, report: _Report) -> None:
    for path, port in _items(container, "ports", at):
        container_port, host_port = port.get("containerPort"), as_int(port.get("hostPort"))
        if container_port in (None, 0):
            report((*path, "containerPort"), f"{_field((*path, 'containerPort'))}: Required value")
        elif (number := as_int(container_port)) is not None and not 1 <= number <= MAX_PORT:
            report((*path, "containerPort"), field_invalid(_field((*path, "containerPort")), str(number),
                                                           inclusive_range_error(1, MAX_PORT)))
        if host_port is not None and host_port != 0 and not 1 <= host_port <= MAX_PORT:
            report((*path, "hostPort"), field_invalid(_field((*path, "hostPort")), str(host_port),
                                                      inclusive_range_error(1, MAX_PORT)))
        protocol = as_str(port.get("protocol"))
        if protocol and protocol not in PORT_PROTOCOLS:
            report((*path, "protocol"), field_not_supported(_field((*path, "protocol")), go_json_string(protocol),
                                                            PORT_PROTOCOLS))


def _check_env(container: dict[str, Any], at: Path, relaxed: bool, report: _Report) -> None:
    for path, variable in _items(container, "env", at):
        name = variable.get("name")
        if name == "":
            report((*path, "name"), f"{_field((*path, 'name'))}: Required value")
        elif isinstance(name, str):
            for problem in env_var_name_problems(name, relaxed):
                report((*path, "name"), field_invalid(_field((*path, "name")), go_quote(name), problem) +
                       _rename_hint(relaxed))
    for path, source in _items(container, "envFrom", at):
        prefix = as_str(source.get("prefix")) or ""
        for problem in env_var_name_problems(prefix, relaxed) if prefix else ():
            report((*path, "prefix"), field_invalid(_field((*path, "prefix")), go_quote(prefix), problem))


def _rename_hint(relaxed: bool) -> str:
    return "" if relaxed else (f"; Kubernetes {RELAXED_ENV_VAR_NAMES_FROM[0]}.{RELAXED_ENV_VAR_NAMES_FROM[1]} and "
                               "newer take any printable ASCII name but '=': rename it, or target a newer version")


def _check_mounts(container: dict[str, Any], at: Path, volumes: set[str], report: _Report) -> None:
    mount_paths: set[str] = set()
    for path, mount in _items(container, "volumeMounts", at):
        name, mount_path = as_str(mount.get("name")), as_str(mount.get("mountPath"))
        if name is not None and name not in volumes:
            report((*path, "name"), f"{_field((*path, 'name'))}: Not found: {go_quote(name)}; declare a volume "
                                    f"{name} in the pod's `volumes`, or mount one it declares")
        if mount_path == "":
            report((*path, "mountPath"), f"{_field((*path, 'mountPath'))}: Required value")
        elif mount_path is not None:
            if mount_path in mount_paths:
                report((*path, "mountPath"), field_invalid(_field((*path, "mountPath")), go_quote(mount_path),
                                                           "must be unique"))
            mount_paths.add(mount_path)


def _check_containers(template: PodTemplate, relaxed: bool, report: _Report) -> None:
    volumes = {name for _, volume in _items(template.spec, "volumes", ())
               if isinstance(name := volume.get("name"), str)}
    for path, container in template.every_container:
        image = container.get("image")
        if image is None or image == "":
            report((*path, "image"), f"{_field((*path, 'image'))}: Required value")
        _check_ports(container, path, report)
        _check_env(container, path, relaxed, report)
        _check_mounts(container, path, volumes, report)


def _restart_rule(document: RenderedObject) -> Callable[[PodTemplate, _Report], None] | None:
    """How the pods of this kind must restart, where Kubernetes or the controller that makes them says."""
    kind = (document.api_version.rpartition("/")[0], document.kind)
    if kind in (("batch", "Job"), ("batch", "CronJob")) or is_training_runtime(document):
        return _job_restart  # a TrainingRuntime's replicated jobs are batch/v1 Jobs JobSet creates
    if kind in _REPLICATED_KINDS:
        return _always_restart
    if kind == ("", "Pod") or is_volcano_job(document):
        return _pod_restart  # Volcano creates a task's pods itself
    return None  # mpi-operator sets its pods' restartPolicy from the replica's own (the mpi-operator rule's)


def _job_restart(template: PodTemplate, report: _Report) -> None:
    at = (*template.path, "spec", "restartPolicy")
    policy = template.spec.get("restartPolicy")
    job_spec = _job_spec(template)
    if policy in (None, "", _ALWAYS):
        report(at, f"{_field(at)}: Required value: valid values: \"OnFailure\", \"Never\"; a Job's pods must not "
                   "restart `Always` (the default where none is set): set `restartPolicy: Never` or `OnFailure`")
    elif isinstance(policy, str) and policy not in JOB_RESTART_POLICIES:
        report(at, field_not_supported(_field(at), go_json_string(policy), JOB_RESTART_POLICIES, in_order=True))
    elif policy != "Never" and job_spec is not None and job_spec.get("podFailurePolicy") is not None:
        report(at, field_invalid(_field(at), go_json_string(str(policy)),
                                 'only "Never" is supported when podFailurePolicy is specified'))


def _job_spec(template: PodTemplate) -> dict[str, Any] | None:
    """The Job spec a template is the `template` of."""
    held: Any = template.document.obj
    for part in template.path[:-1]:
        if isinstance(held, dict):
            held = held.get(part)
        elif isinstance(held, list) and isinstance(part, int) and 0 <= part < len(held):
            held = held[part]
        else:
            return None
    return as_dict(held)


def _always_restart(template: PodTemplate, report: _Report) -> None:
    at = (*template.path, "spec", "restartPolicy")
    policy = template.spec.get("restartPolicy")
    if isinstance(policy, str) and policy not in ("", _ALWAYS):
        report(at, field_not_supported(_field(at), go_json_string(policy), (_ALWAYS,)) +
               f"; a {template.document.kind} keeps its pods running: run work that ends as a Job")


def _pod_restart(template: PodTemplate, report: _Report) -> None:
    at = (*template.path, "spec", "restartPolicy")
    policy = template.spec.get("restartPolicy")
    if isinstance(policy, str) and policy and policy not in POD_RESTART_POLICIES:
        report(at, field_not_supported(_field(at), go_json_string(policy), POD_RESTART_POLICIES, in_order=True))


def check_pod_specs(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """Images, ports, env var names (by the Kubernetes version each document is checked against), volume mounts and
    restart policies of every pod template, as the API server judges the pods (custom resources' templates: as it
    judges the pods their controllers make of them)."""
    context = context if context is not None else CheckContext()
    findings: list[Finding] = []
    for document in documents:
        relaxed = relaxed_env_names(context.kube_version_of(document))
        restart = _restart_rule(document)
        for template in pod_templates(document):
            report = _Report(template)
            _check_containers(template, relaxed, report)
            if restart is not None:
                restart(template, report)
            findings += report.findings
    return findings

