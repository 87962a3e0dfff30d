"""Kubernetes' own grammars, as k8s.io/apimachinery defines them: DNS-1035 labels, quantities, field paths.

Sources: apimachinery pkg/util/validation/validation.go (IsDNS1035Label and its messages),
pkg/api/resource/quantity.go (the quantity grammar) and the JSON paths kubectl and the API server print.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from decimal import Decimal

DNS1035_LABEL_FORMAT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL = re.compile(f"^{DNS1035_LABEL_FORMAT}$")
DNS1035_MAX = 63
_DNS1035_ERROR = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                  "alphabetic character, and end with an alphanumeric character")


def dns1035_label_problems(value: str) -> list[str]:
    """IsDNS1035Label, message for message."""
    problems = []
    if len(value) > DNS1035_MAX:
        problems.append(f"must be no more than {DNS1035_MAX} characters")
    if not DNS1035_LABEL.match(value):
        problems.append(f"{_DNS1035_ERROR} (e.g. 'my-name',  or 'abc-123', regex used for validation is "
                        f"'{DNS1035_LABEL_FORMAT}')")
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
_SUFFIX = {None: 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
           "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity(text: str) -> Decimal:
    """A profile's quantity as a number (`500m` -> 0.5, `1Gi` -> 1073741824)."""
    match = _PROFILE_QUANTITY.match(text)
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    return Decimal(match.group(1)) * Decimal(_SUFFIX[match.group(2)])


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

