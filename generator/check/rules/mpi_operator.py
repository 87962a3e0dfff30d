"""mpi-operator's own MPIJob validation, with the operator's wording.

The operator runs it on the *defaulted* job and reports it only as a Warning event, reason `ValidationError`,
message `Found validation errors: <field.ErrorList.ToAggregate()>` (the job is accepted by the API server and
then never runs). Each finding's message is one `field.Error.Error()` of that list, so it can be searched in
`kubectl describe mpijob` output; checking it here says so before the job is applied.
"""

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

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mpigen.check.rules.goerrors import (
    NONNEGATIVE,
    field_invalid,
    field_not_supported,
    field_required,
    go_json_string,
    go_quote,
)
from mpigen.check.rules.reading import Path, as_dict, as_int, as_str, metadata_name, path_of
from mpigen.model import names
from mpigen.readback.findings import CheckContext, Finding, RenderedObject, finding
from mpigen.support.diagnostics import Severity
from mpigen.vocabulary import mpi_operator
from mpigen.vocabulary.kubernetes import dns1035_label_problems
from mpigen.vocabulary.mpi_operator import RUN_POLICY_PATH, RunPolicyField, SpecField

RULE_MPI_OPERATOR = "mpi-operator"

Report = Callable[..., None]
"""`report(parts, message, severity=ERROR)`: add one finding on the MPIJob being judged."""


def check_mpijobs(documents: list[RenderedObject], context: CheckContext) -> list[Finding]:
    """The rule as the registry runs it: `check_mpijob` over every document (it needs no context)."""
    return [found for document in documents for found in check_mpijob(document)]


def check_mpijob(document: RenderedObject) -> list[Finding]:
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
    replica_specs = spec.get(SpecField.MPI_REPLICA_SPECS)
    _check_name(document, replica_specs if isinstance(replica_specs, dict) else {}, report)
    # validateMPIReplicaSpecs
    if replica_specs is None:
        report(("spec", SpecField.MPI_REPLICA_SPECS),
               field_required(f"spec.{SpecField.MPI_REPLICA_SPECS}", "must have replica specs"))
    elif isinstance(replica_specs, dict):
        for role in (mpi_operator.LAUNCHER, mpi_operator.WORKER):
            _check_replica_spec(replica_specs, role, report)
    _check_job_spec(spec, report)
    return findings


def _check_name(document: RenderedObject, replica_specs: dict[str, Any], report: Report) -> None:
    """validateMPIJobName: the last worker's hostname `<name>-worker-<replicas-1>` must be a DNS-1035 label."""
    name = metadata_name(document)
    if not name:
        return
    replicas = 1
    worker = as_dict(replica_specs.get(mpi_operator.WORKER))
    if worker is not None:
        count = as_int(worker.get("replicas"))
        if count is not None and count > 0:
            replicas = count
    hostname = names.worker_name(name, replicas - 1)
    problems = dns1035_label_problems(hostname)
    if problems:
        report(("metadata", "name"), field_invalid(
            "metadata.name", go_quote(name),
            f"will not able to create pod and service with invalid DNS label {go_quote(hostname)}: "
            + ", ".join(problems)))


def _check_job_spec(spec: dict[str, Any], report: Report) -> None:
    """validateMPIJobSpec. slotsPerWorker, runPolicy.cleanPodPolicy and sshAuthMountPath are defaulted before
    validation, so their "Required value" errors cannot happen to a job that reached the operator.

    launcherCreationPolicy is not validated by the operator (any value but "AtStartup" acts as
    "WaitForWorkersReady"); mpigen's own MPIJob schema holds it to its two values instead."""
    slots = spec.get(SpecField.SLOTS_PER_WORKER)
    slots = 1 if slots is None else as_int(slots)
    if slots is not None and slots < 0:
        report(("spec", SpecField.SLOTS_PER_WORKER),
               field_invalid(f"spec.{SpecField.SLOTS_PER_WORKER}", str(slots), NONNEGATIVE))
    elif slots == 0:
        report(("spec", SpecField.SLOTS_PER_WORKER),
               "slotsPerWorker 0 passes mpi-operator's validation, but every worker then offers 0 slots in the "
               "hostfile, so mpirun starts no process on the workers; set it to the processes per worker "
               "(usually its GPU count)", Severity.WARNING)

    run_policy = spec.get(SpecField.RUN_POLICY)
    run_policy = {} if run_policy is None else as_dict(run_policy)
    if run_policy is not None:
        _check_run_policy(run_policy, report)

    implementation = spec.get(SpecField.MPI_IMPLEMENTATION)
    implementation = mpi_operator.DEFAULT_MPI_IMPLEMENTATION if implementation in (None, "") else as_str(implementation)
    if implementation is not None and implementation not in mpi_operator.MPI_IMPLEMENTATIONS:
        report(("spec", SpecField.MPI_IMPLEMENTATION), field_not_supported(
            f"spec.{SpecField.MPI_IMPLEMENTATION}", go_json_string(implementation), mpi_operator.MPI_IMPLEMENTATIONS))


def _check_replica_spec(replica_specs: dict[str, Any], role: str, report: Report) -> None:
    field = f"spec.{SpecField.MPI_REPLICA_SPECS}[{role}]"
    base: Path = ("spec", SpecField.MPI_REPLICA_SPECS, role)
    spec = replica_specs.get(role)
    if spec is None:
        if role == mpi_operator.LAUNCHER:
            report(base, field_required(field, f"must have {role} replica spec"))
        return
    if not isinstance(spec, dict):
        return
    default_restart, default_replicas = mpi_operator.DEFAULT_RESTART_POLICY[role], mpi_operator.DEFAULT_REPLICAS[role]
    replicas = spec.get("replicas")
    replicas = default_replicas if replicas is None else as_int(replicas)
    restart = spec.get("restartPolicy")
    restart = default_restart if restart in (None, "") else as_str(restart)
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


def _check_run_policy(policy: dict[str, Any], report: Report) -> None:
    field = ".".join(RUN_POLICY_PATH)
    clean = policy.get(RunPolicyField.CLEAN_POD_POLICY)
    clean = mpi_operator.DEFAULT_CLEAN_POD_POLICY if clean is None else as_str(clean)
    if clean is not None and clean not in mpi_operator.CLEAN_POD_POLICIES:
        report((*RUN_POLICY_PATH, RunPolicyField.CLEAN_POD_POLICY), field_not_supported(
            f"{field}.{RunPolicyField.CLEAN_POD_POLICY}", go_json_string(clean), mpi_operator.CLEAN_POD_POLICIES))
    for key in (RunPolicyField.TTL_SECONDS_AFTER_FINISHED, RunPolicyField.ACTIVE_DEADLINE_SECONDS,
                RunPolicyField.BACKOFF_LIMIT):
        value = as_int(policy.get(key))
        if value is not None and value < 0:
            report((*RUN_POLICY_PATH, key), field_invalid(f"{field}.{key}", str(value), NONNEGATIVE))
    managed_by = as_str(policy.get(RunPolicyField.MANAGED_BY))
    if managed_by is not None and managed_by not in mpi_operator.MANAGED_BY:
        report((*RUN_POLICY_PATH, RunPolicyField.MANAGED_BY), field_not_supported(
            f"{field}.{RunPolicyField.MANAGED_BY}", go_quote(managed_by), mpi_operator.MANAGED_BY))
