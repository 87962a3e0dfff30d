"""generator/validate/scheduling.py: every gang-scheduling rule, on a broken copy of the example fleet, with its
message and the `path:line:col` it points at.

The example fleet has one cluster per scheduler: dgx-pod (kueue: 8 DGX-1 nodes, queues vision and language of
4 nodes each in cohort dgx-pod, language may borrow 2 more), volcano-lab (volcano: 6 DGX-1 nodes, queues
training of 4 and experiments of 2) and cpu-lab (coscheduling). Line numbers are those of the example files
(`cat -n profiles/clusters/dgx-pod.yaml`), pinned by the asserts below so that an edit of them fails here first.
"""

from __future__ import annotations

import random

import pytest
from conftest import PROFILES, expect
from ruamel.yaml import YAML

from mpigen.model import admission
from mpigen.support.diagnostics import Severity

DGX_POD = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
VOLCANO_LAB = (PROFILES / "clusters" / "volcano-lab.yaml").read_text(encoding="utf-8")
CPU_LAB = (PROFILES / "clusters" / "cpu-lab.yaml").read_text(encoding="utf-8")
VISION = (PROFILES / "jobs" / "vision-resnet50.yaml").read_text(encoding="utf-8")
BERT = (PROFILES / "jobs" / "language-bert.yaml").read_text(encoding="utf-8")
ALLREDUCE = (PROFILES / "jobs" / "volcano-allreduce.yaml").read_text(encoding="utf-8")
CPU_PI = (PROFILES / "jobs" / "cpu-pi.yaml").read_text(encoding="utf-8")
CPU_NODE = (PROFILES / "hardware" / "cpu-node.yaml").read_text(encoding="utf-8")
PI = (PROFILES / "jobs" / "pi.yaml").read_text(encoding="utf-8")

POD = "clusters/dgx-pod.yaml"
GPU_TAINT = ("    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]"
             "  # set by the admins; the GPU operator's pods tolerate it\n")
assert GPU_TAINT in DGX_POD and len(VISION.splitlines()) == 24
assert DGX_POD.splitlines()[37] == "  scheduler: kueue"
assert DGX_POD.splitlines()[46] == "      nodeLabel: kubernetes.io/hostname"
assert DGX_POD.splitlines()[55:58] == ["    - name: vision", "      namespaces: [team-vision]", "      nodes: {dgx: 4}"]
assert DGX_POD.splitlines()[63] == "      borrowNodes: {dgx: 2}  # at most two of the vision team's idle nodes"
assert VISION.splitlines()[10] == "totalGpus: 32" and VISION.splitlines()[17:21] == [
    "scheduling:", "  priorityClass: production", "  topology:", "    level: rack"]
assert BERT.splitlines()[9] == "namespace: team-language" and BERT.splitlines()[11] == "totalGpus: 48"
assert ALLREDUCE.splitlines()[12:15] == ["scheduling:", "  queue: training", "  priorityClass: training-high"]
assert VOLCANO_LAB.splitlines()[36] == "    - name: experiments"
assert DGX_POD.splitlines()[16] == "    hardware: dgx-1" and len(CPU_PI.splitlines()) == 23


def test_the_example_jobs_fit_their_queues_exactly_where_the_numbers_say():
    """language-bert asks 48 GPUs: its own 4 nodes (32) plus the 2 it may borrow (16), no more."""
    queues = admission.cluster_queues(YAML(typ="safe", pure=True).load(DGX_POD))
    language = queues.queue_for("team-language", None)
    assert language is not None and language.name == "language"
    assert queues.borrowable_nodes(language, "dgx") == 2
    vision = queues.queue_for("team-vision", None)
    assert queues.borrowable_nodes(vision, "dgx") == 4  # no limit of its own: all of language's


# What `admission.ClusterQueues` answers, by its definition, a queue at a time: each job once asked it of a cluster
# whose queues were declared anew, which took most of 94 s to validate 1,000 jobs on 2,000 queues.
def queue_for_by_definition(queues: admission.ClusterQueues, namespace: str, named: str | None):
    for queue in queues.declared:
        if (queue.name == named) if named is not None else (namespace in queue.namespaces):
            return queue
    return None


def borrowable_nodes_by_definition(queues: admission.ClusterQueues, queue: admission.QueueDecl, pool: str) -> int:
    if queue.cohort is None:
        return 0
    others = sum(other.nodes_of(pool) for other in queues.declared
                 if other.cohort == queue.cohort and other.name != queue.name)
    limit = queue.borrowable(pool)
    return others if limit is None else min(others, limit)


def many_queues(seed: int, queues: int, jobs: int) -> tuple[str, dict[str, str]]:
    """A kueue cluster of two DGX-1 pools and `queues` queues in three cohorts (some without, some names twice, some
    with borrowing limits, some serving one team only), and `jobs` jobs naming a queue, or none, on either pool."""
    rng = random.Random(seed)
    text = ['apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: many\nkubernetesVersion: "1.32"\n'
            "namespaces: [team-a, team-b, team-c]\nnodePools:\n"
            "  - name: p0\n    hardware: dgx-1\n    nodes: 40\n    nodeLabels: {example.com/pool: p0}\n"
            "  - name: p1\n    hardware: dgx-1\n    nodes: 20\n    nodeLabels: {example.com/pool: p1}\n"
            "scheduling:\n  scheduler: kueue\n  queues:\n"]
    for i in range(queues):
        name = f"q{rng.randrange(queues)}" if rng.random() < 0.1 else f"q{i}"
        text.append(f"    - name: {name}\n      nodes: {{p0: {rng.randrange(0, 5)}, p1: {rng.randrange(0, 3)}}}\n")
        if rng.random() < 0.8:
            text.append(f"      cohort: c{rng.randrange(3)}\n")
        if rng.random() < 0.3:
            text.append(f"      borrowNodes: {{p0: {rng.randrange(0, 8)}}}\n")
        if rng.random() < 0.5:
            text.append(f"      namespaces: [team-{rng.choice('abc')}]\n")
    files = {"clusters/many.yaml": "".join(text)}
    for i in range(jobs):
        queue = f"  queue: q{rng.randrange(queues + 5)}\n" if rng.random() < 0.8 else ""
        files[f"jobs/job-{i}.yaml"] = (
            f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: job-{i}\ncluster: many\npool: p{rng.randrange(2)}\n"
            f"namespace: team-{rng.choice('abc')}\nimage: example/train:1\nworkers: {rng.randrange(1, 12)}\n"
            f"program: [python, train.py]\n" + (f"scheduling:\n{queue}" if queue else ""))
    return "".join(text), files


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_clusters_queues_answer_as_their_definition_does(seed):
    text, _ = many_queues(seed, 60, 0)
    queues = admission.cluster_queues(YAML(typ="safe", pure=True).load(text))
    for namespace, named in [*((f"team-{t}", None) for t in "abcd"), *((None, f"q{i}") for i in range(65))]:
        assert queues.queue_for(namespace, named) is queue_for_by_definition(queues, namespace, named)
    for queue in queues.declared:
        for pool in ("p0", "p1", "p2"):
            assert queues.borrowable_nodes(queue, pool) == borrowable_nodes_by_definition(queues, queue, pool)


def test_validation_says_the_same_with_the_queues_worked_out_once(diagnose, monkeypatch):
    """The example fleet and a generated one of 40 queues and 120 jobs (quotas passed, queues unknown, namespaces not
    served, pools not covered) give the very diagnostics of the definitions above."""
    _, files = many_queues(7, 40, 120)
    outcomes = []
    for by_definition in (False, True):
        if by_definition:
            monkeypatch.setattr(admission.ClusterQueues, "queue_for", queue_for_by_definition)
            monkeypatch.setattr(admission.ClusterQueues, "borrowable_nodes", borrowable_nodes_by_definition)
        outcomes.append([[d.format() for d in diagnose(edits).diagnostics] for edits in ({}, files)])
    assert outcomes[0] == outcomes[1]
    example, many = outcomes[0]
    assert example == []
    assert sum("more than queue" in line for line in many) > 5 and sum("declares no queue" in line for line in many) > 5


# --- cluster ------------------------------------------------------------------------------------------------------


WAIT = "  waitForPodsReady:\n    timeoutSeconds: 600\n"
assert WAIT in DGX_POD
TIMEOUT_LINE = DGX_POD.splitlines().index("    timeoutSeconds: 600") + 1


@pytest.mark.parametrize(("said", "needed", "wanted"), [
    ("    timeoutSeconds: 300\n", 412, "7m"),  # 2 x 200 s of pull (6 nodes at 100 MB/s, then the launcher's) + 12 s
    ("    timeoutSeconds: 600\n    imageGB: 40\n", 812, "14m"),  # twice the image: 2 x 400 s + 12 s
])
def test_a_kueue_timeout_under_a_first_pull_is_warned_at_its_line(diagnose, said, needed, wanted):
    """Kueue evicts and requeues an admitted job whose pods are not all ready within waitForPodsReady.timeout
    (Kueue site/content/en/docs/tasks/manage/setup_wait_for_pods_ready.md): the example's largest job,
    language-bert (6 workers; vision-resnet50's 4 need as long, and come after it), needs 412 s on the assumed pull."""
    outcome = diagnose({POD: DGX_POD.replace(WAIT, "  waitForPodsReady:\n" + said)})
    expect(outcome, (POD, TIMEOUT_LINE, 21, f"Kueue's waitForPodsReady timeout of {said.split()[1]} s is less than the "
                     f"{needed} s that job 'language-bert' (6 workers) needs for every pod to be ready",
                     f"to {wanted} or more"), severity=Severity.WARNING)


def test_a_setting_of_another_scheduler_is_refused(diagnose):
    outcome = diagnose({POD: DGX_POD.replace("  scheduler: kueue\n", "  scheduler: kueue\n  schedulerName: x\n")})
    expect(outcome, (POD, 39, 3, "`scheduling.schedulerName` has no effect with scheduler `kueue`: only "
                     "`coscheduling` and `kai` read it", "remove it"))


def test_a_queue_setting_of_another_scheduler_is_refused(diagnose):
    outcome = diagnose({"clusters/volcano-lab.yaml": VOLCANO_LAB.replace("      weight: 2\n",
                                                                         "      weight: 2\n      cohort: all\n")})
    expect(outcome, ("clusters/volcano-lab.yaml", 37, 7, "`cohort` of a queue has no effect with scheduler "
                     "`volcano`: only `kueue` and `kai` read it"))


def test_hostname_may_only_be_the_lowest_topology_level(diagnose):
    text = DGX_POD.replace("""    - name: rack
      nodeLabel: fabric.example.com/leaf-switch
      domainNodes: 4  # four nodes under each leaf switch
    - name: host
      nodeLabel: kubernetes.io/hostname
""", """    - name: host
      nodeLabel: kubernetes.io/hostname
    - name: rack
      nodeLabel: fabric.example.com/leaf-switch
""")
    outcome = diagnose({POD: text})
    expect(outcome, (POD, 44, 18, "kubernetes.io/hostname can only be the lowest topology level",
                     "move it to the end"))


def test_a_topology_over_tainted_pools_without_the_hostname_level_is_warned(diagnose):
    """Kueue respects node taints in topology-aware scheduling only where kubernetes.io/hostname is the lowest level
    (its own example, tests/upstream/scheduling/kueue/example__tas_sample-gpu-queues.yaml); dgx-pod's pool is tainted
    (nvidia.com/gpu). Without taints, nothing is said."""
    host = "    - name: host\n      nodeLabel: kubernetes.io/hostname\n"
    assert host in DGX_POD
    text = DGX_POD.replace(host, "")
    line = text.splitlines().index("      nodeLabel: fabric.example.com/leaf-switch") + 1
    expect(diagnose({POD: text}), (POD, line, 18, "pool(s) 'dgx' have taints, and Kueue respects node taints in "
                                   "topology-aware scheduling only where kubernetes.io/hostname is the lowest topology "
                                   "level", "add `- {name: host, nodeLabel: kubernetes.io/hostname}` as the last level"),
           severity=Severity.WARNING)
    taints = "    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]"
    assert taints in text
    expect(diagnose({POD: text.replace(taints, "")}))


def test_a_queue_names_only_the_clusters_namespaces_and_pools(diagnose):
    text = DGX_POD.replace("      namespaces: [team-vision]\n      nodes: {dgx: 4}",
                           "      namespaces: [team-vison]\n      nodes: {dgx: 9, gpu: 1}")
    outcome = diagnose({POD: text, "jobs/vision-resnet50.yaml": None})
    expect(outcome,
           (POD, 57, 20, "queue 'vision' serves namespace 'team-vison', which is not in `namespaces`",
            "did you mean 'team-vision'?"),
           (POD, 58, 20, "queue 'vision' takes 9 nodes of pool 'dgx', which has 8", "at most 8"),
           (POD, 58, 23, "queue 'vision' names node pool 'gpu', which the cluster does not have"))


def test_a_borrowing_limit_needs_a_cohort(diagnose):
    text = DGX_POD.replace("      cohort: dgx-pod\n      borrowNodes", "      borrowNodes")
    outcome = diagnose({POD: text, "jobs/language-bert.yaml": None})  # it needs the borrowed nodes
    expect(outcome, (POD, 63, 7, "queue 'language' has a borrowing limit but no cohort to borrow from",
                     "add `cohort`"))


def test_volcanos_own_queues_are_not_the_charts(diagnose):
    outcome = diagnose({"clusters/volcano-lab.yaml": VOLCANO_LAB.replace("- name: experiments", "- name: default"),
                        "jobs/allreduce-vcjob.yaml": None})  # it goes to experiments
    expect(outcome, ("clusters/volcano-lab.yaml", 37, 13, "Volcano creates the queue 'default' itself"))


def test_a_queued_pool_must_say_how_many_cpus_its_nodes_have(diagnose):
    """The cpu quota is the nodes' CPUs; DGX H100's built-in profile does not publish its cores per socket."""
    outcome = diagnose({POD: DGX_POD.replace("hardware: dgx-1", "hardware: dgx-h100").replace("nic: ib", "nic: nic"),
                        "jobs/vision-resnet50.yaml": None, "jobs/language-bert.yaml": None})
    problems = [d for d in outcome.diagnostics if "coresPerSocket" in d.message]
    assert len(problems) == 1, outcome.shown()
    assert str(problems[0].location) == outcome.at(POD, 17, 15)
    assert "pool 'dgx' is in a queue, whose cpu quota is its nodes' CPUs" in problems[0].message


# --- job ----------------------------------------------------------------------------------------------------------


def test_scheduling_on_a_cluster_without_a_scheduler_is_refused(diagnose):
    outcome = diagnose({"jobs/pi.yaml": PI + "scheduling:\n  queue: a\n"})
    expect(outcome, ("jobs/pi.yaml", 25, 1, "cluster 'dgx-lab' has no gang scheduler, so `scheduling` has no effect"))


def test_an_unknown_priority_class_or_topology_level_is_refused(diagnose):
    text = VISION.replace("priorityClass: production", "priorityClass: prodution").replace("level: rack", "level: leaf")
    outcome = diagnose({"jobs/vision-resnet50.yaml": text})
    expect(outcome,
           ("jobs/vision-resnet50.yaml", 19, 18, "cluster 'dgx-pod' declares no priority class 'prodution'",
            "did you mean 'production'?"),
           ("jobs/vision-resnet50.yaml", 21, 12, "cluster 'dgx-pod' declares no topology level 'leaf'"))


SYSTEM_PRIORITY = ("Kubernetes keeps priority class names starting with `system-` for its built-in classes "
                   "(system-cluster-critical and system-node-critical, which every cluster has and which rank above "
                   "every workload): the API server refuses any other PriorityClass so named, and pods of a built-in "
                   "class run above every workload and preempt it")
DGX_LAB = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(("edits", "where"), [
    ({POD: DGX_POD.replace("- name: production", "- name: system-node-critical"),
      "jobs/vision-resnet50.yaml": VISION.replace("priorityClass: production", "priorityClass: system-node-critical")},
     (POD, 49, 13)),
    ({"clusters/volcano-lab.yaml": VOLCANO_LAB.replace("- name: training-high", "- name: system-node-critical"),
      "jobs/volcano-allreduce.yaml": ALLREDUCE.replace("training-high", "system-node-critical")},
     ("clusters/volcano-lab.yaml", 30, 13)),
    ({"clusters/cpu-lab.yaml": CPU_LAB.replace("  scheduleTimeoutSeconds: 300\n", "  scheduleTimeoutSeconds: 300\n"
                                               "  priorityClasses: [{name: system-node-critical, value: 1000}]\n")},
     ("clusters/cpu-lab.yaml", 19, 28)),
    ({"clusters/dgx-lab.yaml": DGX_LAB + "scheduling:\n  scheduler: none\n  priorityClasses:\n"
                                         "    - {name: system-node-critical, value: 1000}\n"},
     ("clusters/dgx-lab.yaml", 46, 14)),
], ids=["kueue", "volcano", "coscheduling", "none"])
def test_a_system_priority_class_is_refused_under_every_scheduler(diagnose, edits, where):
    """The second red team's case: a cluster declaring `system-node-critical` (value 1000) for its jobs. The API
    server refuses a `system-` PriorityClass it does not know, so the infra chart fails to sync, and the pods
    resolve to the built-in class (2,000,001,000), above every workload."""
    outcome = diagnose(edits)
    expect(outcome, (*where, f"priority class 'system-node-critical': {SYSTEM_PRIORITY}",
                     "name it otherwise, e.g. 'node-critical'"))


def test_a_job_naming_a_builtin_system_class_is_told_why_not_to_declare_it(diagnose):
    outcome = diagnose({"jobs/vision-resnet50.yaml": VISION.replace("priorityClass: production",
                                                                    "priorityClass: system-cluster-critical")})
    expect(outcome, ("jobs/vision-resnet50.yaml", 19, 18, f"priority class 'system-cluster-critical': {SYSTEM_PRIORITY}",
                     "name it otherwise, e.g. 'cluster-critical'"))


def test_an_unknown_queue_is_refused(diagnose):
    outcome = diagnose({"jobs/volcano-allreduce.yaml": ALLREDUCE.replace("queue: training", "queue: trainig")})
    expect(outcome, ("jobs/volcano-allreduce.yaml", 14, 10, "cluster 'volcano-lab' declares no queue 'trainig'",
                     "did you mean 'training'?"))


def test_volcanos_own_default_queue_may_be_named(diagnose):
    outcome = diagnose({"jobs/volcano-allreduce.yaml": ALLREDUCE.replace("queue: training", "queue: default")})
    assert outcome.diagnostics == [], outcome.shown()


def test_a_kueue_job_needs_a_queue_that_serves_its_namespace(diagnose):
    named = VISION.replace("scheduling:\n", "scheduling:\n  queue: language\n")
    expect(diagnose({"jobs/vision-resnet50.yaml": named}),
           ("jobs/vision-resnet50.yaml", 19, 10, "queue 'language' does not serve namespace 'team-vision': it has "
            "no LocalQueue there, so Kueue never admits the job"))
    unserved = DGX_POD.replace("namespaces:\n  - team-vision\n", "namespaces:\n  - team-vision\n  - team-audio\n")
    job = VISION.replace("namespace: team-vision", "namespace: team-audio")
    outcome = diagnose({POD: unserved, "jobs/vision-resnet50.yaml": job})
    expect(outcome, ("jobs/vision-resnet50.yaml", 9, 12, "no queue of cluster 'dgx-pod' serves namespace "
                     "'team-audio', so Kueue never admits the job", "add the namespace to a queue's `namespaces`"))


def test_a_kueue_queue_that_does_not_cover_the_jobs_pool_never_admits_it(diagnose):
    """dgx-pod with a second pool of CPU nodes; the vision queue takes only those: no flavor selects DGX nodes."""
    cluster = DGX_POD.replace(GPU_TAINT, GPU_TAINT + "  - name: cpu\n    hardware: cpu-node\n    nodes: 4\n")
    cluster = cluster.replace("      nodes: {dgx: 4}\n      cohort: dgx-pod\n    - name: language",
                              "      nodes: {cpu: 4}\n      cohort: dgx-pod\n    - name: language")
    outcome = diagnose({POD: cluster, "jobs/language-bert.yaml": None})  # it borrows vision's DGX nodes
    expect(outcome,
           # The cluster's acceptance jobs run in team-vision too (line 72: `acceptance:`), and are refused alike.
           (POD, 72, 1, "queue 'vision' does not cover pool 'dgx' (not in its `nodes`)",
            "add the pool to the queue's `nodes`"),
           ("jobs/vision-resnet50.yaml", 9, 12, "queue 'vision' does not cover pool 'dgx' (not in its "
            "`nodes`): no flavor of its ClusterQueue selects the workers' nodes", "add the pool to the queue's `nodes`"))


@pytest.mark.parametrize(("cluster", "text", "line", "why"), [
    (POD, DGX_POD, 58, "Kueue refuses a ClusterQueue without flavors"),
    ("clusters/volcano-lab.yaml", VOLCANO_LAB, 35, "a Volcano queue without capability has no limit at all")])
def test_a_queue_covering_no_pool_is_refused(diagnose, cluster, text, line, why):
    edited = text.replace("      nodes: {dgx: 4}\n", "      nodes: {}\n", 1)
    outcome = diagnose({cluster: edited, "jobs/language-bert.yaml": None})
    expect(outcome, (cluster, line, 14, f"covers no node pool: {why}", "name its share of at least one pool"))


def test_kueue_pools_need_node_labels_of_their_own(diagnose):
    """A flavor places the pods it admits by its pool's node labels: none, or another pool's, cannot."""
    unlabelled = CPU_NODE.replace("nodeLabels:\n  node.kubernetes.io/instance-type: cpu-2s64c\n", "")
    cluster = DGX_POD.replace(GPU_TAINT, GPU_TAINT + "  - name: cpu\n    hardware: cpu-node\n    nodes: 4\n")
    cluster = cluster.replace("      nodes: {dgx: 4}\n      cohort: dgx-pod\n    - name: language",
                              "      nodes: {dgx: 4, cpu: 2}\n      cohort: dgx-pod\n    - name: language")
    assert unlabelled != CPU_NODE
    outcome = diagnose({POD: cluster, "hardware/cpu-node.yaml": unlabelled})
    expect(outcome, (POD, 20, 11, "pool 'cpu' has no node labels, so its Kueue ResourceFlavor cannot tell its nodes "
                     "from the others'", "give the pool `nodeLabels`"))
    twin = DGX_POD.replace("    nodes: 8\n" + GPU_TAINT,
                           "    nodes: 4\n" + GPU_TAINT + "  - name: dgx-b\n    hardware: dgx-1\n    nodes: 4\n")
    outcome = diagnose({POD: twin.replace("{dgx: 4}", "{dgx: 2, dgx-b: 2}").replace("{dgx: 2}  #", "{dgx: 1}  #"),
                        "jobs/language-bert.yaml": None})  # six nodes no longer fit one pool
    expect(outcome, (POD, 20, 11, "pools 'dgx' and 'dgx-b' pick their nodes by the same labels"))


@pytest.mark.parametrize(("gpus", "ok"), [(48, True), (56, False)])
def test_a_kueue_job_may_ask_for_its_quota_plus_what_it_may_borrow_and_no_more(diagnose, gpus, ok):
    outcome = diagnose({"jobs/language-bert.yaml": BERT.replace("totalGpus: 48", f"totalGpus: {gpus}")})
    if ok:
        assert outcome.diagnostics == [], outcome.shown()
    else:
        expect(outcome, ("jobs/language-bert.yaml", 12, 12, "the job's 7 workers ask for 56 nvidia.com/gpu, more "
                         "than queue 'language' can ever hold on pool 'dgx' (32 plus 16 it may borrow: 6 of 8 nodes), "
                         "so it is never admitted", "`borrowNodes`"))


def test_a_volcano_job_may_not_ask_for_more_than_its_queues_capability(diagnose):
    outcome = diagnose({"jobs/volcano-allreduce.yaml": ALLREDUCE.replace("queue: training", "queue: experiments")})
    expect(outcome, ("jobs/volcano-allreduce.yaml", 11, 12, "the job's 4 workers and launcher ask for 32 "
                     "nvidia.com/gpu, more than the capability of queue 'experiments' (16), so Volcano never schedules"))


@pytest.mark.parametrize(("memory", "ok"), [("2047Gi", True), ("2048Gi", False)])
def test_a_volcano_queues_capability_counts_the_launcher(diagnose, memory, ok):
    """Four workers of 511.75 GiB and the 1 GiB launcher: 2048 GiB, the training queue's 4 nodes x 512 GiB."""
    job = ALLREDUCE.replace("scheduling:", f"resources:\n  memory: {memory}\nshmSize: 8Gi\nscheduling:")
    job = job.replace(f"memory: {memory}", "memory: " + {"2047Gi": "511.75Gi", "2048Gi": "512Gi"}[memory])
    outcome = diagnose({"jobs/volcano-allreduce.yaml": job})
    if ok:
        assert outcome.diagnostics == [], outcome.shown()
    else:
        expect(outcome, ("jobs/volcano-allreduce.yaml", 11, 12, "the job's 4 workers and launcher ask for 2049Gi "
                         "memory, more than the capability of queue 'training' (2048Gi)"))


@pytest.mark.parametrize(("cpu", "ok"), [("79", True), ("80", False)])
def test_kueue_admits_the_launcher_with_the_workers(diagnose, cpu, ok):
    """The vision job's 4 workers on the 4 nodes of its queue plus 4 it may borrow; 8 workers of 80 CPUs take all
    640, and the launcher's 1 CPU fits nowhere (the queue covers no other pool)."""
    job = VISION.replace("totalGpus: 32", f"totalGpus: 64\nresources:\n  cpu: \"{cpu}\"")
    outcome = diagnose({"jobs/vision-resnet50.yaml": job.replace("    level: rack", "    level: block"),
                        "jobs/language-bert.yaml": None})
    if ok:
        assert outcome.diagnostics == [], outcome.shown()
    else:
        expect(outcome, ("jobs/vision-resnet50.yaml", 11, 12, "the job's workers take all that queue 'vision' can "
                         "ever hold on pool 'dgx', and its launcher (1 cpu, 1Gi memory) fits nowhere else in the queue",
                         "give the queue more nodes"))


def test_workers_required_on_one_host_must_fit_one_node(diagnose):
    outcome = diagnose({"jobs/vision-resnet50.yaml": VISION.replace("level: rack", "level: host")})
    expect(outcome, ("jobs/vision-resnet50.yaml", 21, 12, "the job's 4 workers need 4 nodes, but one 'host' domain "
                     "(kubernetes.io/hostname) holds 1 (a kubernetes.io/hostname domain is one node): it never fits",
                     "`mode: preferred`"))
    preferred = VISION.replace("level: rack", "level: host\n    mode: preferred")
    expect(diagnose({"jobs/vision-resnet50.yaml": preferred}), ("jobs/vision-resnet50.yaml", 21, 12,
           "Kueue will likely split the job across 4 hosts"), severity=Severity.WARNING)
    one_node = VISION.replace("level: rack", "level: host").replace("totalGpus: 32", "totalGpus: 8")
    assert diagnose({"jobs/vision-resnet50.yaml": one_node}).diagnostics == []


def test_rail_devices_count_against_the_quota_too(diagnose):
    """One VF per GPU and node (numVfs 1): sixteen one-GPU workers fit the GPUs of the vision team's quota and what it
    may borrow, but not the VFs (4 of its own and 4 borrowed per rail)."""
    cluster = DGX_POD.replace("  provider: sriov-network-operator\n", "  provider: sriov-network-operator\n  numVfs: 1\n")
    job = VISION.replace("totalGpus: 32\n", "totalGpus: 16\ngpusPerWorker: 1\n")
    outcome = diagnose({POD: cluster, "jobs/vision-resnet50.yaml": job, "jobs/language-bert.yaml": None})
    expect(outcome, ("jobs/vision-resnet50.yaml", 11, 12, "the job's 16 workers ask for 16 openshift.io/rdma_rail0, "
                     "more than queue 'vision' can ever hold on pool 'dgx' (4 plus 4 it may borrow: 8 of 8 nodes)"))


# --- the gang's minimum (mpi-operator #608) -----------------------------------------------------------------------


def test_min_available_counting_the_launcher_under_wait_for_workers_ready_deadlocks(diagnose):
    outcome = diagnose({"jobs/volcano-allreduce.yaml": ALLREDUCE + "  minAvailable: 5\n"})
    expect(outcome, ("jobs/volcano-allreduce.yaml", 16, 17, "minAvailable 5 counts the launcher, but under "
                     "launcherCreationPolicy WaitForWorkersReady the launcher is created only once all 4 workers run",
                     "set minAvailable to 4 (or leave it out), or use launcherCreationPolicy AtStartup"))


@pytest.mark.parametrize(("policy", "given", "ok"), [
    ("WaitForWorkersReady", 4, True), ("WaitForWorkersReady", 3, True), ("WaitForWorkersReady", 6, False),
    ("AtStartup", 5, True), ("AtStartup", 6, False)])
def test_min_available_may_not_exceed_the_pods_that_can_exist_together(diagnose, policy, given, ok):
    text = ALLREDUCE.replace("scheduling:", f"launcherCreationPolicy: {policy}\nscheduling:") + \
        f"  minAvailable: {given}\n"
    outcome = diagnose({"jobs/volcano-allreduce.yaml": text})
    if ok:
        assert outcome.diagnostics == [], outcome.shown()
    else:
        limit = 4 if policy == "WaitForWorkersReady" else 5
        expect(outcome, ("jobs/volcano-allreduce.yaml", 17, 17, f"minAvailable {given} is more than the job's {limit} "
                         "pods", f"at most {limit}"))


def test_kueue_takes_no_min_available_and_coscheduling_no_queue(diagnose):
    outcome = diagnose({"jobs/vision-resnet50.yaml": VISION.replace("scheduling:\n", "scheduling:\n  minAvailable: 2\n"),
                        "jobs/cpu-pi.yaml": CPU_PI + "scheduling:\n  queue: default\n"})
    expect(outcome,
           ("jobs/cpu-pi.yaml", 25, 3, "`scheduling.queue` has no effect with cluster 'cpu-lab''s scheduler "
            "`coscheduling`"),
           ("jobs/vision-resnet50.yaml", 19, 3, "`scheduling.minAvailable` has no effect with cluster 'dgx-pod''s "
            "scheduler `kueue`", "Kueue admits a job whole"))


def test_a_kueue_job_may_not_be_created_running(diagnose):
    outcome = diagnose({"jobs/vision-resnet50.yaml": VISION + "runPolicy:\n  suspend: false\n"})
    expect(outcome, ("jobs/vision-resnet50.yaml", 26, 12, "cluster 'dgx-pod' admits jobs through Kueue, which creates "
                     "them suspended", "remove runPolicy.suspend"))
    assert diagnose({"jobs/vision-resnet50.yaml": VISION + "runPolicy:\n  suspend: true\n"}).diagnostics == []


def test_workers_kept_one_a_node_never_share_a_host(diagnose):
    # Two workers of 4 GPUs fit one DGX-1, but `workerSpread: one-per-node` (a required pod anti-affinity) keeps
    # them on two: required on one host, Kueue would never admit them. The fit is judged with the same one-a-node
    # layout as the pods get (as under host networking, where sshd's port keeps workers one a node).
    one_host = VISION.replace("level: rack", "level: host").replace("totalGpus: 32", "totalGpus: 8\ngpusPerWorker: 4")
    assert diagnose({"jobs/vision-resnet50.yaml": one_host}).diagnostics == []
    outcome = diagnose({"jobs/vision-resnet50.yaml": one_host + "workerSpread: one-per-node\n"})
    errors = [d.format() for d in outcome.diagnostics if d.severity is Severity.ERROR]
    assert errors == [f"{outcome.at('jobs/vision-resnet50.yaml', 22, 12)}: error: the job's 2 workers need 2 nodes, "
                      "but one 'host' domain (kubernetes.io/hostname) holds 1 (a kubernetes.io/hostname domain is one "
                      "node): it never fits, so Kueue keeps the job Pending for ever; use a higher level ('block', "
                      "'rack'), `mode: preferred`, or at most 1 worker(s)"], outcome.shown()


def test_one_per_node_beside_kueue_topology_is_warned(diagnose):
    # Kueue's topology-aware scheduling assigns each pod a node (domain) by free capacity and pins it there; it does
    # not evaluate pod anti-affinity, so two workers it packs on one node would leave one Pending under the required
    # anti-affinity of `one-per-node`. Whole-node workers are one a node anyway.
    partial = VISION.replace("totalGpus: 32", "totalGpus: 8\ngpusPerWorker: 4") + "workerSpread: one-per-node\n"
    expect(diagnose({"jobs/vision-resnet50.yaml": partial}),
           ("jobs/vision-resnet50.yaml", 26, 15, "Kueue's topology-aware scheduling places the workers on nodes by "
            "their free capacity", "ask for whole-node workers"), severity=Severity.WARNING)
    whole = VISION + "workerSpread: one-per-node\n"
    assert diagnose({"jobs/vision-resnet50.yaml": whole}).diagnostics == []
