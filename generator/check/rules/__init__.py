"""Semantic rules of `mpigen check`: what no schema holds, judged over rendered documents.

Every rule has one signature, `(documents, context) -> findings`, and none of them raises on a malformed
document: a broken document is the schema check's to report, the rules skip whatever they cannot read.
`RULES` lists them in the order their findings are reported:

- "mpi-operator": mpi-operator's own MPIJob validation, with the operator's wording (mpi_operator.py).
- "network": Multus networks a pod names exist as NetworkAttachmentDefinitions, their CNI config is
  readable, and the pod requests the device-plugin resource each NAD needs (network.py).
- "capacity": the extended resources a worker requests fit one node of the pool its chart targets.
- "resources": extended resources are whole numbers, with a limit, and requests equal to it.
- "quantities": every Quantity of Kubernetes' own kinds decodes, none is negative, a container's resource names are
  standard or domain-prefixed, and no request exceeds its limit (quantities.py).
- "pod-spec": every container has an image, ports in range with a known protocol, env var names its Kubernetes
  version takes and mounts of declared volumes at paths of their own; each kind's pods restart as it allows
  (pod_spec.py).
- "devices": Dynamic Resource Allocation: a pod's claims name templates and claims of its namespace and its
  containers name only those, each request's DeviceClass exists, no device is asked for both through a claim and as
  an extended resource, and constraints match attributes the drivers publish (devices.py).
- "names": every object's name, namespace, labels and annotation keys and every container's name are what the
  API server takes (`check_object_names`), nothing beside a job takes a name its controller creates for it, and no
  job runs in a namespace of Kubernetes or a controller (`check_job_namespaces`).
- "immutable": no change to a field the API server keeps as created, against the live object `--context` gives
  (immutable.py).
- "pod-security": no workload needs a higher Pod Security level than its namespace enforces.
- "scheduling": a gang can complete (mpi-operator #608), a Kueue job's LocalQueue exists and its ClusterQueue
  covers what the job requests, and no job runs at a `system-` priority class (scheduling.py); a KAI Scheduler
  workload's leaf Queue and Topology exist, its gang completes as KAI's podgrouper counts it, and its pods fit its
  queue's limit and, not preemptible, its quota (kai_scheduler.py).
- "crd-rules": the CEL rules (`x-kubernetes-validations`) of each custom resource's CRD, as the API server evaluates
  them (check/cel/crd_rules.py).
"""

from __future__ import annotations

from mpigen.check.rules.capacity import check_capacity
from mpigen.check.rules.devices import check_devices
from mpigen.check.rules.goerrors import go_json_string, go_quote
from mpigen.check.rules.immutable import check_immutable
from mpigen.check.rules.mpi_operator import check_mpijob
from mpigen.check.rules.names import check_job_namespaces, check_object_names, check_reserved_names
from mpigen.check.rules.network import check_networks
from mpigen.check.rules.pod_security import check_pod_security, workload_pod_security
from mpigen.check.rules.pod_spec import check_pod_specs
from mpigen.check.rules.quantities import check_quantities
from mpigen.check.rules.registry import RULES, Rule, apply_rules, run_rules
from mpigen.check.rules.resources import check_extended_resources
from mpigen.check.rules.scheduling import check_scheduling
from mpigen.readback.findings import Finding

__all__ = [
    "RULES",
    "Finding",
    "Rule",
    "apply_rules",
    "check_capacity",
    "check_devices",
    "check_extended_resources",
    "check_immutable",
    "check_job_namespaces",
    "check_mpijob",
    "check_networks",
    "check_object_names",
    "check_pod_security",
    "check_pod_specs",
    "check_quantities",
    "check_reserved_names",
    "check_scheduling",
    "go_json_string",
    "go_quote",
    "run_rules",
    "workload_pod_security",
]
