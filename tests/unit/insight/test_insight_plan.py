"""`mpigen plan`'s numbers (generator/insight/capacity.py, plan.py): what a node offers, what a worker asks, which
jobs start together, who waits, what can never run and where it says so."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from conftest import PROFILES, TRAIN_JOB

from mpigen.commands.pipeline import check_profiles
from mpigen.insight import capacity
from mpigen.insight.plan import NEVER, STARTS, WAITS, FleetPlan, plan_fleet
from mpigen.insight.report import plan_json, plan_text


def _plan(root: Path) -> FleetPlan:
    result = check_profiles([root], set_aside_unfit=True)
    assert result.ok, [d.format() for d in result.diagnostics]
    return plan_fleet(result.fleet, result.documents, result.unfit)


def _job(plan: FleetPlan, name: str):
    return next(job for job in plan.jobs if job.name == name)


def test_a_dgx_1_node_offers_its_cpus_memory_gpus_and_one_vf_per_gpu_on_each_rail(example):
    # profiles/hardware/dgx-1.yaml: 2 sockets x 20 cores x 2 threads, 512 GiB, 8 GPUs; dgx-lab runs the SR-IOV
    # device plugin with no numVfs, so each rail's PF is assumed split into one VF per GPU (admission.vfs_per_node).
    cluster = next(c for c in example.fleet.clusters if c.name == "dgx-lab")
    offer = dict(capacity.node_offer(cluster.pool("dgx")).items)
    assert offer == {"cpu": 80, "memory": 512, "nvidia.com/gpu": 8, "nvidia.com/rdma_rail0": 8,
                     "nvidia.com/rdma_rail1": 8, "nvidia.com/rdma_rail2": 8, "nvidia.com/rdma_rail3": 8}


def test_a_worker_asks_for_what_its_container_limits_say(example):
    # profiles/jobs/resnet50-dgx.yaml: resources cpu 32, memory 256Gi; a whole node's 8 GPUs; one VF per rail.
    job = next(j for j in example.fleet.jobs if j.name == "resnet50-dgx")
    assert dict(capacity.worker_ask(job).items) == {
        "cpu": 32, "memory": 256, "nvidia.com/gpu": 8, "nvidia.com/rdma_rail0": 1, "nvidia.com/rdma_rail1": 1,
        "nvidia.com/rdma_rail2": 1, "nvidia.com/rdma_rail3": 1}


def test_a_dra_worker_asks_for_the_devices_it_claims_as_its_node_offers_them(example):
    """h100-dra (profiles/hardware/dgx-h100-ib.yaml: 2 x 56 cores x 2 threads, 2048 GiB, 8 GPUs, 8 NICs): under DRA a
    worker requests no GPU and no rail resource, its claim holds 8 GPUs and the NICs of the 8 rails, each NIC
    claimed by one pod (model/claimed.py): one worker a node, so llm-pretrain's 2 workers take 2 nodes."""
    job = next(j for j in example.fleet.jobs if j.name == "llm-pretrain")
    assert dict(capacity.node_offer(job.pool).items) == {"cpu": 224, "memory": 2048, "nvidia.com/gpu": 8,
                                                         "dra.net/rdma-nic": 8}
    assert dict(capacity.worker_ask(job).items) == {"nvidia.com/gpu": 8, "dra.net/rdma-nic": 8}
    assert capacity.nodes_needed(job) == 2


def test_the_example_fleet_plan(example):
    plan = _plan(PROFILES)
    assert len(plan.jobs) == len(example.fleet.jobs) == 15 and not plan.never
    # dgx-pod has 8 DGX-1 nodes: vision-resnet50 (priority class production, 32 GPUs = 4 nodes) is admitted
    # first; language-bert (48 GPUs = 6 nodes) cannot start beside it and waits for it.
    vision, language = _job(plan, "vision-resnet50"), _job(plan, "language-bert")
    assert (vision.state, vision.nodes_alone, len(set(vision.worker_nodes))) == (STARTS, 4, 4)
    assert (language.state, language.nodes_alone, language.waits_for) == (WAITS, 6, ("vision-resnet50",))
    # dgx-lab's 4 nodes, admitted by name: resnet50-dgx takes two whole nodes, resnet50-trainjob a third;
    # tensorflow-benchmarks' two 1-GPU workers share the fourth.
    resnet, trainjob = _job(plan, "resnet50-dgx"), _job(plan, "resnet50-trainjob")
    bench = _job(plan, "tensorflow-benchmarks")
    assert resnet.worker_nodes == (0, 1) and trainjob.worker_nodes == (2,) and bench.worker_nodes == (3, 3)
    assert bench.state == STARTS
    where = resnet.location  # totalGpus: 16
    assert (Path(where.path), where.line, where.column) == (PROFILES / "jobs/resnet50-dgx.yaml", 11, 12)
    text = plan_text(plan)
    assert "15 job(s): 14 start at once, 1 wait, 0 can never run" in text
    assert "language-bert waits for quota its cohort shares (queues 'vision', 'language'), held by " \
        "vision-resnet50" in text  # 32 + 48 GPUs: more than the cohort's 64


def test_a_job_too_big_for_its_pool_is_reported_with_its_line_and_the_rest_is_still_planned(profiles_copy):
    # dgx-lab's dgx pool has 4 nodes of 8 GPUs: 40 GPUs need 5 whole nodes.
    root = profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 40\n"})
    plan = _plan(root)
    train = _job(plan, "train")
    assert train.state == NEVER
    assert (Path(train.location.path).name, train.location.line) == ("train.yaml", 8)
    assert "5 full-node workers need 5 nodes" in train.reason and "has 4" in train.reason
    assert {job.name for job in plan.jobs} >= {"resnet50-dgx", "vision-resnet50"}, "the rest is still planned"
    text = plan_text(plan)
    assert f"{train.location}: train can never run: 5 full-node workers need 5 nodes" in text
    assert "1 can never run" in text


def test_a_job_its_queue_can_never_admit_is_reported(profiles_copy):
    # dgx-pod's queue language holds 4 nodes and may borrow 2 of its cohort's: 56 GPUs (7 nodes) fit the 8-node
    # pool but are never admitted.
    text = (PROFILES / "jobs/language-bert.yaml").read_text(encoding="utf-8").replace("totalGpus: 48",
                                                                                      "totalGpus: 56")
    plan = _plan(profiles_copy({"jobs/language-bert.yaml": text}))
    language = _job(plan, "language-bert")
    assert language.state == NEVER and "more than queue 'language' can ever hold" in language.reason
    assert _job(plan, "vision-resnet50").state == STARTS


def test_a_queue_in_a_cohort_may_borrow_what_the_others_hold():
    # vision sets no borrowing limit: it may borrow all 4 nodes of language, its cohort's other queue.
    plan = _plan(PROFILES)
    lines = {(q.name, line.resource): (line.pool, line.quota, line.may_borrow)
             for c in plan.clusters for q in c.queues for line in q.lines}
    assert lines[("vision", "nvidia.com/gpu")] == ("dgx", "32", "32")
    assert lines[("language", "nvidia.com/gpu")] == ("dgx", "32", "16")  # borrowNodes: {dgx: 2}
    assert lines[("training", "nvidia.com/gpu")] == ("", "32", "0"), "a Volcano capability counts every pool"


def test_without_a_gang_scheduler_jobs_that_do_not_fit_together_are_named_as_a_deadlock(profiles_copy):
    # dgx-lab has no scheduler; resnet50-dgx takes 2 of the 4 nodes, so a 24-GPU job (3 nodes) waits.
    # resnet50-trainjob is left out: its name holds "train".
    plan = _plan(profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 24\n", "jobs/resnet50-trainjob.yaml": None}))
    assert _job(plan, "train").state == WAITS
    notes = next(c for c in plan.clusters if c.name == "dgx-lab").notes
    assert any("deadlock" in note and "train" in note for note in notes)


def test_priority_decides_who_starts(profiles_copy):
    # Give language-bert (48 GPUs) a higher priority class than vision-resnet50's: it now starts first, and
    # vision-resnet50 (4 nodes) no longer fits on the 2 nodes left.
    cluster = (PROFILES / "clusters/dgx-pod.yaml").read_text(encoding="utf-8")
    assert "name: research" in cluster
    cluster = re.sub(r"(name: research\n\s+value: )[0-9]+", r"\g<1>2000000", cluster)
    plan = _plan(profiles_copy({"clusters/dgx-pod.yaml": cluster}))
    assert _job(plan, "language-bert").state == STARTS
    assert _job(plan, "vision-resnet50").state == WAITS


def test_host_network_keeps_one_worker_of_a_job_a_node_and_names_the_port_clash_between_jobs(profiles_copy):
    # volcano-lab runs on the nodes' network: the charts keep a job's workers one a node (each binds sshd's port,
    # 2222), so a 2-worker job of 1 GPU each takes two nodes. Workers of two jobs are not kept apart.
    job = TRAIN_JOB.replace("cluster: dgx-lab", "cluster: volcano-lab") \
        + "namespace: training\ngpusPerWorker: 1\nworkers: 2\nscheduling:\n  queue: experiments\n"
    plan = _plan(profiles_copy({"jobs/train.yaml": job, "jobs/allreduce-vcjob.yaml": None}))  # it fills experiments
    train = _job(plan, "train")
    assert train.state == STARTS and len(set(train.worker_nodes)) == 2 and train.nodes_alone == 2
    notes = next(c for c in plan.clusters if c.name == "volcano-lab").notes
    assert any("nothing keeps workers of two jobs apart" in note and "port 2222" in note for note in notes)


def test_a_cpu_worker_that_asks_for_no_cpus_has_a_node_to_itself(profiles_copy):
    # A CPU job without resources.cpu gets slots = the node's physical cores (derive.layout): one worker a node.
    job = TRAIN_JOB.replace("pool: dgx", "pool: cpu") + "workers: 3\n"
    train = _job(_plan(profiles_copy({"jobs/train.yaml": job})), "train")
    assert train.state == STARTS and len(set(train.worker_nodes)) == 3 and train.slots_per_worker == 64


def test_cpu_requests_bound_the_workers_a_gpu_node_holds(profiles_copy):
    # A DGX-1 node has 80 logical CPUs: workers of 1 GPU and 41 CPUs fit one a node, so 8 need 8 nodes and the
    # pool has 4. Validation says so (the layout counts CPUs as the scheduler does), and plan reports it.
    plan = _plan(profiles_copy({"jobs/train.yaml": TRAIN_JOB + "gpusPerWorker: 1\nworkers: 8\n"
                                "resources:\n  cpu: \"41\"\n"}))
    train = _job(plan, "train")
    assert train.state == NEVER and "1 fit on a node (by their CPU requests), 4 in all" in train.reason
    assert train.location.line == 9  # workers: 8


def test_memory_beyond_a_node_is_a_job_that_never_runs(profiles_copy):
    plan = _plan(profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 8\nresources:\n  memory: 600Gi\n"}))
    train = _job(plan, "train")
    assert train.state == NEVER and "more than a node of pool 'dgx' has (512Gi)" in train.reason
    assert train.location.line == 10


def test_a_queue_without_a_cohort_admits_only_what_its_quota_holds(profiles_copy):
    # Take the cohort away: queue vision holds 4 nodes (32 GPUs) and borrows nothing, so a second 32-GPU job of
    # its namespace waits for vision-resnet50's quota although 4 nodes are free once language-bert is gone.
    cluster = (PROFILES / "clusters/dgx-pod.yaml").read_text(encoding="utf-8")
    assert cluster.count("      cohort: dgx-pod\n") == 2
    vision = (PROFILES / "jobs/vision-resnet50.yaml").read_text(encoding="utf-8")
    plan = _plan(profiles_copy({"clusters/dgx-pod.yaml": cluster.replace("      cohort: dgx-pod\n", "")
                                .replace("      borrowNodes: {dgx: 2}  # at most two of the vision team's idle nodes\n",
                                         ""),
                                "jobs/language-bert.yaml": None,
                                "jobs/vision-two.yaml": vision.replace("name: vision-resnet50", "name: vision-two")}))
    first, second = _job(plan, "vision-resnet50"), _job(plan, "vision-two")
    assert first.state == STARTS
    assert (second.state, second.waits_for, second.reason) == (WAITS, ("vision-resnet50",), "quota of queue 'vision'")
    lines = {(q.name, line.resource): line for c in plan.clusters for q in c.queues for line in q.lines}
    assert lines[("vision", "nvidia.com/gpu")].over and lines[("vision", "nvidia.com/gpu")].asked == "64"


def test_a_job_waits_only_for_jobs_admitted_before_it(profiles_copy):
    # dgx-lab's 4 DGX-1 nodes, admitted by name: resnet50-dgx (2 nodes), resnet50-trainjob (a third),
    # tensorflow-benchmarks (2 GPUs of the fourth), x-big (24 GPUs: 3 nodes) waits; y-small (1 GPU) starts after
    # it, beside tensorflow-benchmarks, and is not what x-big waits for.
    plan = _plan(profiles_copy({
        "jobs/x-big.yaml": TRAIN_JOB.replace("name: train", "name: x-big") + "totalGpus: 24\n",
        "jobs/y-small.yaml": TRAIN_JOB.replace("name: train", "name: y-small") + "gpusPerWorker: 1\nworkers: 1\n"}))
    big = _job(plan, "x-big")
    assert big.state == WAITS and _job(plan, "y-small").state == STARTS
    assert big.waits_for == ("resnet50-dgx", "resnet50-trainjob", "tensorflow-benchmarks")
    assert big.reason == "nodes of pool 'dgx'"


def test_gpu_hours_come_from_the_estimate_else_at_most_the_deadline(profiles_copy):
    estimated = _plan(profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 8\nestimatedHours: 2.5\n"}))
    train = _job(estimated, "train")
    assert train.gpu_hours == Decimal("20.0") and "estimatedHours 2.5" in train.gpu_hours_basis
    bounded = _plan(profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 16\n"
                                   "runPolicy:\n  activeDeadlineSeconds: 5400\n"}))
    train = _job(bounded, "train")
    assert train.gpu_hours == Decimal("24.0") and train.gpu_hours_bound
    assert "<=24" in plan_text(bounded)


def test_queue_demand_counts_every_job_and_its_launcher():
    plan = _plan(PROFILES)
    language = next(q for c in plan.clusters for q in c.queues if q.name == "language")
    lines = {line.resource: line for line in language.lines}
    # language-bert: 6 workers x 8 GPUs; its launcher's default 1 CPU and 1Gi; the queue holds 4 nodes and may
    # borrow 2 (borrowNodes), 48 GPUs in all: not over.
    assert (lines["nvidia.com/gpu"].asked, lines["cpu"].asked, lines["memory"].asked) == ("48", "1", "1Gi")
    assert (lines["nvidia.com/gpu"].quota, lines["nvidia.com/gpu"].may_borrow) == ("32", "16")
    assert not any(line.over for line in language.lines)


def test_json_has_the_same_content():
    plan = _plan(PROFILES)
    data = json.loads(plan_json(plan))
    assert data["format"] == 2 and data["kind"] == "plan"
    assert data["summary"] == {"jobs": 15, "starts": 14, "waits": 1, "never": 0}
    jobs = {job["name"]: job for c in data["clusters"] for p in c["pools"] for job in p["jobs"]}
    assert jobs["resnet50-dgx"]["location"] == {"path": str(PROFILES / "jobs/resnet50-dgx.yaml"), "line": 11,
                                                "column": 12}
    assert jobs["language-bert"]["waits_for"] == ["vision-resnet50"]


def test_under_kueue_a_launcher_pool_takes_the_launchers_quota(profiles_copy):
    """Kueue admits a launcher whose node selector picks the cluster's `launcherPool` on that pool's flavor, so its
    CPU and memory count against the queue's share of that pool, not of the workers' pool."""
    pool = "  - name: dgx\n    hardware: dgx-1\n    nodes: 8\n"
    cluster = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
    cluster = cluster.replace(pool, pool + "  - name: cpu\n    hardware: cpu-node\n    nodes: 2\n")
    cluster = cluster.replace("      nodes: {dgx: 4}\n", "      nodes: {dgx: 4, cpu: 1}\n") + "launcherPool: cpu\n"
    result = check_profiles([profiles_copy({"clusters/dgx-pod.yaml": cluster})])
    assert result.ok, [d.format() for d in result.diagnostics]
    job = next(j for j in result.fleet.jobs if j.name == "vision-resnet50")
    quotas = capacity._Quotas(job.cluster)
    asked = {key: amount for key, _, _, amount in quotas._limits(capacity.queue_of(job), job) if key[0]}
    # profiles/jobs/vision-resnet50.yaml asks no CPU or memory per worker; the launcher 1 CPU and 1Gi by default.
    assert asked[("vision", "cpu", "cpu")] == 1 and asked[("vision", "cpu", "memory")] == 1
    assert ("vision", "dgx", "cpu") not in asked and asked[("vision", "dgx", "nvidia.com/gpu")] == 32


def test_a_waiting_job_names_the_first_eight_jobs_it_waits_for_and_counts_the_rest(tmp_path):
    # 22 one-node jobs on 10 nodes: 10 start, and each of the 12 others waits for all 10. Listing every holder of
    # every waiting job made the report quadratic in jobs (1,000 jobs: 2.3 MB of text, 7.7 MB of JSON).
    root = tmp_path / "profiles"
    (root / "clusters").mkdir(parents=True)
    (root / "jobs").mkdir()
    (root / "clusters" / "lab.yaml").write_text(
        'apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: lab\nkubernetesVersion: "1.32"\nnamespaces: [mpi]\n'
        "nodePools:\n  - name: cpu\n    hardware: cpu-node\n    nodes: 10\n", encoding="utf-8")
    for i in range(22):
        (root / "jobs" / f"job-{i:02d}.yaml").write_text(
            f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: job-{i:02d}\ncluster: lab\npool: cpu\n"
            "image: mpioperator/mpi-pi:openmpi\nprogram: [/home/mpiuser/pi]\nworkers: 1\nresources: {cpu: \"100\"}\n",
            encoding="utf-8")
    plan = _plan(root)
    last = _job(plan, "job-21")
    assert (last.state, last.waits_for_omitted) == (WAITS, 2)
    assert last.waits_for == tuple(f"job-{i:02d}" for i in range(8))
    text = plan_text(plan)
    assert "    job-21 waits for nodes of pool 'cpu', held by job-00, job-01, job-02, job-03, job-04, job-05, job-06, " \
        "job-07 and 2 more\n" in text
    assert "  note: pool 'cpu': job-10, job-11, job-12, job-13, job-14, job-15, job-16, job-17 and 4 more cannot run " \
        "beside job-00, job-01, job-02, job-03, job-04, job-05, job-06, job-07 and 2 more." in text
    jobs = {job["name"]: job for c in json.loads(plan_json(plan))["clusters"] for p in c["pools"] for job in p["jobs"]}
    assert (len(jobs["job-21"]["waits_for"]), jobs["job-21"]["waits_for_omitted"]) == (8, 2)


def test_a_job_waiting_for_a_cohort_of_ten_queues_names_eight(tmp_path):
    # Ten queues of one node each share a cohort of 10 x 128 CPUs; 20 jobs of 64 CPUs and a launcher's 1, spread over
    # the queues: 19 are admitted (1,235 CPUs), the 20th waits for the cohort's quota, held by all 19. Keeping a
    # cohort's members and totals, not summing them anew per job, makes 1,000 jobs on 2,000 queues plan in 0.4 s,
    # not 10 s.
    root = tmp_path / "profiles"
    (root / "clusters").mkdir(parents=True)
    (root / "jobs").mkdir()
    queues = "".join(f"    - name: q{i}\n      namespaces: [n{i}]\n      nodes: {{cpu: 1}}\n      cohort: c\n"
                     for i in range(10))
    (root / "clusters" / "lab.yaml").write_text(
        'apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: lab\nkubernetesVersion: "1.32"\n'
        f"namespaces: [{', '.join(f'n{i}' for i in range(10))}]\nnodePools:\n  - name: cpu\n    hardware: cpu-node\n"
        "    nodes: 10\n    nodeLabels: {example.com/pool: cpu}\nscheduling:\n  scheduler: kueue\n  queues:\n"
        + queues, encoding="utf-8")
    for i in range(20):
        (root / "jobs" / f"job-{i:02d}.yaml").write_text(
            f"apiVersion: mpigen/v1alpha1\nkind: Job\nname: job-{i:02d}\ncluster: lab\npool: cpu\n"
            f"namespace: n{i % 10}\nimage: mpioperator/mpi-pi:openmpi\nprogram: [/home/mpiuser/pi]\nworkers: 1\n"
            'resources: {cpu: "64"}\n', encoding="utf-8")
    plan = _plan(root)
    last = _job(plan, "job-19")
    assert (last.state, last.waits_for, last.waits_for_omitted) == (WAITS, tuple(f"job-{i:02d}" for i in range(8)), 11)
    assert last.reason == "quota its cohort shares (queues 'q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7' and 2 more)"


def test_a_narrowed_plan_keeps_the_chosen_clusters_and_the_pools_of_the_chosen_jobs_whole(example):
    from mpigen.insight.plan import narrowed
    from mpigen.model import Selection

    whole = _plan(PROFILES)
    assert [c.name for c in narrowed(whole, Selection(clusters=frozenset({"dgx-lab"}))).clusters] == ["dgx-lab"]
    (cluster,) = narrowed(whole, Selection(jobs=frozenset({"pi"}))).clusters
    full = next(c for c in whole.clusters if c.name == "dgx-lab")
    (pool,) = cluster.pools
    assert pool == next(p for p in full.pools if any(job.name == "pi" for job in p.jobs))  # whole: who waits for whom


def test_plan_shows_each_workers_claimed_gpu_nic_pairs_and_nothing_more_elsewhere(example):
    """Under DRA a job's line says what each worker claims (profiles/hardware/dgx-h100-ib.yaml: one GPU under each
    NIC's PCIe root; gb200-ib's GPUs share no PCIe root with a NIC, so its pairs are counted, not aligned); the plan of
    a job without DRA is what it was."""
    plan = plan_fleet(example.fleet, example.documents, example.unfit)
    text = plan_text(plan)
    pairs = ", ".join(f"rail{i} NIC nic{i} ({interface}) + 1 GPU (same PCIe root)" for i, interface in enumerate(
        ("ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0", "ibp154s0", "ibp192s0", "ibp206s0", "ibp220s0")))
    assert f"\n    llm-pretrain  2 x 8 GPU  16    16     2      starts  -          {PROFILES}/jobs/llm-pretrain.yaml:11\n" \
        f"    llm-pretrain worker claims: {pairs}\n" in text
    assert "    mnnvl-allreduce worker claims: rail0 NIC nic0 (ibp3s0) + 1 GPU (not aligned), " in text
    assert text.count("worker claims: ") == sum(job.devices is not None for job in example.fleet.jobs) == 2
    without = replace(plan, clusters=tuple(replace(c, pools=tuple(replace(p, jobs=tuple(
        replace(j, devices=None) for j in p.jobs)) for p in c.pools)) for c in plan.clusters))
    assert plan_text(without) == "".join(line for line in text.splitlines(keepends=True)
                                         if " worker claims: " not in line)
    jobs = {job["name"]: job for c in json.loads(plan_json(plan))["clusters"] for p in c["pools"] for job in p["jobs"]}
    assert jobs["resnet50-dgx"]["devices"] is None
    assert jobs["llm-pretrain"]["devices"]["pairs"][0] == {
        "gpus": 1, "rail": "rail0", "nic": "nic0", "interface": "ibp24s0", "alignment": "pcieRoot",
        "fact": "gpu.nicDistance PIX: each of the 8 NICs sits under one PCIe root with 1 of the 8 GPUs"}
