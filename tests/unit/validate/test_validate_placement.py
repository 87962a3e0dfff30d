"""generator/validate/cluster.py and scheduling.py: node pools' taints and the cluster's `launcherPool`, on broken
copies of the example fleet, with each message and the `path:line:col` it points at.

Facts followed: the API server refuses a Node with two taints of the same key and effect (ValidateNodeTaints); a
node selector of no labels selects every node; Kueue admits a job's pod sets only on flavors of its ClusterQueue
whose node labels agree with each pod set's node selector, and counts the launcher against the quota of the flavor
it admits it on.
"""

from __future__ import annotations

import pytest
from conftest import PROFILES, expect

from mpigen.vocabulary.reserved import RESERVED_KEY_DOMAINS, reserved_key_domain

DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
DGX_POD = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
LAB = "clusters/dgx-lab.yaml"
POD = "clusters/dgx-pod.yaml"
CPU_POOL = "  - name: cpu\n    hardware: cpu-node\n    nodes: 8\n"
DGX_POD_POOL = "  - name: dgx\n    hardware: dgx-1\n    nodes: 8\n"
assert CPU_POOL in DGX_LAB and DGX_POD_POOL in DGX_POD
LAB_END = len(DGX_LAB.splitlines()) + 1


def test_a_launcher_pool_the_cluster_does_not_have_is_refused(diagnose):
    outcome = diagnose({LAB: DGX_LAB + "launcherPool: cpus\n"})
    expect(outcome, (LAB, LAB_END, 15, "`launcherPool` names node pool 'cpus', which the cluster does not have",
                     "did you mean 'cpu'"))


def test_a_launcher_pool_without_node_labels_is_refused(diagnose):
    """Its node labels are the launchers' selector: a pool of none would let them run on any node."""
    bare = "apiVersion: mpigen/v1alpha1\nkind: Hardware\nname: bare\ncpu: {sockets: 1}\nmemoryGiB: 64\n"
    cluster = DGX_LAB.replace(CPU_POOL, CPU_POOL + "  - name: small\n    hardware: bare\n    nodes: 2\n")
    outcome = diagnose({LAB: cluster + "launcherPool: small\n", "hardware/bare.yaml": bare})
    expect(outcome, (LAB, LAB_END + 3, 15, "pool 'small' has no node labels, so the launchers would get no node "
                     "selector", "give pool 'small' `nodeLabels`"))


def test_a_taint_twice_is_refused(diagnose):
    taints = ("    taints:\n      - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
              "      - {key: nvidia.com/gpu, value: other, effect: NoSchedule}\n")
    outcome = diagnose({LAB: DGX_LAB.replace(CPU_POOL, CPU_POOL + taints)})
    expect(outcome, (LAB, 21, 9, "taint 'nvidia.com/gpu:NoSchedule' appears twice", "the first is at line 20"))


def test_a_taint_needs_a_known_effect(diagnose):
    outcome = diagnose({LAB: DGX_LAB.replace(CPU_POOL, CPU_POOL + "    taints: [{key: gpu, effect: NoSchedul}]\n")})
    assert any("NoSchedul" in line and "NoSchedule" in line for line in outcome.shown()), outcome.shown()


def test_under_kueue_the_launcher_pool_must_be_in_the_jobs_queue(diagnose):
    """A launcher selecting the cpu pool fits no flavor of a queue covering dgx only: Kueue never admits the job."""
    cluster = DGX_POD.replace(DGX_POD_POOL, DGX_POD_POOL + "  - name: cpu\n    hardware: cpu-node\n    nodes: 2\n")
    outcome = diagnose({POD: cluster + "launcherPool: cpu\n"})
    expect(outcome,
           # The cluster's acceptance jobs (line 72: `acceptance:`, in team-vision) have their launchers there too.
           (POD, 72, 1, "queue 'vision' does not cover pool 'cpu', the cluster's `launcherPool`",
            "add 'cpu' to the queue's `nodes`"),
           ("jobs/language-bert.yaml", 10, 12, "queue 'language' does not cover pool 'cpu', the cluster's "
            "`launcherPool`", "add 'cpu' to the queue's `nodes`"),
           ("jobs/vision-resnet50.yaml", 9, 12, "queue 'vision' does not cover pool 'cpu', the cluster's "
            "`launcherPool`", "add 'cpu' to the queue's `nodes`"))


def test_under_kueue_the_launcher_counts_against_its_own_pools_quota(diagnose):
    """The launcher is admitted on the cpu flavor, where the vision queue can ever hold 256 CPUs (one cpu-node of its
    own, one it may borrow from the language queue of its cohort)."""
    cluster = DGX_POD.replace(DGX_POD_POOL, DGX_POD_POOL + "  - name: cpu\n    hardware: cpu-node\n    nodes: 2\n")
    cluster = cluster.replace("      nodes: {dgx: 4}\n", "      nodes: {dgx: 4, cpu: 1}\n")
    vision = (PROFILES / "jobs" / "vision-resnet50.yaml").read_text(encoding="utf-8")
    outcome = diagnose({POD: cluster + "launcherPool: cpu\n",
                        "jobs/vision-resnet50.yaml": vision + "launcher: {resources: {cpu: \"300\"}}\n"})
    expect(outcome, ("jobs/vision-resnet50.yaml", 11, 12, "the job's launcher (300 cpu) does not fit "
                     "what queue 'vision' can ever hold on pool 'cpu', the cluster's `launcherPool`"))


RESNET = (PROFILES / "jobs" / "resnet50-dgx.yaml").read_text(encoding="utf-8")
RESNET_END = len(RESNET.splitlines()) + 1


def test_labels_and_annotations_of_mpigens_or_the_controllers_domains_are_refused(diagnose):
    """mpi-operator selects a job's pods by `training.kubeflow.org/*`, Kueue admits by `kueue.x-k8s.io/queue-name`,
    the chart's selectors are `app.kubernetes.io/*`, and Kubernetes reserves `kubernetes.io` and `k8s.io`."""
    added = ("labels: {app.kubernetes.io/name: x, training.kubeflow.org/job-role: worker, team: vision}\n"
             "annotations: {kueue.x-k8s.io/queue-name: q, mpigen/privileged-reason: none, example.com/ok: '{{ x }}'}\n")
    outcome = diagnose({"jobs/resnet50-dgx.yaml": RESNET + added})
    job = "jobs/resnet50-dgx.yaml"
    expect(outcome,
           (job, RESNET_END, 10, "label key 'app.kubernetes.io/name' is in domain kubernetes.io",
            "use a domain of your own, e.g. example.com/name"),
           (job, RESNET_END, 37, "label key 'training.kubeflow.org/job-role' is in domain kubeflow.org"),
           (job, RESNET_END + 1, 15, "annotation key 'kueue.x-k8s.io/queue-name' is in domain x-k8s.io"),
           (job, RESNET_END + 1, 45, "annotation key 'mpigen/privileged-reason' is in domain mpigen"))


def test_multus_default_network_annotation_is_refused_with_why(diagnose):
    """The second red team's case: the annotation reached the MPIJob and both pod templates, and Multus replaced
    every pod's cluster network with kube-system's host bridge."""
    outcome = diagnose({"jobs/resnet50-dgx.yaml": RESNET + "annotations:\n"
                        "  v1.multus-cni.io/default-network: kube-system/host-bridge\n"})
    expect(outcome, ("jobs/resnet50-dgx.yaml", RESNET_END + 1, 3,
                     "annotation key 'v1.multus-cni.io/default-network' is in domain multus-cni.io, which a job may not "
                     "use: Multus replaces a pod's cluster network with the attachment "
                     "`v1.multus-cni.io/default-network` names, which it finds in its own namespace (kube-system) unless "
                     "the value names another, whatever its namespace isolation says",
                     "use a domain of your own, e.g. example.com/default-network"))


# Every reserved domain, written out (generator/vocabulary/reserved.py lists them with their reasons).
RESERVED_DOMAINS = ("kubernetes.io", "k8s.io", "x-k8s.io", "kubeflow.org", "volcano.sh", "helm.sh", "argoproj.io",
                    "fluxcd.io", "cncf.io", "multus-cni.io", "openshift.io", "nvidia.com", "kai.scheduler", "runai",
                    "projectcalico.org", "cilium.io", "ovn.kubernetes.io", "k8s.ovn.org", "antrea.io", "spidernet.io",
                    "mpigen")


@pytest.mark.parametrize("domain", RESERVED_DOMAINS)
def test_every_reserved_domain_and_its_subdomains_are_refused_with_its_reason(diagnose, domain):
    """As a label key and, under a subdomain, as an annotation key; a domain of one's own that merely ends like it
    (`my-<domain>`, or `<domain>.example` where that is a subdomain of a reserved domain too) passes."""
    own = f"my-{domain}" if reserved_key_domain(f"my-{domain}/b") is None else f"{domain}.example"
    added = f"labels: {{{domain}/a: x, {own}/b: y}}\nannotations: {{v2.{domain}/c: z, team: t}}\n"
    outcome = diagnose({"jobs/resnet50-dgx.yaml": RESNET + added})
    reason = RESERVED_KEY_DOMAINS[domain]
    expect(outcome,
           ("jobs/resnet50-dgx.yaml", RESNET_END, 10,
            f"label key '{domain}/a' is in domain {domain}, which a job may not use: {reason}", "example.com/a"),
           ("jobs/resnet50-dgx.yaml", RESNET_END + 1, 15,
            f"annotation key 'v2.{domain}/c' is in domain {domain}, which a job may not use: {reason}",
            "example.com/c"))


def test_a_label_value_kubernetes_would_refuse_is_refused(diagnose):
    """A label value is at most 63 characters, alphanumeric at both ends (IsValidLabelValue): `{{` never is one."""
    outcome = diagnose({"jobs/resnet50-dgx.yaml": RESNET + f"labels: {{team: '{'a' * 64}', run: '{{{{ x }}}}'}}\n"})
    assert len(outcome.diagnostics) == 2 and all("jobs/resnet50-dgx.yaml" in line for line in outcome.shown()), \
        outcome.shown()


def test_an_unknown_pull_policy_is_refused(diagnose):
    outcome = diagnose({"jobs/resnet50-dgx.yaml": RESNET + "imagePullPolicy: Sometimes\n"})
    assert len(outcome.diagnostics) == 1 and "IfNotPresent" in outcome.shown()[0], outcome.shown()


# --- pod priority without a gang scheduler ----------------------------------------------------------------------

PRIORITY = "scheduling:\n  scheduler: none\n  priorityClasses: [{name: batch-high, value: 1000}]\n"


def test_a_priority_class_the_cluster_does_not_declare_is_refused(diagnose):
    """A pod naming a PriorityClass that does not exist is refused by the Priority admission plugin."""
    outcome = diagnose({LAB: DGX_LAB + PRIORITY,
                        "jobs/resnet50-dgx.yaml": RESNET + "scheduling: {priorityClass: batch-hgih}\n"})
    expect(outcome, ("jobs/resnet50-dgx.yaml", RESNET_END, 29, "cluster 'dgx-lab' declares no priority class "
                     "'batch-hgih'", "did you mean 'batch-high'"))


def test_without_a_gang_scheduler_only_the_priority_class_is_read(diagnose):
    outcome = diagnose({LAB: DGX_LAB + PRIORITY,
                        "jobs/resnet50-dgx.yaml": RESNET + "scheduling: {priorityClass: batch-high, queue: q}\n"})
    expect(outcome, ("jobs/resnet50-dgx.yaml", RESNET_END, 41, "`scheduling.queue` has no effect with cluster "
                     "'dgx-lab''s scheduler `none`"))
