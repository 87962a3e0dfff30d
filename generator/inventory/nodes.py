"""Nodes as `kubectl get nodes -o yaml` exports them: their labels, taints and the resources they advertise.

Read without raising: an export may be partial or edited by hand, and a field that cannot be read is simply not
there (the node advertises nothing under a malformed `allocatable`), so import, check and plan all see one node the
same way. The matching rules are Kubernetes' own: a nodeSelector is every label equal; a toleration tolerates a taint
when its key matches (or it has none and `Exists`), its value matches (`Equal`, the default) or is not compared
(`Exists`), and its effect matches or is empty. A cordoned node (`spec.unschedulable`) or one whose Ready condition
is not True takes no new pods, and the taints Kubernetes puts on it for that state are kept apart from those that
say which pods belong there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mpigen.model.cluster import Taint
from mpigen.vocabulary.gpu_feature_discovery import (
    GPU_PRODUCT_LABEL,
    GPU_REPLICAS_LABEL,
    MIG_PRODUCT_INFIX,
    MIG_RESOURCE_PREFIX,
    MIG_STRATEGY_LABEL,
)
from mpigen.vocabulary.kubernetes import NODE_KIND, NODE_STATE_TAINTS, whole_quantity


@dataclass(frozen=True)
class LiveNode:
    """One exported Node: what pods are scheduled by (labels, taints) and what it offers (allocatable, else capacity,
    as the scheduler counts)."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    allocatable: Mapping[str, str] = field(default_factory=dict)
    capacity: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    """The file the node was exported in."""
    cordoned: bool = False
    """`spec.unschedulable`: `kubectl cordon` keeps new pods off it."""
    ready: bool = True
    """Its Ready condition is True (or the export has none: nothing says otherwise)."""

    @property
    def state(self) -> str:
        """Why the node takes no new pods for now (`cordoned`, `not ready`, a taint of its state such as disk
        pressure), or "" where it takes them."""
        if self.cordoned or not self.ready:
            return "cordoned" if self.cordoned else "not ready"
        held = [taint.key for taint in self.taints if taint.key in NODE_STATE_TAINTS and taint.effect != "PreferNoSchedule"]
        return f"tainted {held[0]}" if held else ""

    @property
    def gpus_partitioned(self) -> str:
        """How GPU Feature Discovery says the node's GPUs are cut up (`MIG: nvidia.com/mig.strategy=single`,
        `shared: nvidia.com/gpu.replicas=4`), or "": where they are, what it offers are slices, not whole GPUs. A
        MIG strategy set cluster-wide says nothing of a node whose GPUs have MIG off: its product label (`single`)
        or its resources (`mixed`) say whether they are cut."""
        strategy = self.labels.get(MIG_STRATEGY_LABEL)
        sliced = MIG_PRODUCT_INFIX in self.labels.get(GPU_PRODUCT_LABEL, "") if strategy == "single" else \
            strategy == "mixed" and any(name.startswith(MIG_RESOURCE_PREFIX) for name in (*self.allocatable, *self.capacity))
        if sliced:
            return f"MIG: {MIG_STRATEGY_LABEL}={strategy}"
        replicas = whole_quantity(self.labels.get(GPU_REPLICAS_LABEL))
        return f"shared: {GPU_REPLICAS_LABEL}={replicas}" if replicas is not None and replicas > 1 else ""

    @property
    def placement_taints(self) -> tuple[Taint, ...]:
        """The taints that say which pods belong on the node: all but those Kubernetes puts on it for its state,
        which no pool declares (a cordoned or failing node is down for now, not another pool's)."""
        return tuple(taint for taint in self.taints if taint.key not in NODE_STATE_TAINTS)

    def offers(self, resource: str) -> int | None:
        """How many of an extended resource the scheduler may hand out here (allocatable; capacity where an export
        has no allocatable); None where the node does not advertise it as a whole number."""
        raw = self.allocatable.get(resource, self.capacity.get(resource) if not self.allocatable else None)
        return whole_quantity(raw) if raw is not None else None


def _strings(value: Any) -> dict[str, str]:
    """A mapping of strings (labels, resource lists); other entries, and a non-mapping, are not read."""
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(k, str) and isinstance(v, (str, int, float))
            and not isinstance(v, bool)}


def _taints(value: Any) -> tuple[Taint, ...]:
    taints = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str) and isinstance(item.get("effect"), str):
            raw = item.get("value")
            taints.append(Taint(item["key"], item["effect"], raw if isinstance(raw, str) and raw else None))
    return tuple(taints)


def read_node(obj: Mapping[str, Any], source: str = "") -> LiveNode | None:
    """The node an exported object is, or None when it is not a Node with a name."""
    if obj.get("kind") != NODE_KIND:
        return None
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name:
        return None
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    assert isinstance(metadata, dict) and isinstance(spec, dict) and isinstance(status, dict)
    return LiveNode(name, _strings(metadata.get("labels")), _taints(spec.get("taints")),
                    _strings(status.get("allocatable")), _strings(status.get("capacity")), source,
                    cordoned=spec.get("unschedulable") is True, ready=_ready(status.get("conditions")))


def _ready(conditions: Any) -> bool:
    """False where the node's Ready condition is there and not True (False: the kubelet is unhealthy; Unknown: the
    node stopped reporting)."""
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return True


def selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Whether a nodeSelector picks a node with these labels: every key present with an equal value."""
    return all(labels.get(key) == value for key, value in selector.items())


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """Kubernetes' ToleratesTaint: key (or an empty key with Exists, which tolerates every key), operator and value,
    and effect (empty tolerates every effect)."""
    key, operator = toleration.get("key") or "", toleration.get("operator") or "Equal"
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    if key and key != taint.key:
        return False
    if operator == "Exists":
        return True
    if not key:
        return False
    return operator == "Equal" and (toleration.get("value") or None) == taint.value


def untolerated(tolerations: Iterable[Mapping[str, Any]], taints: Iterable[Taint]) -> list[Taint]:
    """The taints that keep a pod with these tolerations off a node: NoSchedule and NoExecute ones none tolerates
    (PreferNoSchedule only makes the scheduler prefer other nodes)."""
    given = [t for t in tolerations if isinstance(t, Mapping)]
    return [taint for taint in taints if taint.effect != "PreferNoSchedule"
            and not any(tolerates(toleration, taint) for toleration in given)]
