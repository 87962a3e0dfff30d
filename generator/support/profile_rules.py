"""The rules of `mpigen validate`: each diagnostic's kind, named by the check that raises it (given where the check
is called, with `with_rule` or `raises`), so code scanning and CI reports can list, filter and track them. A rule is
a stable id: messages may be reworded, the rule stays."""

from __future__ import annotations

FILES = "files"
YAML = "yaml"
EXTENDS = "extends"
SCHEMA = "schema"
"""Schema findings are `schema/<keyword>`, by the JSON Schema keyword that failed (`schema_rule`)."""
SCHEMA_QUANTITY = f"{SCHEMA}/quantity"
CHARACTERS = "characters"
SECRETS = "secrets"
SECURITY = "security"
DUPLICATES = "duplicates"
REFERENCES = "references"
NAMES = "names"
HARDWARE = "hardware"
CLUSTER = "cluster"
NETWORK = "network"
FACTS = "facts"
GITOPS = "gitops"
SCHEDULING = "scheduling"
JOB = "job"
BACKEND = "backend"
SIZING = "sizing"
TOPOLOGY = "topology"
VOLUMES = "volumes"
CHART_LIMITS = "chart-limits"
POD_SECURITY = "pod-security"
ACCEPTANCE = "acceptance"

DESCRIPTIONS = {
    FILES: "Every profiles path can be read: files and folders, not links that leave them or lead nowhere.",
    YAML: "Each profile is one YAML mapping, within mpigen's size and nesting limits.",
    EXTENDS: "A hardware profile's `extends` names a hardware profile, without a cycle.",
    SCHEMA_QUANTITY: "A quantity (CPUs, memory) is one Kubernetes keeps as written.",
    CHARACTERS: "No profile string holds a character no manifest may carry.",
    SECRETS: "No secret is written into a profile: it would be committed to git, and to the charts.",
    SECURITY: "What a job asks of the node (privileged workers, host folders) comes with a reason.",
    DUPLICATES: "Names and list entries are given once.",
    REFERENCES: "Every cluster, pool, namespace, rail and hardware a profile names exists.",
    NAMES: "Names, label keys and release names are what Kubernetes and Helm take.",
    HARDWARE: "A hardware profile holds together: unique NICs and HCA ports, GPU indexes that exist.",
    CLUSTER: "A cluster profile holds together: its namespaces, pools, hardware and rails.",
    NETWORK: "The cluster's network provider gets what it needs of its rails, and the rails' ranges do not overlap.",
    FACTS: "The hardware facts a cluster or job relies on are given.",
    GITOPS: "GitOps settings fit the tool that reads them, and no two objects take one name.",
    SCHEDULING: "Gang scheduling holds together: every job's queue exists and can admit it.",
    JOB: "A job profile holds together: its size and command given once, its memory within its nodes'.",
    BACKEND: "The job's backend is there and can do what the job asks.",
    SIZING: "A job's workers, CPUs and GPUs fit its node pool, and its names and hostfile fit their limits.",
    TOPOLOGY: "Rank placement and rails fit the GPU-NIC topology of the job's nodes.",
    VOLUMES: "A job's volumes have one source each, and names and mount paths mpigen and mpi-operator leave free.",
    CHART_LIMITS: "Each chart stays within what Helm loads and a cluster stores.",
    POD_SECURITY: "Each namespace's Pod Security level is what its jobs need.",
    ACCEPTANCE: "A cluster's fabric acceptance jobs have an image, a namespace of the cluster, a pool to prove and "
                "names no job of the cluster takes; each holds together as a job profile would.",
}
"""What each rule holds, for the rule list of a SARIF log."""


def schema_rule(keyword: str) -> str:
    """The rule of a schema finding: `schema/<keyword>` (`schema/required`, `schema/additionalProperties`)."""
    return f"{SCHEMA}/{keyword}"


def describe(rule: str) -> str:
    if rule in DESCRIPTIONS:
        return DESCRIPTIONS[rule]
    if rule.startswith(f"{SCHEMA}/"):
        return f"The profile is valid against its kind's schema (JSON Schema keyword `{rule[len(SCHEMA) + 1:]}`)."
    return f"mpigen validate rule {rule}"
