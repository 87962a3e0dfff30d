"""Kubernetes' own grammars, as k8s.io/apimachinery defines them: object names (DNS-1123 labels and subdomains,
DNS-1035 labels, path segments), label keys and values, quantities, field paths.

Sources (kubernetes/kubernetes, staging/src/k8s.io/apimachinery/): pkg/util/validation/validation.go
@ 008b3652959ca58af8be3fb5b6ecfe9ae7638282 (IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label, MaxLenError,
RegexError, IsValidPortName), pkg/api/validate/content/kube.go @ 26c0309663d6df7426e5ce03835f15c34b1c7399 (IsLabelKey, the
"qualified name" of label and annotation keys, and IsLabelValue), content/path.go
@ de741dc854090f5315798b2ad6c0407900de25d0 (IsPathSegmentName), pkg/api/resource/quantity.go (the quantity
grammar) and the JSON paths kubectl and the API server print. Messages are theirs, word for word, so a finding
reads as `kubectl apply` would refuse the object. Go measures lengths in bytes of UTF-8, and its `$` is the very
end of the text: both are kept here (`_go_len`, `fullmatch`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    ROUND_CEILING,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
    localcontext,
)
from typing import Any, ParamSpec, TypeVar

DNS1035_LABEL_FORMAT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL = re.compile(DNS1035_LABEL_FORMAT)
DNS1035_MAX = 63
_DNS1035_ERROR = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                  "alphabetic character, and end with an alphanumeric character")

DNS1123_LABEL_FORMAT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL = re.compile(DNS1123_LABEL_FORMAT)
DNS1123_LABEL_MAX = 63
_DNS1123_LABEL_ERROR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                        "must start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_FORMAT = DNS1123_LABEL_FORMAT + "(\\." + DNS1123_LABEL_FORMAT + ")*"
DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FORMAT)
DNS1123_SUBDOMAIN_MAX = 253
_DNS1123_SUBDOMAIN_ERROR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                            "or '.', and must start and end with an alphanumeric character")

LABEL_KEY_NAME_FORMAT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_KEY_NAME = re.compile(LABEL_KEY_NAME_FORMAT)
LABEL_VALUE_FORMAT = f"({LABEL_KEY_NAME_FORMAT})?"
LABEL_VALUE = re.compile(LABEL_VALUE_FORMAT)
LABEL_MAX = 63
_LABEL_KEY_ERROR = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                    "alphanumeric character")
_LABEL_VALUE_ERROR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                      "and must start and end with an alphanumeric character")


def _go_len(value: str) -> int:
    """len() of the Go string: bytes of UTF-8 (a lone surrogate counts as the three bytes of U+FFFD Go reads)."""
    return len(value.encode("utf-8", "surrogatepass"))


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """RegexError, with its odd spacing between examples (`'my-name',  or 'abc-123'`)."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _grammar_problems(value: str, maximum: int, grammar: re.Pattern[str], wrong: str) -> list[str]:
    """The two checks of every Is* function: the length, then the grammar (`wrong` is its message)."""
    return ([max_len_error(maximum)] if _go_len(value) > maximum else []) + ([] if grammar.fullmatch(value) else [wrong])


def dns1035_label_problems(value: str) -> list[str]:
    """IsDNS1035Label, message for message."""
    return _grammar_problems(value, DNS1035_MAX, DNS1035_LABEL,
                             regex_error(_DNS1035_ERROR, DNS1035_LABEL_FORMAT, "my-name", "abc-123"))


def dns1123_label_problems(value: str) -> list[str]:
    """IsDNS1123Label: namespaces, container names. A subdomain that is no label can only hold dots, and says so."""
    wrong = ("must not contain dots" if DNS1123_SUBDOMAIN.fullmatch(value)
             else regex_error(_DNS1123_LABEL_ERROR, DNS1123_LABEL_FORMAT, "my-name", "123-abc"))
    return _grammar_problems(value, DNS1123_LABEL_MAX, DNS1123_LABEL, wrong)


def dns1123_subdomain_problems(value: str) -> list[str]:
    """IsDNS1123Subdomain: the names of most kinds, and every custom resource's."""
    return _grammar_problems(value, DNS1123_SUBDOMAIN_MAX, DNS1123_SUBDOMAIN,
                             regex_error(_DNS1123_SUBDOMAIN_ERROR, DNS1123_SUBDOMAIN_FORMAT, "example.com"))


def path_segment_problems(value: str) -> list[str]:
    """IsPathSegmentName: what every name must be, whatever its kind, to stand in a URL path and an etcd key."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{part}'" for part in ("/", "%") if part in value]


def label_key_problems(key: str) -> list[str]:
    """IsLabelKey (IsQualifiedName): an optional DNS-1123 subdomain prefix and `/`, then a name of at most 63
    characters; label keys, and annotation keys in lower case."""
    parts = key.split("/")
    if len(parts) > 2:
        return ["a valid label key " + regex_error(_LABEL_KEY_ERROR, LABEL_KEY_NAME_FORMAT, "MyName", "my.name",
                                                   "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    problems = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        problems += (["prefix part must be non-empty"] if not prefix
                     else [f"prefix part {problem}" for problem in dns1123_subdomain_problems(prefix)])
    if not name:
        problems.append("name part must be non-empty")
    elif _go_len(name) > LABEL_MAX:
        problems.append(f"name part {max_len_error(LABEL_MAX)}")
    if not LABEL_KEY_NAME.fullmatch(name):
        problems.append("name part " + regex_error(_LABEL_KEY_ERROR, LABEL_KEY_NAME_FORMAT, "MyName", "my.name",
                                                   "123-abc"))
    return problems


def label_value_problems(value: str) -> list[str]:
    """IsLabelValue: empty, or at most 63 characters of the label name's grammar."""
    return _grammar_problems(value, LABEL_MAX, LABEL_VALUE,
                             regex_error(_LABEL_VALUE_ERROR, LABEL_VALUE_FORMAT, "MyValue", "my_value", "12345"))


PROBE_PERIOD_SECONDS = 10
"""A probe's `periodSeconds` where the pod leaves it out (core/v1 Probe)."""
FIRST_UNPRIVILEGED_PORT = 1024
"""Linux lets a process bind a port below this only with CAP_NET_BIND_SERVICE, which a container run as a user other
than root holds only when added, and never under `capabilities: {drop: [ALL]}` with `allowPrivilegeEscalation: false`
(file capabilities are not granted then)."""
PORT_NAME_MAX = 15
_PORT_NAME_CHARSET = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER = re.compile("[a-z]")


def port_name_problems(value: str) -> list[str]:
    """IsValidPortName (an IANA_SVC_NAME, RFC 6335): a container port's name, message for message."""
    problems = [max_len_error(PORT_NAME_MAX)] if _go_len(value) > PORT_NAME_MAX else []
    if not _PORT_NAME_CHARSET.fullmatch(value):
        problems.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER.search(value):
        problems.append("must contain at least one letter (a-z)")
    if "--" in value:
        problems.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        problems.append("must not begin or end with a hyphen")
    return problems


# The quantity grammar the API server accepts (the OpenAPI pattern of io.k8s...resource.Quantity) ...
QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))?$"
# ... the same grammar as controller-gen writes it into CRDs (the MPIJob's and the PodGroups' own) ...
CONTROLLER_GEN_QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
                                   r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
# ... and the plain subset mpigen's profile schemas accept (no sign, exponent or bare fraction): a reviewer
# reads `16Gi`, never `+.5e3`. schemas/job.schema.json spells the same pattern (a test holds them equal).
PROFILE_QUANTITY_PATTERN = r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$"
_PROFILE_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_SUFFIX: dict[str | None, int | Decimal] = {
    None: 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[InvalidOperation, DivisionByZero, Overflow])
"""Arithmetic on quantities: sums, differences, products, whole-number division (`//`) and division by a power of
two or ten are exact in this context. The default one rounds to 28 digits, and raises where a quotient has more
(a profile's `cpu: "0.0000000000000000000000000000001"` divided a node's CPUs into 10^32 workers). Nothing may divide
otherwise in it: 1/3 would take every digit memory holds."""

_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


def exact(function: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """`function`, computing in the `EXACT` context whoever calls it."""
    @functools.wraps(function)
    def in_exact_context(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        with localcontext(EXACT):
            return function(*args, **kwargs)
    return in_exact_context


@exact
def quantity(text: str) -> Decimal:
    """A profile's quantity as a number, exactly (`500m` -> 0.5, `1Gi` -> 1073741824)."""
    match = _PROFILE_QUANTITY.match(text)
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    return Decimal(match.group(1)) * Decimal(_SUFFIX[match.group(2)])


MAX_COUNT = 2**63 - 1
"""The most of its unit Kubernetes counts of a resource: the scheduler and the kubelet read a quantity as an int64 of
it (resource.Quantity's `Value()` in bytes, `MilliValue()` in millicores), and apimachinery caps a binary-suffixed
quantity at this many (its `maxAllowed`)."""


@dataclass(frozen=True)
class QuantityUnit:
    """What Kubernetes counts a resource in. apimachinery keeps a quantity to 1n and rounds a finer one up; the
    scheduler and the kubelet then count a CPU request in whole millicores and memory in whole bytes, each rounded up
    (resource.Quantity's `MilliValue()`, `Value()`): so `cpu: 0.0001` is scheduled as 1m, and `memory: 0.1Gi` (which is
    107374182.4 bytes) as 107374183."""

    name: str
    per_unit: int
    """How many of it make one unit of the quantity's number (`1` CPU is 1000 millicores)."""
    suffix: str
    """How a count of it is written as a quantity (`250m`)."""


MILLICORES = QuantityUnit("millicores", 1000, "m")
BYTES = QuantityUnit("bytes", 1, "")


@exact
def quantity_problem(text: str, unit: QuantityUnit) -> tuple[str, str] | None:
    """What Kubernetes would change in a profile's quantity, and how to write it so it does not: more than it counts
    (capped, or overflowing its int64), or not a whole count of `unit` (rounded up). None where it keeps the value."""
    count = quantity(text) * unit.per_unit
    if count > MAX_COUNT:
        return f"more than Kubernetes can count (at most {MAX_COUNT}{unit.suffix}: an int64 of {unit.name})", "ask for less"
    if count != count.to_integral_value():
        rounded = f"{count.to_integral_value(rounding=ROUND_CEILING)}{unit.suffix}"
        return (f"not a whole number of {unit.name}: Kubernetes counts it as {rounded}", f"write {rounded}")
    return None


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def json_path(parts: Iterable[str | int], quote_keys: bool = False) -> str:
    """`.spec.mpiReplicaSpecs.Worker.template.spec.containers[0].image`, as kubectl prints paths; '' for the
    root. With `quote_keys`, a key that is no identifier is written `["nvidia.com/gpu"]`, not split at dots."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif quote_keys and not _PLAIN_KEY.match(part):
            text += f"[{json.dumps(part)}]"
        else:
            text += f".{part}"
    return text


# apimachinery ValidateAnnotationsSize: keys and values of an object's annotations together.
TOTAL_ANNOTATION_SIZE = 256 * 1024


def annotations_size(annotations: dict[Any, Any]) -> int:
    """What ValidateAnnotationsSize counts: the bytes of every key and value (those that are strings)."""
    return sum(_go_len(key) + _go_len(value) for key, value in annotations.items()
               if isinstance(key, str) and isinstance(value, str))

ETCD_MAX_REQUEST_BYTES = 1536 * 1024
"""etcd's default `--max-request-bytes`, which most clusters keep: a larger object is refused when the API
server stores it (the API server's own limit, which `check` applies, is 3 MiB)."""
OBJECT_BOUND = ETCD_MAX_REQUEST_BYTES - 64 * 1024
"""What mpigen lets the text it measures of one object come to: the rest (metadata, the labels Helm adds, an owner
reference, managed fields) stays well under 64 KiB."""


# --- how the API server judges an object's name and namespace, by kind --------------------------------------
# Every kind's create validation runs ValidateObjectMeta with the kind's own name function, then (only when that
# passed: the name must also stand in a URL path and an etcd key) once more with IsPathSegmentName
# (apiserver pkg/registry/rest/create.go BeforeCreate @ 008b3652959ca58af8be3fb5b6ecfe9ae7638282). The name
# functions: pkg/apis/core/validation/validation.go (ValidateServiceName = NameIsDNS1035Label, ValidateNamespaceName
# = NameIsDNSLabel; Pod, ConfigMap, Secret, ServiceAccount, PersistentVolume(Claim), Node, ... NameIsDNSSubdomain),
# pkg/apis/rbac/validation/validation.go (ValidateRBACName = IsValidPathSegmentName: `system:controller:x` is a
# Role's name), pkg/apis/batch/validation/validation.go (ValidateCronJobCreate: at most 52 characters, as the
# CronJob's Jobs add 11), the apps, batch, scheduling, networking, storage and policy groups NameIsDNSSubdomain,
# and every custom resource NameIsDNSSubdomain (apiextensions-apiserver pkg/registry/customresource/validator.go).
# A Service name may be a DNS-1123 label from Kubernetes 1.34 on under the alpha RelaxedServiceNameValidation
# gate; off by default, so not here.
RBAC_GROUP = "rbac.authorization.k8s.io"
CRD_GROUP = "apiextensions.k8s.io"
CRD_KIND = "CustomResourceDefinition"
NODE_KIND = "Node"
CRONJOB_NAME_MAX = DNS1035_MAX - 11


def _cronjob_name_problems(name: str) -> list[str]:
    return dns1123_subdomain_problems(name) + ([max_len_error(CRONJOB_NAME_MAX)] if _go_len(name) > CRONJOB_NAME_MAX
                                               else [])


NAME_RULES: dict[tuple[str, str], Callable[[str], list[str]]] = {
    ("", "Namespace"): dns1123_label_problems,
    ("", "Service"): dns1035_label_problems,
    ("batch", "CronJob"): _cronjob_name_problems,
    **{(RBAC_GROUP, kind): path_segment_problems for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
}
"""(API group, kind) -> the problems the API server finds with a name of that kind; other kinds: DNS-1123 subdomain."""

# The cluster-scoped kinds of Kubernetes' own API groups: the API server drops a `metadata.namespace` they are given
# (apiserver pkg/registry/rest EnsureObjectNamespaceMatchesRequestNamespace), so it is not judged. A custom kind's
# scope is its CRD's `spec.scope`, where check has the CRD.
CLUSTER_SCOPED_KINDS = frozenset({
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    (CRD_GROUP, CRD_KIND), ("apiregistration.k8s.io", "APIService"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("certificates.k8s.io", "ClusterTrustBundle"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "IPAddress"), ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"), (RBAC_GROUP, "ClusterRole"), (RBAC_GROUP, "ClusterRoleBinding"),
    ("scheduling.k8s.io", "PriorityClass"), ("storage.k8s.io", "CSIDriver"), ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"), ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"),
})


NODE_STATE_TAINTS = frozenset({
    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure", "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable", "node.kubernetes.io/out-of-service",
    "node.cloudprovider.kubernetes.io/uninitialized", "node.cloudprovider.kubernetes.io/shutdown",
})
"""The taints Kubernetes itself puts on a node for its state (its node controller by condition, `kubectl cordon`,
the cloud provider; kubernetes.io/docs/reference/labels-annotations-taints/): they say the node takes no new pods
for now, not which pods belong there, so no pool declares them."""


KUBERNETES_DOMAIN = "kubernetes.io"


def in_kubernetes_domain(domain: str) -> bool:
    """Whether a resource name's prefix is Kubernetes' own domain (`kubernetes.io` or a subdomain of it): a resource
    there is native, never an extended resource a device plugin offers."""
    return domain == KUBERNETES_DOMAIN or domain.endswith(f".{KUBERNETES_DOMAIN}")


def api_group(api_version: str) -> str:
    """`apps/v1` -> `apps`; the core group (`v1`) is ''."""
    return api_version.rpartition("/")[0]


def mask_trailing_dash(name: str) -> str:
    """apimachinery maskTrailingDash: a `generateName` is judged with its trailing '-' masked, as the random characters
    follow it (its `len(name)-2` drops two characters, an upstream quirk kept so that the same names pass)."""
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def name_problems(api_version: str, kind: str, name: str, prefix: bool = False) -> list[str]:
    """What the API server says of `name` for an object of this kind (nothing: it takes the name). With `prefix`,
    of a `metadata.generateName` (ValidateObjectMeta's name function with prefix=true: a trailing '-' is allowed)."""
    rule = NAME_RULES.get((api_group(api_version), kind), dns1123_subdomain_problems)
    if prefix:
        return rule(mask_trailing_dash(name)) if rule is not path_segment_problems else rule(name)
    return rule(name) or path_segment_problems(name)


_WHOLE_QUANTITY = re.compile(r"^([0-9]+)(|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)$")
_WHOLE_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
                 "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def whole_quantity(value: Any) -> int | None:
    """A whole-number resource quantity (extended resources are counted in units), or None when not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        match = _WHOLE_QUANTITY.match(value.strip())
        if match:
            return int(match.group(1)) * _WHOLE_SUFFIX[match.group(2)]
    return None
