"""Every CEL rule of the CRD schemas mpigen ships (the kinds it emits), judged through the real rule at its real schema
node: a value that passes and one that fails (a transition rule: against an old value). A rule added upstream has no
case here and fails the guard test."""

from __future__ import annotations

from typing import Any

import pytest

from mpigen.check.cel.rules import judge_object
from mpigen.check.cel.tree import CrdRule, RuleNode, rule_tree, walk
from mpigen.check.crdschema import unwrap_nullable
from mpigen.check.schemas import own_schemas

RG_BORROWING = {"coveredResources": ["cpu"],
                "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1, "borrowingLimit": 1}]}]}
SECRET_REF = {"name": "kubeconfig", "key": "value"}
CONFIG_MAP_REF = {"name": "kubeconfig", "key": "value"}
HOST = "kubernetes.io/hostname"
IMMUTABLE = "self == oldSelf"

# (kind, place, rule text) -> (passing value, failing value), each the value at the rule's node; transition rules:
# (old value, passing new value, failing new value). `self == oldSelf` rules are made from the node's schema.
CASES: dict[tuple[str, str, str], tuple[Any, ...]] = {
    ("ClusterQueue", ".spec", "!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
     "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true"):
        ({"cohort": "all", "resourceGroups": [RG_BORROWING]}, {"resourceGroups": [RG_BORROWING]}),
    ("ClusterQueue", ".spec", "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
     "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true"):
        ({"cohortName": "all", "resourceGroups": [RG_BORROWING]}, {"resourceGroups": [RG_BORROWING]}),
    ("ClusterQueue", ".spec.flavorFungibility", "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && "
     "self.whenCanPreempt == 'TryNextFlavor')"):
        ({"preference": "BorrowingOverPreemption", "whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"},
         {"preference": "BorrowingOverPreemption", "whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}),
    ("ClusterQueue", ".spec.preemption", "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  "
     "self.borrowWithinCohort.policy != 'Never')"):
        ({"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "Never"}},
         {"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "LowerPriority"}}),
    ("ClusterQueue", ".spec.resourceGroups[*]", "self.flavors.all(x, size(x.resources) == size(self.coveredResources))"):
        (RG_BORROWING, {**RG_BORROWING, "coveredResources": ["cpu", "memory"]}),
    ("GitRepository", ".spec", "!has(self.serviceAccountName) || (has(self.provider) && (self.provider == 'azure' || "
     "self.provider == 'aws'))"):
        ({"serviceAccountName": "sa", "provider": "aws"}, {"serviceAccountName": "sa", "provider": "generic"}),
    ("HelmRelease", ".spec", "(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))"):
        ({"chartRef": {"kind": "OCIRepository", "name": "x"}}, {}),
    ("HelmRelease", ".spec.install.strategy", "!has(self.retryInterval) || self.name != 'RemediateOnFailure'"):
        ({"name": "RemediateOnFailure"}, {"name": "RemediateOnFailure", "retryInterval": "5m"}),
    ("HelmRelease", ".spec.upgrade.strategy", "!has(self.retryInterval) || self.name == 'RetryOnFailure'"):
        ({"name": "RetryOnFailure", "retryInterval": "5m"}, {"name": "RemediateOnFailure", "retryInterval": "5m"}),
    ("ResourceFlavor", ".spec", "!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == "
     "oldSelf.topologyName)"):
        ({"topologyName": "t", "nodeLabels": {"a": "b"}}, {"topologyName": "t", "nodeLabels": {"a": "c"}},
         {"topologyName": "u", "nodeLabels": {"a": "b"}}),
    ("ResourceFlavor", ".spec", "!has(oldSelf.topologyName) || self == oldSelf"):
        ({"topologyName": "t", "nodeLabels": {"a": "b"}}, {"topologyName": "t", "nodeLabels": {"a": "b"}},
         {"topologyName": "t", "nodeLabels": {"a": "c"}}),
    ("ResourceFlavor", ".spec", "!has(self.topologyName) || self.nodeLabels.size() >= 1"):
        ({"topologyName": "t", "nodeLabels": {"a": "b"}}, {"topologyName": "t", "nodeLabels": {}}),
    ("ResourceFlavor", ".spec.nodeTaints", "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])"):
        ([{"key": "k", "effect": "NoSchedule"}], [{"key": "k", "effect": "Sometimes"}]),
    ("ResourceFlavor", ".spec.tolerations", "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', "
     "'PreferNoSchedule', 'NoExecute'])"):
        ([{"key": "k", "effect": "NoExecute"}], [{"key": "k", "effect": "Sometimes"}]),
    ("ResourceFlavor", ".spec.tolerations", "self.all(x, !has(x.key) ? x.operator == 'Exists' : true)"):
        ([{"operator": "Exists"}], [{"operator": "Equal"}]),
    ("ResourceFlavor", ".spec.tolerations", "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])"):
        ([{"key": "k", "operator": "Equal", "value": "v"}], [{"key": "k", "operator": "In"}]),
    ("ResourceFlavor", ".spec.tolerations", "self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) : "
     "true)"):
        ([{"key": "k", "operator": "Exists"}], [{"key": "k", "operator": "Exists", "value": "v"}]),
    ("ResourceFlavor", ".spec.tolerations", "self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)"):
        ([{"key": "k", "effect": "NoExecute", "tolerationSeconds": 5}],
         [{"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5}]),
    ("Topology", ".spec.levels", "self == oldSelf || (self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname' && "
     "oldSelf[size(oldSelf) - 1].nodeLabel == 'kubernetes.io/hostname')"):
        ([{"nodeLabel": "rack"}, {"nodeLabel": HOST}], [{"nodeLabel": "block"}, {"nodeLabel": HOST}],
         [{"nodeLabel": "block"}]),
    ("Topology", ".spec.levels", "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 || "
     "self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'"):
        ([{"nodeLabel": "rack"}, {"nodeLabel": HOST}], [{"nodeLabel": HOST}, {"nodeLabel": "rack"}]),
    # KAI Scheduler's Topology (kai.scheduler/v1alpha1); its hostname-lowest rule is Kueue's, word for word, above.
    ("Topology", ".spec.levels", "self.map(l, l.nodeLabel) == oldSelf.map(l, l.nodeLabel)"):
        ([{"nodeLabel": "rack"}, {"nodeLabel": HOST}], [{"nodeLabel": "rack", "alias": "r"}, {"nodeLabel": HOST}],
         [{"nodeLabel": "block"}, {"nodeLabel": HOST}]),
    ("Topology", ".spec.levels", "size(self.filter(i, size(self.filter(j, j.nodeLabel == i.nodeLabel)) > 1)) == 0"):
        ([{"nodeLabel": "rack", "alias": "r"}, {"nodeLabel": HOST, "alias": "r"}],
         [{"nodeLabel": "rack", "alias": "a"}, {"nodeLabel": "rack", "alias": "b"}]),
    ("Topology", ".spec.levels", "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0"):
        ([{"nodeLabel": "rack"}, {"nodeLabel": HOST}], [{"nodeLabel": "rack"}, {"nodeLabel": "rack"}]),
    ("TrainJob", "", "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')"):
        ({"metadata": {"name": "job-a"}}, {"metadata": {"name": "Job_A"}}),
    ("TrainJob", "", "size(self.metadata.name) <= 63"):
        ({"metadata": {"name": "a" * 63}}, {"metadata": {"name": "a" * 64}}),
    ("TrainJob", ".spec.initializer.dataset.storageUri", "self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')"):
        ("hf://datasets/x", "datasets/x"),
    ("TrainJob", ".spec.initializer.model.storageUri", "self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')"):
        ("", "s3:/bucket"),
    ("TrainJob", ".spec.managedBy", "self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue']"):
        ("kueue.x-k8s.io/multikueue", "example.com/mine"),
    ("TrainJob", ".spec.trainer.numProcPerNode", "self >= 1"): (1, 0),
    ("TrainJob", ".status.trainerStatus", "has(self.lastUpdatedTime)"):
        ({"lastUpdatedTime": "2025-01-01T00:00:00Z"}, {}),
    ("TrainingRuntime", ".spec.mlPolicy", "[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),"
     "has(self.flux)].filter(x, x).size() <= 1"):
        ({"mpi": {}}, {"mpi": {}, "torch": {}}),
    ("TrainingRuntime", ".spec.mlPolicy.flux.numProcPerNode", "self >= 1"): (2, 0),
    ("TrainingRuntime", ".spec.mlPolicy.mpi.numProcPerNode", "self >= 1"): (8, -1),
    ("TrainingRuntime", ".spec.mlPolicy.torch.envInjection.targets[*].containerNames", "!self.exists(c, c == 'node')"):
        (["sidecar"], ["sidecar", "node"]),
    ("TrainingRuntime", ".spec.template.spec", "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == "
     "'InOrder' && self.replicatedJobs.exists(x, has(x.dependsOn)))"):
        ({"startupPolicy": {"startupPolicyOrder": "InOrder"}, "replicatedJobs": [{"name": "a"}, {"name": "b"}]},
         {"startupPolicy": {"startupPolicyOrder": "InOrder"},
          "replicatedJobs": [{"name": "a"}, {"name": "b", "dependsOn": [{"name": "a", "status": "Ready"}]}]}),
    ("TrainingRuntime", ".spec.template.spec.volumeClaimPolicies[*]", "self.templates.all(t, "
     "!has(t.metadata.namespace) || size(t.metadata.namespace) == 0)"):
        ({"templates": [{"metadata": {"name": "data"}}]}, {"templates": [{"metadata": {"name": "d", "namespace": "x"}}]}),
}
for _rule in ("has(self.configMapRef) || has(self.secretRef)", "!has(self.configMapRef) || !has(self.secretRef)"):
    _failing = {} if _rule.startswith("has") else {"configMapRef": CONFIG_MAP_REF, "secretRef": SECRET_REF}
    for _kind in ("HelmRelease", "Kustomization"):
        CASES[(_kind, ".spec.kubeConfig", _rule)] = ({"secretRef": SECRET_REF}, _failing)


def _shipped_rules() -> dict[tuple[str, str, str], list[tuple[RuleNode, CrdRule]]]:
    """(kind, place, rule text) -> each (node, rule) it is in, over every shipped schema (versions share rules)."""
    found: dict[tuple[str, str, str], list[tuple[RuleNode, CrdRule]]] = {}
    for (_, kind), schema in sorted(own_schemas().items()):
        tree = rule_tree(schema)
        if tree is None:
            continue
        for place, rule, _ in walk(tree):
            found.setdefault((kind, place, rule.text), []).append((_node(tree, place), rule))
    return found


def _node(tree: RuleNode, place: str) -> RuleNode:
    """The tree's node at `.a.b[*].c`."""
    for part in place.replace("[*]", ".[*]").split(".")[1:]:
        if part == "[*]":
            assert tree.items is not None
            tree = tree.items
        else:
            tree = dict(tree.properties)[part]
    return tree


SHIPPED = _shipped_rules()


def _differing(schema: Any) -> tuple[Any, Any]:
    """Two different values the schema takes (for `self == oldSelf`)."""
    node = unwrap_nullable(schema)[1]
    types = node.get("type")
    kind = types if isinstance(types, str) else next((t for t in types or () if t != "null"), "object")
    if "enum" in node and len(node["enum"]) > 1:
        return node["enum"][0], node["enum"][1]
    if kind == "array":
        first, second = _differing(node.get("items") or {"type": "string"})
        return [first], [second]
    if kind == "object":
        name, sub = sorted((node.get("properties") or {"x": {"type": "string"}}).items())[0]
        first, second = _differing(sub)
        return {name: first}, {name: second}
    return {"integer": (1, 2), "number": (1.5, 2.5), "boolean": (True, False)}.get(kind, ("a", "b"))


def _judge(node: RuleNode, rule: CrdRule, value: Any, old: Any, root: bool) -> list[str]:
    lone = RuleNode(node.schema, (rule,))
    return [f.message for f in judge_object(lone, value, old, old is not None, root=root).failures]


def test_every_shipped_rule_has_a_case():
    """A rule upstream adds (or changes) to a kind mpigen emits must get a case here."""
    immutable = {key for key in SHIPPED if key[2] == IMMUTABLE}
    assert set(SHIPPED) - immutable == set(CASES), (set(SHIPPED) - immutable) ^ set(CASES)


@pytest.mark.parametrize("key", sorted(SHIPPED), ids=lambda key: f"{key[0]}{key[1]}:{key[2][:40]}")
def test_rule_passes_the_good_value_and_fails_the_bad(key):
    _, place, text = key
    for node, rule in SHIPPED[key]:
        if text == IMMUTABLE:
            first, second = _differing(node.schema)
            case: tuple[Any, ...] = (first, first, second)
        else:
            case = CASES[key]
        old = case[0] if len(case) == 3 else None
        good, bad = case[-2:]
        assert _judge(node, rule, good, old, not place) == []
        failures = _judge(node, rule, bad, old, not place)
        assert len(failures) == 1 and failures[0].endswith(rule.label), failures
        if rule.transition:  # without the old value the server does not evaluate it
            assert _judge(node, rule, bad, None, not place) == []
