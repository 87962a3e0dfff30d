"""Semantic rules of `mpigen check`: what no schema holds, judged over rendered documents.

Every rule is a pure function of documents (and the `CheckContext`) returning findings. None of them
raises on a malformed document: a broken document is the schema check's to report, these rules skip
whatever they cannot read.

- "mpi-operator": mpi-operator's own MPIJob validation, with the operator's wording (see below).
- "network": Multus networks a pod names exist as NetworkAttachmentDefinitions, their CNI config is
  readable, and the pod requests the device-plugin resource each NAD needs.
- "capacity": the extended resources a worker requests fit one node of the pool its chart targets.
- "names": nothing beside an MPIJob takes a name the operator creates for it.
- "pod-security": no workload needs a higher Pod Security level than its namespace enforces.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from generator import names
from generator.check.findings import CheckContext, Document, Finding, finding, json_path
from generator.diagnostics import Severity
from generator.podsecurity import ENFORCE_LABEL, Level, PodSecurity, combine, evaluate
from generator.vocabulary import mpi_operator

RULE_MPI_OPERATOR = "mpi-operator"
RULE_NETWORK = "network"
RULE_CAPACITY = "capacity"
RULE_NAMES = "names"
RULE_RESOURCES = "resources"
RULE_POD_SECURITY = "pod-security"

NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
RESOURCE_NAME_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
NAD_KIND = "NetworkAttachmentDefinition"
# Kinds whose operator renders a NetworkAttachmentDefinition of the same name, and the namespace it goes to
# when spec.networkNamespace is not set ('' = the object's own): sriov-network-operator, NVIDIA network-operator.
OPERATOR_NETWORK_KINDS = {"SriovNetwork": "", "SriovIBNetwork": "", "HostDeviceNetwork": "default",
                          "IPoIBNetwork": "default", "MacvlanNetwork": "default"}

Path = tuple[str | int, ...]

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def path_of(parts: Iterable[str | int]) -> str:
    """`json_path`, with keys such as `nvidia.com/gpu` written `["nvidia.com/gpu"]` instead of split at dots."""
    text = ""
    for part in parts:
        text += f"[{json.dumps(part)}]" if isinstance(part, str) and not _PLAIN_KEY.match(part) else json_path([part])
    return text


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _metadata_name(document: Document) -> str:
    """metadata.name when it is a string ('' otherwise: Document.name would stringify other types)."""
    metadata = _dict(document.obj.get("metadata"))
    return (_str(metadata.get("name")) or "") if metadata else ""


# --- mpi-operator ------------------------------------------------------------------------------------
#
# Reproduces mpi-operator's controller-side validation of a v2beta1 MPIJob, which the operator runs on
# the *defaulted* job and reports only as a Warning event, reason `ValidationError`, message
# `Found validation errors: <field.ErrorList.ToAggregate()>` (the job is accepted by the API server and
# then never runs). Each finding's message is one `field.Error.Error()` of that list, so it can be
# searched in `kubectl describe mpijob` output.
#
# Sources read (via the code search index; the v0.8.2 tag itself, kubeflow/mpi-operator
# caa3c47fc42eb762635f78045ec0fcd1a89eb038, was not in it, so the rules were assembled from):
# - kubeflow/mpi-operator pkg/apis/kubeflow/validation/validation.go @ e229bd8b9c91c18a1f033dfefd48e6ce0fe1112f
#   (ValidateMPIJob, validateMPIJobName, validateMPIJobSpec, validateRunPolicy, validate*ReplicaSpec:
#   every detail text used here);
# - its v0.6+ form as kept by the fork him-cw/mpi-operator, same path @ 1048cf9093fc41e0770aaeb19206527b1ac8b9bb
#   (IsDNS1035Label and "will not able to create pod and service with invalid DNS label %q: %s", from
#   kubeflow/mpi-operator#517; MPICH in validMPIImplementations; runPolicy.managedBy NotSupported);
# - kubeflow/mpi-operator pkg/apis/kubeflow/validation/validation_test.go @ 67782e312cea213996797d5c88b48b295bcb1ad0
#   (error types, fields and their order, incl. managedBy and MPICH);
# - kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/default.go @ 0b32af39c362408a3c64003419ed3e2271d1eb77
#   (defaults applied before validation: Launcher replicas 1 / restartPolicy OnFailure, Worker replicas 0 /
#   restartPolicy Never, cleanPodPolicy None, slotsPerWorker 1, sshAuthMountPath /root/.ssh, OpenMPI) and
#   pkg/controller/mpi_job_controller.go @ 012dae5667cd8463c5a761b76cb5123e38d04046 (syncHandler: Default,
#   then ValidateMPIJob, then the ValidationError event);
# - kubernetes/apimachinery pkg/util/validation/field/errors.go @ 5db56492d70cf19e5eee3f0b16130d74adf40a8f
#   (Error() = "<field>: <ErrorBody>"; ErrorBody: "Required value" | "Invalid value: <v>" |
#   "Unsupported value: <v>", then ": <detail>"; ints print as %v, Go strings as %q, named string types
#   such as RestartPolicy via json.Marshal; NotSupported detail "supported values: " + quoted, sorted list);
# - kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go
#   @ 008b3652959ca58af8be3fb5b6ecfe9ae7638282 (IsDNS1035Label, MaxLenError, RegexError) and
#   .../pkg/api/validation/generic.go @ 1a76ea4412510144fe75a564687704dd83c4792d
#   (ValidateNonnegativeField: "must be greater than or equal to 0").
# Zero Worker replicas with runLauncherAsWorker are still rejected in v0.8 (the fix, kubeflow/mpi-operator#833,
# was unmerged at the v0.8.2 snapshot). The operator does not validate launcherCreationPolicy (any value but
# AtStartup waits for the workers); mpigen reports an unknown one itself, like slotsPerWorker 0.


_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_ERR = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_NONNEGATIVE = "must be greater than or equal to 0"


def go_quote(text: str) -> str:
    """Go's strconv.Quote / %q of a string."""
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}
    out = []
    for char in text:
        code = ord(char)
        if char in escapes:
            out.append(escapes[char])
        elif char.isprintable():
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def go_json_string(text: str) -> str:
    """Go's json.Marshal of a string (HTML-safe escaping), how a named string type prints as a bad value."""
    escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
    out = []
    for char in text:
        code = ord(char)
        if char in escapes:
            out.append(escapes[char])
        elif code < 0x20 or char in "<>&" or code in (0x2028, 0x2029):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def field_required(field: str, detail: str) -> str:
    return f"{field}: Required value: {detail}"


def field_invalid(field: str, shown_value: str, detail: str) -> str:
    return f"{field}: Invalid value: {shown_value}: {detail}"


def field_not_supported(field: str, shown_value: str, valid: Iterable[str]) -> str:
    supported = ", ".join(go_quote(v) for v in sorted(valid))
    return f"{field}: Unsupported value: {shown_value}: supported values: {supported}"


def dns1035_label_problems(value: str) -> list[str]:
    """k8s.io/apimachinery IsDNS1035Label, message for message."""
    problems = []
    if len(value) > names.DNS1035_MAX:
        problems.append(f"must be no more than {names.DNS1035_MAX} characters")
    if not names.DNS1035_LABEL.match(value):
        problems.append(f"{_DNS1035_ERR} (e.g. 'my-name',  or 'abc-123', regex used for validation is '{_DNS1035_FMT}')")
    return problems


def check_mpijob(document: Document) -> list[Finding]:
    """mpi-operator v0.8's ValidateMPIJob over the defaulted MPIJob, plus mpigen's own two MPIJob rules."""
    if document.kind != mpi_operator.KIND or document.api_version != mpi_operator.API_VERSION:
        return []
    findings: list[Finding] = []

    def report(parts: Path, message: str, severity: Severity = Severity.ERROR) -> None:
        findings.append(finding(document, path_of(parts), message, RULE_MPI_OPERATOR, severity))

    spec = document.obj.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        return []
    replica_specs = spec.get("mpiReplicaSpecs")
    readable_specs = replica_specs if isinstance(replica_specs, dict) else {}

    # validateMPIJobName: the last worker's hostname `<name>-worker-<replicas-1>` must be a DNS-1035 label.
    name = _metadata_name(document)
    if name:
        replicas = 1
        worker = _dict(readable_specs.get(mpi_operator.WORKER))
        if worker is not None:
            count = _int(worker.get("replicas"))
            if count is not None and count > 0:
                replicas = count
        hostname = names.worker_name(name, replicas - 1)
        problems = dns1035_label_problems(hostname)
        if problems:
            report(("metadata", "name"), field_invalid(
                "metadata.name", go_quote(name),
                f"will not able to create pod and service with invalid DNS label {go_quote(hostname)}: "
                + ", ".join(problems)))

    # validateMPIReplicaSpecs
    if replica_specs is None:
        report(("spec", "mpiReplicaSpecs"), field_required("spec.mpiReplicaSpecs", "must have replica specs"))
    elif isinstance(replica_specs, dict):
        for role in (mpi_operator.LAUNCHER, mpi_operator.WORKER):
            _check_replica_spec(replica_specs, role, report)

    # validateMPIJobSpec. slotsPerWorker, runPolicy.cleanPodPolicy and sshAuthMountPath are defaulted before
    # validation, so their "Required value" errors cannot happen to a job that reached the operator.
    slots = spec.get("slotsPerWorker")
    slots = 1 if slots is None else _int(slots)
    if slots is not None and slots < 0:
        report(("spec", "slotsPerWorker"), field_invalid("spec.slotsPerWorker", str(slots), _NONNEGATIVE))
    elif slots == 0:
        report(("spec", "slotsPerWorker"),
               "slotsPerWorker 0 passes mpi-operator's validation, but every worker then offers 0 slots in the "
               "hostfile, so mpirun starts no process on the workers; set it to the processes per worker "
               "(usually its GPU count)", Severity.WARNING)

    run_policy = spec.get("runPolicy")
    run_policy = {} if run_policy is None else _dict(run_policy)
    if run_policy is not None:
        _check_run_policy(run_policy, report)

    implementation = spec.get("mpiImplementation")
    implementation = mpi_operator.DEFAULT_MPI_IMPLEMENTATION if implementation in (None, "") else _str(implementation)
    if implementation is not None and implementation not in mpi_operator.MPI_IMPLEMENTATIONS:
        report(("spec", "mpiImplementation"), field_not_supported(
            "spec.mpiImplementation", go_json_string(implementation), mpi_operator.MPI_IMPLEMENTATIONS))

    # launcherCreationPolicy is not validated by the operator (any value but "AtStartup" acts as
    # "WaitForWorkersReady"); mpigen's own MPIJob schema holds it to its two values instead.
    return findings


def _check_replica_spec(replica_specs: dict[str, Any], role: str, report: Callable[..., None]) -> None:
    field = f"spec.mpiReplicaSpecs[{role}]"
    base: Path = ("spec", "mpiReplicaSpecs", role)
    spec = replica_specs.get(role)
    if spec is None:
        if role == mpi_operator.LAUNCHER:
            report(base, field_required(field, f"must have {role} replica spec"))
        return
    if not isinstance(spec, dict):
        return
    default_restart, default_replicas = mpi_operator.DEFAULT_RESTART_POLICY[role], mpi_operator.DEFAULT_REPLICAS[role]
    replicas = spec.get("replicas")
    replicas = default_replicas if replicas is None else _int(replicas)
    restart = spec.get("restartPolicy")
    restart = default_restart if restart in (None, "") else _str(restart)
    if restart is not None and restart not in mpi_operator.RESTART_POLICIES:
        report((*base, "restartPolicy"), field_not_supported(
            f"{field}.restartPolicy", go_json_string(restart), mpi_operator.RESTART_POLICIES))
    containers = _containers_of_template(spec.get("template"))
    if containers is not None and len(containers) == 0:
        report((*base, "template", "spec", "containers"),
               field_required(f"{field}.template.spec.containers", "must define at least one container"))
    if replicas is None:
        return
    if role == mpi_operator.LAUNCHER and replicas != 1:
        report((*base, "replicas"), field_invalid(f"{field}.replicas", str(replicas), "must be 1"))
    if role == mpi_operator.WORKER and replicas <= 0:
        report((*base, "replicas"), field_invalid(f"{field}.replicas", str(replicas),
                                                  "must be greater than or equal to 1"))


def _containers_of_template(template: Any) -> list[Any] | None:
    """The template's containers; [] when absent, None when something on the way cannot be read."""
    if template is None:
        return []
    if not isinstance(template, dict):
        return None
    pod_spec = template.get("spec")
    if pod_spec is None:
        return []
    if not isinstance(pod_spec, dict):
        return None
    containers = pod_spec.get("containers")
    if containers is None:
        return []
    return containers if isinstance(containers, list) else None


def _check_run_policy(policy: dict[str, Any], report: Callable[..., None]) -> None:
    clean = policy.get("cleanPodPolicy")
    clean = mpi_operator.DEFAULT_CLEAN_POD_POLICY if clean is None else _str(clean)
    if clean is not None and clean not in mpi_operator.CLEAN_POD_POLICIES:
        report(("spec", "runPolicy", "cleanPodPolicy"), field_not_supported(
            "spec.runPolicy.cleanPodPolicy", go_json_string(clean), mpi_operator.CLEAN_POD_POLICIES))
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        value = _int(policy.get(key))
        if value is not None and value < 0:
            report(("spec", "runPolicy", key), field_invalid(f"spec.runPolicy.{key}", str(value), _NONNEGATIVE))
    managed_by = _str(policy.get("managedBy"))
    if managed_by is not None and managed_by not in mpi_operator.MANAGED_BY:
        report(("spec", "runPolicy", "managedBy"), field_not_supported(
            "spec.runPolicy.managedBy", go_quote(managed_by), mpi_operator.MANAGED_BY))


# --- pod templates -----------------------------------------------------------------------------------

_TEMPLATE_PATHS: dict[str, Path] = {
    "Pod": (),
    "PodTemplate": ("template",),
    "Job": ("spec", "template"),
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


@dataclass(frozen=True)
class PodTemplate:
    """One pod a document makes: its metadata and spec, and where they are (`path` + `.metadata`/`.spec`)."""

    document: Document
    role: str
    path: Path
    metadata: dict[str, Any]
    spec: dict[str, Any]

    @property
    def containers(self) -> list[tuple[Path, dict[str, Any]]]:
        return self._list("containers")

    @property
    def init_containers(self) -> list[tuple[Path, dict[str, Any]]]:
        return self._list("initContainers")

    def _list(self, key: str) -> list[tuple[Path, dict[str, Any]]]:
        items = self.spec.get(key)
        if not isinstance(items, list):
            return []
        return [((*self.path, "spec", key, i), c) for i, c in enumerate(items) if isinstance(c, dict)]


def pod_templates(document: Document) -> list[PodTemplate]:
    """The pod templates of an MPIJob (per replica type) or of a built-in workload kind."""
    obj = document.obj
    found: list[tuple[str, Path, Any]] = []
    if document.kind == mpi_operator.KIND:
        spec = _dict(obj.get("spec")) or {}
        for role, replica in (_dict(spec.get("mpiReplicaSpecs")) or {}).items():
            if isinstance(role, str) and isinstance(replica, dict):
                found.append((role, ("spec", "mpiReplicaSpecs", role, "template"), replica.get("template")))
    elif document.kind in _TEMPLATE_PATHS:
        parts = _TEMPLATE_PATHS[document.kind]
        node: Any = obj
        for part in parts:
            node = node.get(part) if isinstance(node, dict) else None
        found.append(("", parts, node))
    templates = []
    for role, parts, template in found:
        if not isinstance(template, dict):
            continue
        metadata = template.get("metadata")
        spec = template.get("spec")
        templates.append(PodTemplate(document, role, parts, metadata if isinstance(metadata, dict) else {},
                                     spec if isinstance(spec, dict) else {}))
    return templates


_QUANTITY = re.compile(r"^([0-9]+)(|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)$")
_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def whole_quantity(value: Any) -> int | None:
    """A whole-number resource quantity (extended resources are counted in units), or None when not one."""
    if _int(value) is not None:
        return value
    if isinstance(value, str):
        match = _QUANTITY.match(value.strip())
        if match:
            return int(match.group(1)) * _SUFFIX[match.group(2)]
    return None


def is_extended_resource(name: str) -> bool:
    """A device-plugin style resource: domain-prefixed, outside the kubernetes.io domain."""
    if "/" not in name:
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


@dataclass
class _Request:
    """What a pod asks of one resource: the total (None when some amount cannot be read) and who asks."""

    total: int | None
    paths: list[Path]


def container_requests(container: dict[str, Any], path: Path) -> dict[str, tuple[int | None, Path]]:
    """Per resource: the amount a container asks for (limits win over requests) and where it is written."""
    resources = _dict(container.get("resources")) or {}
    asked: dict[str, tuple[int | None, Path]] = {}
    for section in ("requests", "limits"):
        for resource, value in (_dict(resources.get(section)) or {}).items():
            if isinstance(resource, str):
                asked[resource] = (whole_quantity(value), (*path, "resources", section, resource))
    return asked


def pod_requests(template: PodTemplate) -> dict[str, _Request]:
    """What the pod as a whole needs of each resource: its containers together, or its largest init container."""
    totals: dict[str, _Request] = {}
    for path, container in template.containers:
        for resource, (amount, where) in container_requests(container, path).items():
            entry = totals.setdefault(resource, _Request(0, []))
            entry.total = None if entry.total is None or amount is None else entry.total + amount
            entry.paths.append(where)
    for path, container in template.init_containers:
        for resource, (amount, where) in container_requests(container, path).items():
            entry = totals.get(resource)
            larger = entry is not None and entry.total is not None and (amount is None or amount > entry.total)
            if entry is None or larger:
                totals[resource] = _Request(amount, [where])
    return totals


# --- network ----------------------------------------------------------------------------------------

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_IFNAMSIZ = 16


@dataclass(frozen=True)
class NetworkSelection:
    """One entry of a pod's `k8s.v1.cni.cncf.io/networks`; namespace '' means the pod's own."""

    namespace: str
    name: str
    interface: str = ""


def parse_networks_annotation(value: str) -> tuple[list[NetworkSelection], list[str]]:
    """Multus' parsePodNetworkAnnotation: a JSON list when the text holds `[`, `{` or `"`, else `ns/name@if, ...`.

    Returns the selections and, when the annotation is malformed, why (Multus then fails the pod).
    """
    if value.strip() == "":
        return [], []
    if any(char in value for char in '[{"'):
        return _parse_networks_json(value)
    selections: list[NetworkSelection] = []
    problems: list[str] = []
    for raw in value.split(","):
        item = raw.strip()
        slash = item.split("/")
        if len(slash) > 2:
            problems.append(f"entry {go_quote(item)} has more than one '/' (expected <namespace>/<name>@<interface>)")
            continue
        namespace, rest = (slash[0].strip(), slash[1]) if len(slash) == 2 else ("", slash[0])
        at = rest.split("@")
        if len(at) > 2:
            problems.append(f"entry {go_quote(item)} has more than one '@' (expected <namespace>/<name>@<interface>)")
            continue
        name, interface = at[0].strip(), (at[1].strip() if len(at) == 2 else "")
        if not name:
            problems.append(f"entry {go_quote(item)} names no network")
            continue
        bad = [part for part in (namespace, name) if part and not _DNS1123_LABEL.match(part)]
        if bad:
            problems.append(f"entry {go_quote(item)}: {go_quote(bad[0])} is not a DNS-1123 label (lower case "
                            "alphanumeric characters or '-', starting and ending with an alphanumeric character)")
            continue
        interface_problem = _interface_problem(interface)
        if interface_problem:
            problems.append(f"entry {go_quote(item)}: {interface_problem}")
            continue
        selections.append(NetworkSelection(namespace, name, interface))
    return selections, problems


def _interface_problem(interface: str) -> str:
    if interface == "eth0":
        return "interface eth0 is the pod's cluster network; name the attachment's interface otherwise"
    if len(interface) > _IFNAMSIZ - 1 or re.search(r"[\s/]", interface):
        return (f"interface name {go_quote(interface)} must be at most {_IFNAMSIZ - 1} characters without '/' "
                "or spaces")
    return ""


def _parse_networks_json(value: str) -> tuple[list[NetworkSelection], list[str]]:
    try:
        data = json.loads(value)
    except ValueError as exc:
        return [], [f"is not valid JSON ({exc}); Multus fails the pod: \"failed to parse pod Network Attachment "
                    "Selection Annotation JSON format\""]
    if not isinstance(data, list):
        return [], ['must be a JSON list of {"name": ..., "namespace": ..., "interface": ...} objects, or a '
                    "comma-separated <namespace>/<name>@<interface> list"]
    selections: list[NetworkSelection] = []
    problems: list[str] = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            problems.append(f"entry {index} is not a JSON object")
            continue
        name, namespace, interface = item.get("name"), item.get("namespace", ""), item.get("interface", "")
        if not isinstance(name, str) or not name:
            problems.append(f'entry {index} has no "name" string')
            continue
        if not isinstance(namespace, str) or not isinstance(interface, str):
            problems.append(f'entry {index}: "namespace" and "interface" must be strings')
            continue
        interface_problem = _interface_problem(interface)
        if interface_problem:
            problems.append(f"entry {index}: {interface_problem}")
            continue
        selections.append(NetworkSelection(namespace, name, interface))
    return selections, problems


def cni_config_problem(config: Any) -> str:
    """Why a NAD's `spec.config` is no usable CNI configuration, or ''."""
    if config is None:
        return "spec.config is missing: the NetworkAttachmentDefinition holds no CNI configuration"
    if not isinstance(config, str):
        return "spec.config must be a string holding the CNI configuration as JSON"
    try:
        data = json.loads(config)
    except ValueError as exc:
        return f"spec.config is not valid JSON: {exc}"
    if not isinstance(data, dict):
        return "spec.config must be a JSON object (a CNI configuration or configuration list)"
    if "plugins" in data:
        plugins = data["plugins"]
        if not isinstance(plugins, list) or not plugins:
            return 'spec.config: "plugins" must be a non-empty list of CNI plugin configurations'
        for index, plugin in enumerate(plugins):
            if not isinstance(plugin, dict) or not isinstance(plugin.get("type"), str) or not plugin["type"]:
                return f'spec.config: plugins[{index}] has no CNI "type"'
        return ""
    if not isinstance(data.get("type"), str) or not data["type"]:
        return 'spec.config names no CNI plugin: it needs a "type", or a "plugins" list whose entries each have a "type"'
    return ""


class _NadIndex:
    """NetworkAttachmentDefinitions by namespace and name; a document without a namespace is in the release's."""

    def __init__(self, documents: Iterable[Document]) -> None:
        self.by_key: dict[tuple[str, str], Document] = {}
        self.by_name: dict[str, list[Document]] = {}
        for document in documents:
            name = _metadata_name(document)
            if not name:
                continue
            if document.kind == NAD_KIND:
                namespace = document.namespace
            elif document.kind in OPERATOR_NETWORK_KINDS:
                # The network operators render a NAD of the same name into spec.networkNamespace.
                spec = _dict(document.obj.get("spec")) or {}
                namespace = _str(spec.get("networkNamespace")) or OPERATOR_NETWORK_KINDS[document.kind] or \
                    document.namespace
            else:
                continue
            self.by_key.setdefault((namespace, name), document)
            self.by_name.setdefault(name, []).append(document)

    def find(self, namespace: str, name: str) -> Document | None:
        """Exact match first; where a namespace is unknown (not written), a NAD of that name is taken on trust."""
        exact = self.by_key.get((namespace, name))
        if exact is not None:
            return exact
        if namespace == "":
            return next(iter(self.by_name.get(name, [])), None)
        return self.by_key.get(("", name))


def _annotations(metadata: dict[str, Any]) -> dict[str, Any]:
    return _dict(metadata.get("annotations")) or {}


def check_networks(documents: list[Document], context: CheckContext) -> list[Finding]:
    """Every Multus network a pod names exists, has a usable CNI config, and gets the device it needs."""
    findings: list[Finding] = []
    index = _NadIndex([*documents, *context.extra])
    to_check = {id(d): d for d in documents if d.kind == NAD_KIND}
    for document in documents:
        for template in pod_templates(document):
            findings += _check_pod_networks(template, index, to_check)
    for nad in to_check.values():
        if nad.kind != NAD_KIND:
            continue
        config = (_dict(nad.obj.get("spec")) or {}).get("config")
        if config is None:
            findings.append(finding(nad, path_of(("spec", "config")), (
                "spec.config is missing: Multus then looks for a CNI configuration file of this name on each node; "
                "put the configuration here to keep it in git"), RULE_NETWORK, Severity.WARNING))
            continue
        problem = cni_config_problem(config)
        if problem:
            findings.append(finding(nad, path_of(("spec", "config")), problem, RULE_NETWORK))
        elif _device_plugin_type(config) and not _str(_annotations(_dict(nad.obj.get("metadata")) or {}).get(
                RESOURCE_NAME_ANNOTATION)):
            findings.append(finding(nad, path_of(("metadata", "annotations")), (
                f"a {_device_plugin_type(config)} network needs the {RESOURCE_NAME_ANNOTATION} annotation naming the "
                "device-plugin resource of its VFs; without it Multus fails with \"VF pci addr is required\""),
                RULE_NETWORK))
    return findings


def _device_plugin_type(config: str) -> str:
    """`sriov` or `ib-sriov` when the main plugin of a CNI config needs a device from a device plugin."""
    try:
        data = json.loads(config)
    except ValueError:
        return ""
    main = (data.get("plugins") or [{}])[0] if isinstance(data.get("plugins"), list) else data
    kind = main.get("type") if isinstance(main, dict) else None
    return kind if kind in ("sriov", "ib-sriov") else ""


def _check_pod_networks(template: PodTemplate, index: _NadIndex, to_check: dict[int, Document]) -> list[Finding]:
    document = template.document
    annotations = _annotations(template.metadata)
    if NETWORKS_ANNOTATION not in annotations:
        return []
    where = path_of((*template.path, "metadata", "annotations", NETWORKS_ANNOTATION))
    value = annotations[NETWORKS_ANNOTATION]
    if not isinstance(value, str):
        return [finding(document, where, f"{NETWORKS_ANNOTATION} must be a string", RULE_NETWORK)]
    selections, problems = parse_networks_annotation(value)
    findings = [finding(document, where, f"{NETWORKS_ANNOTATION} {problem}", RULE_NETWORK) for problem in problems]
    attached: Counter[int] = Counter()
    nads: dict[int, Document] = {}
    for selection in selections:
        namespace = selection.namespace or document.namespace
        nad = index.find(namespace, selection.name)
        if nad is None:
            shown = f"{namespace}/{selection.name}" if namespace else selection.name
            findings.append(finding(document, where, (
                f"no NetworkAttachmentDefinition {shown} (named in {NETWORKS_ANNOTATION}) in this render or the extra "
                "manifests; Multus cannot attach it and the pod never starts"), RULE_NETWORK))
            continue
        attached[id(nad)] += 1
        nads[id(nad)] = nad
        to_check.setdefault(id(nad), nad)
    requests = pod_requests(template)
    containers = path_of((*template.path, "spec", "containers"))
    for key, count in attached.items():
        nad = nads[key]
        metadata = _dict(nad.obj.get("metadata")) or {}
        resource = _str(_annotations(metadata).get(RESOURCE_NAME_ANNOTATION))
        if not resource:
            continue
        shown = f"{nad.namespace}/{_metadata_name(nad)}" if nad.namespace else _metadata_name(nad)
        asked = requests.get(resource)
        if asked is None:
            findings.append(finding(document, containers, (
                f"network {shown} needs a {resource} device (its {RESOURCE_NAME_ANNOTATION}), but no container of "
                f"this pod requests {resource} in resources.limits; Multus fails with \"VF pci addr is required\""),
                RULE_NETWORK))
        elif asked.total is not None and asked.total < count:
            findings.append(finding(document, containers, (
                f"the pod attaches network {shown} {count} times, but its containers request {asked.total} "
                f"{resource} (the NAD's {RESOURCE_NAME_ANNOTATION}); each attachment needs its own device"),
                RULE_NETWORK))
    return findings


# --- capacity ---------------------------------------------------------------------------------------

def check_capacity(documents: list[Document], context: CheckContext) -> list[Finding]:
    """The extended resources of one MPIJob worker fit one node of the pool its chart targets."""
    findings: list[Finding] = []
    for document in documents:
        shape = context.node_shapes.get(document.chart) if document.chart else None
        if shape is None or document.kind != mpi_operator.KIND:
            continue
        offered = shape.resources if isinstance(shape.resources, dict) else {}
        node = _node_words(shape.cluster, shape.pool)
        for template in pod_templates(document):
            if template.role != mpi_operator.WORKER:
                continue
            for resource, asked in sorted(pod_requests(template).items()):
                if not is_extended_resource(resource):
                    continue
                where = path_of(asked.paths[0]) if len(asked.paths) == 1 else \
                    path_of((*template.path, "spec", "containers"))
                if resource not in offered:
                    known = ", ".join(sorted(str(r) for r in offered)) or "no extended resources"
                    findings.append(finding(document, where, (
                        f"the worker pod requests {resource}, which {node} does not offer (it offers: {known}); "
                        "the workers never schedule"), RULE_CAPACITY))
                    continue
                capacity = whole_quantity(offered[resource])
                if capacity is not None and asked.total is not None and asked.total > capacity:
                    who = ("worker container requests" if len(asked.paths) == 1
                           else "worker pod's containers together request")
                    findings.append(finding(document, where, (
                        f"the {who} {asked.total} {resource}, but {node} has {capacity}; the workers never schedule"),
                        RULE_CAPACITY))
    return findings


def _node_words(cluster: str, pool: str) -> str:
    if pool and cluster:
        return f"a node of pool {pool} (cluster {cluster})"
    if pool:
        return f"a node of pool {pool}"
    return "a node of the chart's pool"


# --- names ------------------------------------------------------------------------------------------

_WORKER_NAME = re.compile(r"^(?P<job>.+)-worker-(?P<index>[0-9]+)$")


@dataclass(frozen=True)
class _Owned:
    kinds: tuple[str, ...]
    what: str


def operator_owned(job: str, name: str) -> _Owned | None:
    """What mpi-operator creates under `name` for MPIJob `job`, or None when the name is not the operator's."""
    config, ssh, launcher = names.operator_owned_names(job)
    if name == config:
        return _Owned(("ConfigMap",), f"ConfigMap {name} (hostfile and discover_hosts.sh, mounted at /etc/mpi)")
    if name == ssh:
        return _Owned(("Secret",), f"Secret {name} (the job's SSH keys)")
    if name == launcher:
        return _Owned(("Job", "Service"), f"the launcher Job {name} (and for Intel MPI and MPICH a Service {name})")
    if name == names.service_name(job):
        return _Owned(("Service",), f"the headless Service {name} of the workers")
    match = _WORKER_NAME.match(name)
    if match and match.group("job") == job and name == names.worker_name(job, int(match.group("index"))):
        return _Owned(("Pod",), f"worker Pod {name}")
    return None


def _candidate_jobs(name: str) -> list[str]:
    config, ssh, launcher = names.operator_owned_names("")
    candidates = [name]
    for suffix in (config, ssh, launcher):
        if name.endswith(suffix) and len(name) > len(suffix):
            candidates.append(name[: -len(suffix)])
    match = _WORKER_NAME.match(name)
    if match:
        candidates.append(match.group("job"))
    return candidates


def check_reserved_names(documents: list[Document], context: CheckContext | None = None) -> list[Finding]:
    """No object beside MPIJob `<job>` is named `<job>-config`, `-ssh`, `-launcher`, `-worker-<N>` (or Service `<job>`)."""
    extra = context.extra if context is not None else ()
    jobs = {(d.namespace, _metadata_name(d)) for d in [*documents, *extra]
            if d.kind == mpi_operator.KIND and _metadata_name(d)}
    findings: list[Finding] = []
    for document in documents:
        name = _metadata_name(document)
        if not name:
            continue
        for job in _candidate_jobs(name):
            if (document.namespace, job) not in jobs:
                continue
            owned = operator_owned(job, name)
            if owned is None or (name == job and document.kind != "Service"):
                continue
            message = f"name {name} is mpi-operator's for MPIJob {job}: the operator creates {owned.what}"
            if document.kind in owned.kinds:
                message += (f"; with this {document.kind} in its place the job never starts (event ErrResourceExists: "
                            "\"already exists and is not managed by MPIJob\")")
            else:
                message += f"; rename this {document.kind or 'object'}"
            findings.append(finding(document, path_of(("metadata", "name")), message, RULE_NAMES))
            break
    return findings


# --- all --------------------------------------------------------------------------------------------

def check_extended_resources(documents: list[Document]) -> list[Finding]:
    """Device-plugin resources (GPUs, VFs) as the API server takes them: whole numbers, with a limit,
    and a request equal to it (they cannot be overcommitted)."""
    findings: list[Finding] = []
    for document in documents:
        for template in pod_templates(document):
            for path, container in [*template.containers, *template.init_containers]:
                resources = _dict(container.get("resources")) or {}
                limits = _dict(resources.get("limits")) or {}
                requests = _dict(resources.get("requests")) or {}
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


def workload_pod_security(document: Document) -> PodSecurity | None:
    """The Pod Security level the pods of a workload need; None for objects that make no pods."""
    templates = pod_templates(document)
    if not templates:
        return None
    return combine(evaluate(template.spec) for template in templates)


def check_pod_security(documents: list[Document], context: CheckContext) -> list[Finding]:
    """Pod Security admission refuses a pod that needs more than its namespace's `enforce` label allows.

    The MPIJob itself is accepted: only the operator's pods are refused, so the job just never starts.
    """
    findings: list[Finding] = []
    enforced: dict[tuple[str, str], Level] = {}  # (cluster or '', namespace)
    levels = [level.label for level in Level]
    for document in (*documents, *context.extra):
        if document.kind != "Namespace" or document.api_version != "v1":
            continue
        labels = _dict((_dict(document.obj.get("metadata")) or {}).get("labels")) or {}
        if ENFORCE_LABEL not in labels:
            continue
        value = labels[ENFORCE_LABEL]
        if value not in levels:
            if document in documents:
                findings.append(finding(document, path_of(("metadata", "labels", ENFORCE_LABEL)),
                                        f"{value!r} is not a Pod Security level; the API server refuses it: "
                                        f"write one of {', '.join(levels)}", RULE_POD_SECURITY))
            continue
        enforced[(context.cluster_of(document), document.name)] = Level[value.upper()]
    for document in documents:
        security = workload_pod_security(document)
        allowed = enforced.get((context.cluster_of(document), document.namespace), enforced.get(("", document.namespace)))
        if security is None or allowed is None or security.level <= allowed:
            continue
        findings.append(finding(
            document, "", f"namespace {document.namespace} enforces Pod Security level {allowed.label}, but these "
            f"pods need {security.level.label} ({'; '.join(security.reasons)}): the API server will refuse to create "
            f"them and the job never starts; raise the namespace's {ENFORCE_LABEL} label to {security.level.label} "
            "(the infra chart mpigen compiles for the cluster does), or ask for less", RULE_POD_SECURITY))
    return findings


def run_rules(documents: list[Document], context: CheckContext) -> list[Finding]:
    """Every rule over every document. A rule that fails on input it should have skipped is reported, not raised."""
    findings: list[Finding] = []
    checks: list[tuple[str, Callable[[], list[Finding]]]] = [
        *((RULE_MPI_OPERATOR, (lambda d=d: check_mpijob(d))) for d in documents),
        (RULE_NETWORK, lambda: check_networks(documents, context)),
        (RULE_CAPACITY, lambda: check_capacity(documents, context)),
        (RULE_RESOURCES, lambda: check_extended_resources(documents)),
        (RULE_NAMES, lambda: check_reserved_names(documents, context)),
        (RULE_POD_SECURITY, lambda: check_pod_security(documents, context)),
    ]
    for rule, check in checks:
        try:
            findings += check()
        except Exception as exc:  # a bug in a rule must not hide the other findings
            findings.append(Finding("", "", "", f"internal error in rule {rule}: {exc!r}; please report it", rule))
    return findings
