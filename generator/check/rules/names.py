"""Names as the cluster takes them.

- Object metadata (`name`, `generateName`, `namespace`, label and annotation keys) and the names in pods
  (containers, volumes, container ports) the API server accepts (`check_object_names`): a Pod `A_B..`, a container
  `C!`, a ConfigMap `../x` or a namespace `Kube System` is refused by `kubectl apply` and Argo CD alike.
- No MPI job runs in a namespace of Kubernetes or a controller (`check_job_namespaces`): it could read their
  Secrets. Other workloads there are the platform's own (device plugins run in kube-system), but one that reads a
  Secret in a controller's namespace is worth a second look (a warning).
- Names mpi-operator creates for an MPIJob (`<job>-config`, `-ssh`, `-launcher`, `-worker-<N>`, Service
  `<job>`), and Volcano's job plugins for a Volcano Job (`<job>-svc`, `<job>-ssh`, Service and NetworkPolicy
  `<job>`): another object taking one stops the job, so check says so first (`check_reserved_names`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mpigen.check.rules.goerrors import go_quote
from mpigen.check.rules.pods import (
    PodTemplate,
    is_trainjob,
    is_volcano_job,
    pod_templates,
    refused_later,
    runs_a_job,
    secret_reads,
)
from mpigen.check.rules.reading import Path, as_dict, metadata_name, path_of
from mpigen.model import names
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.support.diagnostics import Severity
from mpigen.vocabulary import kubernetes, mpi_operator, trainer, volcano_job
from mpigen.vocabulary.reserved import SYSTEM_NAMESPACES, reserved_namespace_owner

RULE_NAMES = "names"


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


def volcano_owned(job: str, name: str) -> _Owned | None:
    """What Volcano's job controller and its svc and ssh plugins create under `name` for Volcano Job `job`."""
    svc, ssh = volcano_job.plugin_owned_names(job)
    if name == svc:
        return _Owned(("ConfigMap",), f"ConfigMap {name} (the svc plugin's host files, mounted at /etc/volcano)")
    if name == ssh:
        return _Owned(("Secret",), f"Secret {name} (the ssh plugin's keys)")
    if name == job:
        return _Owned(("Service", "NetworkPolicy"), f"the headless Service and the NetworkPolicy {name} of the svc "
                      "plugin")
    return None


def _jobs(documents: list[RenderedObject], is_job: Callable[[RenderedObject], bool]
          ) -> dict[tuple[str, str], list[RenderedObject]]:
    """The job objects `is_job` recognises, by namespace and name."""
    jobs: dict[tuple[str, str], list[RenderedObject]] = {}
    for document in documents:
        if is_job(document) and metadata_name(document):
            jobs.setdefault((document.namespace, metadata_name(document)), []).append(document)
    return jobs


def _beside(document: RenderedObject, job: str, jobs: dict[tuple[str, str], list[RenderedObject]],
            context: CheckContext) -> bool:
    """A job named `job` in the document's namespace of its own cluster: a controller's names clash only there."""
    return any(context.same_cluster(document, other) for other in jobs.get((document.namespace, job), ()))


def _check_controller_names(documents: list[RenderedObject], extra: list[RenderedObject], context: CheckContext,
                            is_job: Callable[[RenderedObject], bool], owned_by: Callable[[str, str], _Owned | None],
                            suffixes: tuple[str, ...], whose: str) -> list[Finding]:
    """No object beside a job `<job>` that `is_job` recognises takes a name its controller creates for it:
    `<job>` itself or `<job><suffix>` (what `owned_by(job, name)` says, for the kinds it names)."""
    jobs = _jobs([*documents, *extra], is_job)
    findings: list[Finding] = []
    for document in documents:
        name = metadata_name(document)
        for suffix in ("", *suffixes):
            job = name.removesuffix(suffix) if name.endswith(suffix) else None
            owned = owned_by(job, name) if job and _beside(document, job, jobs, context) else None
            if owned is None or document.kind not in owned.kinds:
                continue
            findings.append(finding(document, path_of(("metadata", "name")), (
                f"name {name} is {whose} {job}: it creates {owned.what} under that name, which this "
                f"{document.kind} would clash with; rename it"), RULE_NAMES))
            break
    return findings


def trainer_owned(job: str, name: str) -> _Owned | None:
    """What Kubeflow Trainer and JobSet create under `name` for TrainJob `job`."""
    hostfile, ssh = trainer.trainer_owned_names(job)
    if name == hostfile:
        return _Owned(("ConfigMap",), f"ConfigMap {name} (the MPI plugin's hostfile, mounted at /etc/mpi)")
    if name == ssh:
        return _Owned(("Secret",), f"Secret {name} (the MPI plugin's ssh keys)")
    if name == job:
        return _Owned(("JobSet", "Service"), f"the JobSet {name} and its headless Service")
    return None


def _suffixes(owned_names: Callable[[str], tuple[str, ...]]) -> tuple[str, ...]:
    """What a controller's names for a job add to the job's name."""
    return tuple(owned.removeprefix("<job>") for owned in owned_names("<job>"))


def check_reserved_names(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """No object beside MPIJob `<job>` is named `<job>-config`, `-ssh`, `-launcher`, `-worker-<N>` (or Service `<job>`);
    none beside Volcano Job `<job>` takes `<job>-svc`, `<job>-ssh`, or Service or NetworkPolicy `<job>`; none beside
    TrainJob `<job>` takes `<job>-mpi-hostfile`, `<job>-mpi-ssh-auth`, or JobSet or Service `<job>`."""
    context = context if context is not None else CheckContext()
    extra = list(context.extra)
    jobs = _jobs([*documents, *extra], lambda d: d.kind == mpi_operator.KIND)
    findings = _check_controller_names(documents, extra, context, is_volcano_job, volcano_owned,
                                       _suffixes(volcano_job.plugin_owned_names), "Volcano's for its Job")
    findings += _check_controller_names(documents, extra, context, is_trainjob, trainer_owned,
                                        _suffixes(trainer.trainer_owned_names), "Kubeflow Trainer's for its TrainJob")
    for document in documents:
        name = metadata_name(document)
        if not name:
            continue
        for job in _candidate_jobs(name):
            if not _beside(document, job, jobs, context):
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


# --- names the API server takes -------------------------------------------------------------------------------
# apimachinery pkg/api/validation/objectmeta.go @ 008b3652959ca58af8be3fb5b6ecfe9ae7638282 (ValidateObjectMetaAccessor:
# metadata.name by the kind's name function, metadata.namespace by ValidateNamespaceName = NameIsDNSLabel where the
# kind has one, ValidateLabels, ValidateAnnotations with keys in lower case and ValidateAnnotationsSize: keys and
# values together at most 256 KiB, `field.TooLong(metadata.annotations)`), pkg/apis/meta/v1/validation/
# validation.go @ 046d201c45cebd19eb1fc4612426761c64802825 (ValidateLabels: every error on the field
# `metadata.labels`, the bad key or value as its value) and kubernetes pkg/apis/core/validation/validation.go
# (validateContainerCommon: a container's name is a DNS-1123 label; validatePodSpec: unique across the pod's
# containers, init and ephemeral containers). Each finding is one field.Error, as `kubectl apply` prints it.
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _cluster_scoped(documents: list[RenderedObject]) -> set[tuple[str, str]]:
    """(group, kind) of the built-in cluster-scoped kinds and of custom kinds whose CRD, among `documents`, says so."""
    scoped = set(kubernetes.CLUSTER_SCOPED_KINDS)
    for document in documents:
        spec = as_dict(document.obj.get("spec")) if document.kind == kubernetes.CRD_KIND else None
        names_ = as_dict(spec.get("names")) if spec else None
        if spec and names_ and spec.get("scope") == "Cluster":
            scoped.add((str(spec.get("group", "")), str(names_.get("kind", ""))))
    return scoped


def _invalid(field: str, value: str, problem: str) -> str:
    return f"{field}: Invalid value: {go_quote(value)}: {problem}"


def _metadata_findings(document: RenderedObject, metadata: dict[str, object], at: Path, in_template: bool,
                       namespaced: bool) -> list[Finding]:
    """ValidateObjectMeta of the object (`at` = ()) or of a pod template's metadata (labels and annotations only)."""
    findings: list[Finding] = []
    after = refused_later(document) if in_template else ""

    def report(parts: Path, field: str, value: str, problem: str) -> None:
        findings.append(finding(document, path_of((*at, *parts)), _invalid(field, value, problem) + after, RULE_NAMES))

    where = path_of((*at, "metadata")).lstrip(".")
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not in_template and isinstance(name, str) and name:
        for problem in kubernetes.name_problems(document.api_version, document.kind, name):
            report(("metadata", "name"), f"{where}.name", name, problem)
    generate_name = metadata.get("generateName")
    if not in_template and isinstance(generate_name, str) and generate_name:
        for problem in kubernetes.name_problems(document.api_version, document.kind, generate_name, prefix=True):
            report(("metadata", "generateName"), f"{where}.generateName", generate_name, problem)
    if not in_template and namespaced and isinstance(namespace, str) and namespace:
        for problem in kubernetes.dns1123_label_problems(namespace):
            report(("metadata", "namespace"), f"{where}.namespace", namespace, problem)
    for key, value in (as_dict(metadata.get("labels")) or {}).items():
        if not isinstance(key, str):
            continue
        for problem in kubernetes.label_key_problems(key):
            report(("metadata", "labels", key), f"{where}.labels", key, problem)
        for problem in kubernetes.label_value_problems(value) if isinstance(value, str) else ():
            report(("metadata", "labels", key), f"{where}.labels", value, problem)
    annotations = as_dict(metadata.get("annotations")) or {}
    for key in annotations:
        for problem in kubernetes.label_key_problems(key.lower()) if isinstance(key, str) else ():
            report(("metadata", "annotations", key), f"{where}.annotations", key, problem)
    if kubernetes.annotations_size(annotations) > kubernetes.TOTAL_ANNOTATION_SIZE:
        findings.append(finding(document, path_of((*at, "metadata", "annotations")), (
            f"{where}.annotations: Too long: must have at most {kubernetes.TOTAL_ANNOTATION_SIZE} bytes{after}; keep "
            "long text elsewhere (a ConfigMap) and link to it"), RULE_NAMES))
    return findings


def _unique_name_findings(document: RenderedObject, named: list[tuple[Path, object]], required: bool,
                          problems: Callable[[str], list[str]]) -> list[Finding]:
    """Names of one list in a pod (`named`: where each name is, and the name), each as `problems` judges it and none
    twice; an empty one is `Required value` where `required` (a container's, a volume's), else not judged (a port
    needs no name)."""
    findings: list[Finding] = []
    seen: set[str] = set()
    for parts, name in named:
        if not isinstance(name, str) or (not name and not required):
            continue  # none, or not a string: the schema check's to report
        field = path_of(parts).lstrip(".")
        if not name:
            messages = [f"{field}: Required value"]
        elif name in seen:
            messages = [f"{field}: Duplicate value: {go_quote(name)}"]
        else:
            messages = [_invalid(field, name, problem) for problem in problems(name)]
        seen.add(name)
        findings += [finding(document, path_of(parts), message + refused_later(document), RULE_NAMES)
                     for message in messages]
    return findings


def _items(spec: dict[str, object], key: str, at: Path) -> list[tuple[Path, dict[str, object]]]:
    items = spec.get(key)
    return [((*at, key, i), item) for i, item in enumerate(items if isinstance(items, list) else [])
            if isinstance(item, dict)]


def _container_findings(template: PodTemplate) -> list[Finding]:
    """validatePodSpec's names: each container's a DNS-1123 label, none twice in the pod (validateContainerCommon);
    each volume's a DNS-1123 label, none twice (validateVolumes); each container port's an IANA_SVC_NAME, none twice
    in its container (validateContainerPorts)."""
    document, at = template.document, (*template.path, "spec")
    containers = [entry for key in _CONTAINER_LISTS for entry in _items(template.spec, key, at)]
    findings = _unique_name_findings(document, [((*path, "name"), c.get("name")) for path, c in containers], True,
                                     kubernetes.dns1123_label_problems)
    findings += _unique_name_findings(document, [((*path, "name"), v.get("name"))
                                                 for path, v in _items(template.spec, "volumes", at)], True,
                                      kubernetes.dns1123_label_problems)
    for path, container in containers:
        findings += _unique_name_findings(document, [((*port_path, "name"), port.get("name"))
                                                     for port_path, port in _items(container, "ports", path)], False,
                                          kubernetes.port_name_problems)
    return findings


def check_object_names(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """Every object's name, generateName, namespace, label keys and values and annotation keys, and every container's,
    volume's and container port's name, as the API server judges them on create (Kubernetes' own kinds by their own
    rules, custom resources' names as DNS-1123 subdomains); the metadata of the pod templates in workloads and jobs as
    the API server judges the pods made from them."""
    context = context if context is not None else CheckContext()
    scoped = _cluster_scoped([*documents, *context.extra])
    findings: list[Finding] = []
    for document in documents:
        metadata = as_dict(document.obj.get("metadata"))
        if metadata is not None:
            namespaced = (kubernetes.api_group(document.api_version), document.kind) not in scoped
            findings += _metadata_findings(document, metadata, (), False, namespaced)
        for template in pod_templates(document):
            findings += _metadata_findings(document, template.metadata, template.path, True, True)
            findings += _container_findings(template)
    return findings


# --- namespaces of Kubernetes and the controllers ---------------------------------------------------------------


def check_job_namespaces(documents: list[RenderedObject], context: CheckContext | None = None) -> list[Finding]:
    """An MPI job (`runs_a_job`) in a namespace of Kubernetes or a controller (vocabulary/reserved.py) is an error, as
    validate refuses such a job namespace in profiles. Another workload there is the platform's own business, but one
    that reads a Secret in a controller's namespace (not Kubernetes') is a warning: unless it is the controller's own,
    it reads the controller's credentials."""
    context = context if context is not None else CheckContext()
    findings: list[Finding] = []
    for document in documents:
        namespace = document.namespace
        owner = reserved_namespace_owner(namespace) if namespace else None
        if owner is None:
            continue
        where = path_of(("metadata", "namespace"))
        if runs_a_job(document, context):
            findings.append(finding(document, where, (
                f"namespace {namespace} belongs to {owner}: a job there could read its Secrets by `secretKeyRef` and "
                "runs beside its pods, under the Pod Security label its pods need; run the job in a namespace of its "
                "own (mpigen refuses it as a job namespace)"), RULE_NAMES))
            continue
        if namespace in SYSTEM_NAMESPACES:
            continue
        read = sorted({name for template in pod_templates(document) for _, name in secret_reads(template)})
        if read:
            findings.append(finding(document, where, (
                f"namespace {namespace} belongs to {owner}, and this {document.kind} reads Secret(s) "
                f"{', '.join(read)} there: unless it is {owner}'s own, it reads the controller's credentials; run it in a "
                "namespace of its own"), RULE_NAMES, Severity.WARNING))
    return findings
