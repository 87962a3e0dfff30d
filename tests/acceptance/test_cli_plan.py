"""`mpigen plan` and `mpigen explain` as a user runs them: exit codes, file:line, JSON, and nothing written on error."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from xml.etree import ElementTree

from conftest import (
    PROFILES,
    RAW_CONTROL,
    REPO,
    TRAIN_JOB,
    WIDE_JOB,
    big_cluster,
    invoke_mpigen,
    memory_limited,
    nvl72_edits,
    run_limited,
    run_mpigen,
    snapshot,
    without_root_privileges,
)


def test_plan_of_the_example_fleet():
    done = run_mpigen("plan", PROFILES, "--strict")
    assert done.returncode == 0, done.stderr
    assert "pool dgx: 8 x dgx-1" in done.stdout and "language-bert waits for quota" in done.stdout
    # dgx-pod's domains: a rack (leaf switch) of 4 nodes, a block of 8 (profiles/clusters/dgx-pod.yaml)
    assert "    vision-resnet50 topology: level rack (required): 4 node(s), a rack holds 4: fits in one rack\n" \
        in done.stdout
    assert "    language-bert topology: level block (preferred): 6 node(s), a block holds 8: fits in one block\n" \
        in done.stdout
    # llm-pretrain claims each of dgx-h100-ib's 8 NICs with the GPU under its PCIe root (nicDistance PIX)
    assert "    llm-pretrain worker claims: rail0 NIC nic0 (ibp24s0) + 1 GPU (same PCIe root), rail1 NIC nic1 (ibp64s0) " \
        "+ 1 GPU (same PCIe root), " in done.stdout
    # resnet50-dgx: 16 GPUs x estimatedHours 3
    assert done.stdout.rstrip().endswith("15 job(s): 14 start at once, 1 wait, 0 can never run; 48 GPU-hours estimated "
                                         "(1 job(s))")
    data = json.loads(run_mpigen("plan", PROFILES, "--output", "json").stdout)
    assert data["summary"]["waits"] == 1


def test_plan_and_explain_show_the_domain_fit_and_the_slices_of_a_job_larger_than_one_nvlink_domain(profiles_copy):
    """36 GB200 trays required in one block of 36 (tests/conftest.py `nvl72_edits`): the block holds them, in two slices
    of one NVLink domain (72 GPUs / 4 a tray = 18) each; explain says where each size came from and what the workers
    carry (Kueue's podset slice annotations, v0.13.0 and later, kubernetes-sigs/kueue #5596)."""
    root = profiles_copy(nvl72_edits())
    plan = invoke_mpigen("plan", root, "--cluster", "dgx-pod")
    assert plan.returncode == 0, plan.stderr
    assert ("    vision-resnet50 topology: level block (required): 36 node(s), a block holds 36: fits in one block; 2 "
            "slices of 18 workers, each within one rack\n") in plan.stdout
    explain = invoke_mpigen("explain", "-p", root, "vision-resnet50")
    assert explain.returncode == 0, explain.stderr
    cluster = root / "clusters" / "dgx-pod.yaml"
    for lines in (["  domain size = 36 node(s) a block", f"      from {cluster}:42: scheduling.topology[0].domainNodes"],
                  ["  slice domain size = 18 node(s) a rack",
                   "      because one NVLink domain (gpu.nvlinkDomainGpus 72 / 4 GPUs a node)"],
                  ["  domain fit = fits in one block; 2 slices of 18 workers, each within one rack"],
                  ["  worker annotations = kueue.x-k8s.io/podset-required-topology=fabric.example.com/block; "
                   "kueue.x-k8s.io/podset-slice-required-topology=nvidia.com/gpu.clique; "
                   "kueue.x-k8s.io/podset-slice-size=18"]):
        assert "\n".join(lines) + "\n" in explain.stdout, explain.stdout


def test_a_job_that_can_never_run_is_reported_and_fails_only_under_strict(profiles_copy):
    root = profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 40\n"})
    lenient = invoke_mpigen("plan", root)
    assert lenient.returncode == 0, lenient.stderr
    where = f"{root / 'jobs/train.yaml'}:8:12"
    assert f"{where}: train can never run: 5 full-node workers need 5 nodes" in lenient.stdout
    strict = invoke_mpigen("plan", root, "--strict")
    assert strict.returncode == 1 and "1 job(s) can never run where they are (--strict)" in strict.stderr
    assert "Traceback" not in strict.stderr
    jobs = [j for c in json.loads(invoke_mpigen("plan", root, "--output", "json").stdout)["clusters"]
            for p in c["pools"] for j in p["jobs"]]
    assert next(j for j in jobs if j["name"] == "train")["location"]["line"] == 8


def test_a_profile_error_stops_the_plan_and_nothing_is_drawn(profiles_copy, tmp_path):
    root = profiles_copy({"jobs/train.yaml": TRAIN_JOB + "totalGpus: 40\nworkerz: 2\n"})
    done = invoke_mpigen("plan", root, "--html", tmp_path / "plan.html")
    assert done.returncode == 1 and "train.yaml:9:1" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "plan.html").exists()


def test_a_picture_that_cannot_be_written_is_a_clear_error(tmp_path):
    done = invoke_mpigen("plan", PROFILES, "--svg", tmp_path / "missing" / "plan.svg")
    assert done.returncode == 1 and done.stderr.startswith("error: cannot write ") and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_picture_replaces_only_a_plain_file_and_never_a_profile(tmp_path):
    """The second red team's case: `plan --html PATH` replaced whatever stood at PATH (a FIFO, a link to /dev/null,
    a profile). Now each is one `error:` line (a path inside the profiles is a usage error, as for render's output
    folder) and nothing anywhere changes; a plain file is still replaced."""
    profiles = shutil.copytree(PROFILES, tmp_path / "profiles")
    (tmp_path / "outside").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "null").symlink_to("/dev/null")
    (tmp_path / "site").symlink_to(tmp_path / "outside", target_is_directory=True)  # committed in a checkout
    before = snapshot(tmp_path)
    for target, says in ((tmp_path / "fifo", "it is a FIFO"), (tmp_path / "null", "it is a symbolic link"),
                         (tmp_path / "site" / "plan.html", "through " + str(tmp_path / "site"))):
        done = run_mpigen("plan", profiles, "--html", target)
        assert done.returncode == 1 and done.stderr.startswith("error: refusing to write "), done.stderr
        assert says in done.stderr and len(done.stderr.splitlines()) == 1 and done.stdout == "", done.stderr
    into_profile = run_mpigen("plan", profiles, "--svg", profiles / "jobs" / "pi.yaml")
    assert into_profile.returncode == 2 and "is inside the profiles path" in into_profile.stderr, into_profile.stderr
    assert snapshot(tmp_path) == before and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    (tmp_path / "plan.svg").write_text("old\n", encoding="utf-8")
    replaced = run_mpigen("plan", profiles, "--svg", tmp_path / "plan.svg")
    assert replaced.returncode == 0 and (tmp_path / "plan.svg").read_text(encoding="utf-8").startswith("<svg")


def test_a_picture_through_a_folder_that_may_be_searched_but_not_listed(tmp_path):
    """The walk that refuses links must not refuse a folder of mode 0311 on the way (e.g. a shared drop folder)."""
    (tmp_path / "drop").mkdir()
    (tmp_path / "drop").chmod(0o311)
    try:
        done = run_limited(["plan", PROFILES, "--svg", tmp_path / "drop" / "plan.svg"], without_root_privileges)
    finally:
        (tmp_path / "drop").chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "drop" / "plan.svg").read_text(encoding="utf-8").startswith("<svg")


def test_a_picture_to_standard_output_takes_the_place_of_the_plan(tmp_path):
    """`-` is standard output; it then carries the picture alone, and asking for two things there is a usage error."""
    page = run_mpigen("plan", PROFILES, "--html", "-", "--svg", tmp_path / "plan.svg", cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    assert page.stdout.startswith("<!DOCTYPE html>") and page.stdout.rstrip().endswith("</html>")
    assert "job(s):" not in page.stdout and page.stderr == f"wrote {tmp_path / 'plan.svg'}\n"
    assert not (tmp_path / "-").exists()
    for both, says in ((("--html", "-", "--svg", "-"), "--html and --svg both write -"),
                       (("--svg", "-", "--output", "json"), "--svg - writes the picture to standard output instead")):
        refused = run_mpigen("plan", PROFILES, *both, cwd=tmp_path)
        assert refused.returncode == 2 and refused.stdout == "" and says in refused.stderr, refused.stderr
    assert list(tmp_path.iterdir()) == [tmp_path / "plan.svg"]
    os.mkfifo(tmp_path / "fifo")
    no_page = run_mpigen("plan", PROFILES, "--html", "-", "--svg", tmp_path / "fifo")
    assert no_page.returncode == 1 and no_page.stdout == "" and "it is a FIFO" in no_page.stderr, no_page.stderr


def test_explain_by_name_from_the_repository_and_by_path():
    by_name = run_mpigen("explain", "resnet50-dgx", cwd=REPO)
    assert by_name.returncode == 0, by_name.stderr
    assert "  MPIJob name = resnet50-dgx-" in by_name.stdout
    assert "  13: worker 1, local rank 5, GPU 5, NIC ib2 (mlx5_2), rail rail2" in by_name.stdout
    by_path = run_mpigen("explain", "profiles/jobs/resnet50-dgx.yaml", cwd=REPO)
    assert by_path.stdout == by_name.stdout
    data = json.loads(run_mpigen("explain", "resnet50-dgx", "--output", "json", cwd=REPO).stdout)
    assert data["kind"] == "explain" and len(data["ranks"]) == 16 and data["ranks"][13]["nic"] == "ib2"


def test_explain_of_a_dra_job_follows_each_rail_from_the_hardware_line_to_the_claim_to_nccl():
    """explain stopped on a job whose rails are DRANET devices (no NetworkAttachmentDefinition to name); now each
    rail's chain: the line of profiles/hardware/dgx-h100-ib.yaml that pairs its NIC with a GPU (13: nicDistance PIX),
    the claim's requests and the NIC's line (18: nic0), the variables that name it."""
    done = invoke_mpigen("explain", "llm-pretrain", cwd=REPO)
    assert done.returncode == 0, done.stderr
    hardware = "profiles/hardware/dgx-h100-ib.yaml"
    for lines in (["  rail0 pairing = NIC nic0 + 1 GPU, same PCIe root",
                   f"      from {hardware}:13: gpu.nicDistance PIX: each of the 8 NICs sits under one PCIe root with 1 "
                   "of the 8 GPUs; the worker's 8 GPUs spread evenly over its 8 rails"],
                  ['  rail0 claim = requests gpus-rail0 (1 x gpu.nvidia.com) and nic-rail0 (1 x dranet-rdma, '
                   'device.attributes["dra.net"].ifName == "ibp24s0"), matchAttribute resource.kubernetes.io/pcieRoot; '
                   'DRANET names it rail0 in the pod',
                   f"      from {hardware}:18: pfName ibp24s0 of NIC nic0: the NIC's interface on the node, which the "
                   "request selects it by; the claim's opaque config (driver dra.net) names it rail0 in the pod"],
                  ["  rail7 in NCCL and UCX = NCCL_SOCKET_IFNAME rail7; NCCL_IB_HCA mlx5_11:1; UCX_NET_DEVICES mlx5_11:1",
                   f"      from {hardware}:25: hca mlx5_11 of NIC nic7; "],
                  ["  nvidia.com/gpu = none: 8 GPUs claimed through DRA (claim devices)",
                   "      from profiles/clusters/h100-dra.yaml:14: dra: "]):
        assert "\n".join(lines) in done.stdout, done.stdout


def test_explain_a_job_profile_kept_outside_the_fleet(tmp_path):
    job = tmp_path / "train.yaml"
    job.write_text(TRAIN_JOB + "totalGpus: 8\n", encoding="utf-8")
    done = invoke_mpigen("explain", job, "-p", PROFILES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"job train ({job}): cluster dgx-lab, pool dgx")
    assert f"{job}:8: totalGpus 8 / 8 GPUs per worker" in done.stdout


def test_explain_an_unknown_job():
    done = invoke_mpigen("explain", "resnet50-dgz", "-p", PROFILES)
    assert done.returncode == 1 and "no job 'resnet50-dgz'" in done.stderr and "did you mean 'resnet50-dgx'" in \
        done.stderr


# --- size bounds: a valid fleet of any size is planned, explained and drawn in bounded time, memory and output ------

MEMORY = 1536 * 2**20  # address space: the example fleet's plan takes about a tenth of it
GPU64_HARDWARE = """\
apiVersion: mpigen/v1alpha1
kind: Hardware
name: g64
gpu: {count: 64, model: X, memoryGiB: 16}
cpu: {sockets: 2, coresPerSocket: 64}
memoryGiB: 2048
"""
"""The most GPUs a node may have (the schema's bound): 65 boxes a node in the picture."""


def big_fleet(root: Path, pools: int, nodes: int, job: str, hardware: str = "cpu-node") -> Path:
    """One cluster of `pools` pools of `nodes` nodes of `hardware` (by default the built-in cpu-node: 128 logical
    CPUs; g64 is GPU64_HARDWARE), and `job`."""
    (root / "clusters").mkdir(parents=True)
    (root / "jobs").mkdir()
    if hardware == "g64":
        (root / "hardware").mkdir()
        (root / "hardware" / "g64.yaml").write_text(GPU64_HARDWARE, encoding="utf-8")
    (root / "clusters" / "big.yaml").write_text(big_cluster(pools, nodes, hardware), encoding="utf-8")
    (root / "jobs" / "wide.yaml").write_text(WIDE_JOB + job, encoding="utf-8")
    return root


def bounded(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real command line under a 60 s timeout and 1.5 GiB of address space."""
    done = run_limited(list(args), memory_limited(MEMORY), timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return done


def test_plan_places_5000_one_node_workers_on_5000_nodes(tmp_path):
    # First fit scanned every node for every worker, counting the job's workers on each: 1,000 such workers took
    # 8 s, 5,000 more than 120 s. Identical nodes are now placed together.
    root = big_fleet(tmp_path / "profiles", 1, 5_000, 'workers: 5000\nslotsPerWorker: 1\nresources: {cpu: "100"}\n')
    done = bounded("plan", root, "--output", "json")
    [job] = [j for c in json.loads(done.stdout)["clusters"] for p in c["pools"] for j in p["jobs"]]
    assert (job["state"], job["nodes_alone"], job["worker_nodes"]) == ("starts", 5_000, list(range(5_000)))


def test_explain_of_a_job_of_6400000_ranks_lists_the_first_and_last_and_says_what_it_left_out(tmp_path):
    # 6,400,000 ranks, once (as 100,000 workers of 64 ranks each) printed as 388 MB after 2.8 GB of memory (a
    # MemoryError under 2 GB). So many workers are refused now (the next test): 10,000 workers of 640 ranks.
    root = big_fleet(tmp_path / "profiles", 1, 10_000, "workers: 10000\nslotsPerWorker: 640\n")
    text = bounded("explain", "wide", "-p", root).stdout
    assert len(text) < 1_000_000
    assert "  ranks = 6400000\n" in text and "  63: worker 0, local rank 63, GPU -, NIC -, rail -\n" in text
    assert "  ... 6399872 more ranks (64 to 6399935), not listed: rank r is local rank r mod 640 of worker r div 640" \
        in text
    assert "  6399999: worker 9999, local rank 639, GPU -, NIC -, rail -\n" in text
    data = json.loads(bounded("explain", "wide", "-p", root, "--output", "json").stdout)
    assert (data["rank_count"], data["ranks_omitted"], len(data["ranks"])) == (6_400_000, 6_399_872, 128)
    assert [r["rank"] for r in data["ranks"][63:65]] == [63, 6_399_936]


def test_a_job_whose_hostfile_is_more_than_etcd_stores_is_refused_at_its_size(tmp_path):
    # 100,000 CPU workers: mpi-operator's ConfigMap wide-<hash>-config would hold a hostfile line and an `echo <host>`
    # line per worker, 98 bytes plus twice the index's digits each: 9,800,000 + 2 x 488,890 + `#!/bin/sh\n`. It was
    # valid, and its own hostfile ConfigMap rendered at 5.6 MB; etcd stores 1.5 MiB. Line 11 is `workers: 100000`.
    root = big_fleet(tmp_path / "profiles", 1, 100_000, "workers: 100000\n")
    for command in (("validate", root), ("explain", "wide", "-p", root), ("render", root, "-o", tmp_path / "charts")):
        done = run_limited(list(command), memory_limited(MEMORY), timeout=60)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert done.stderr.startswith(
            f"{root / 'jobs' / 'wide.yaml'}:11:10: error: 100000 workers give mpi-operator's ConfigMap wide-<hash>-config "
            "10,777,790 bytes of hostfile and discover_hosts.sh (a line per worker), more than the 1,507,328 an object "
            "may hold beside its metadata under etcd's default limit of 1,572,864 bytes: mpi-operator could not create "
            "it, and the job would never start; use at most 14162 workers, or shorten the job name and namespace (each "
            "line holds both)\n"), done.stderr
    assert not (tmp_path / "charts").exists()
    plan = json.loads(bounded("plan", root, "--output", "json").stdout)  # a job that can never run where it is
    [job] = [j for c in plan["clusters"] for p in c["pools"] for j in p["jobs"]]
    assert job["state"] == "never" and "10,777,790 bytes" in job["reason"]


def test_explain_of_workers_with_two_billion_slots_each(tmp_path):
    root = big_fleet(tmp_path / "profiles", 1, 2, "workers: 2\nslotsPerWorker: 2147483647\n")
    text = bounded("explain", "wide", "-p", root).stdout
    assert len(text) < 1_000_000
    assert "  ... 4294967166 more ranks (64 to 4294967229), not listed" in text
    assert "  4294967293: worker 1, local rank 2147483646, GPU -, NIC -, rail -\n" in text


def test_the_picture_of_20_pools_of_100000_nodes_draws_64_of_each_and_says_so(tmp_path):
    # An 8 KB cluster profile once drew every node: a 491 MB page.
    root = big_fleet(tmp_path / "profiles", 20, 100_000, "workers: 100\n")
    page, picture = tmp_path / "plan.html", tmp_path / "plan.svg"
    bounded("plan", root, "--html", page, "--svg", picture)
    html, svg = page.read_text(encoding="utf-8"), picture.read_text(encoding="utf-8")
    assert len(html) < 2_000_000 and len(svg) < 2_000_000
    assert '<p data-omitted-nodes="1998720"><strong>Not every node is drawn:</strong>' in html
    for drawing in (html, svg):
        assert drawing.count('data-omitted-nodes="99936"') == 20 and drawing.count("data-node=") == 20 * 64
        assert "... and 99936 more nodes like these (nodes 64 to 99999), not drawn" in drawing
        assert "wide: 36 of its 100 workers on them" in drawing  # one a node (64 slots: a node's cores)


def test_the_picture_of_1000_pools_of_64_gpu_nodes_stops_at_the_pages_budget_and_says_so(tmp_path):
    # Every pool was within the 64 nodes drawn a pool, but the page had no bound: 200 pools of 64 nodes of 64 GPUs
    # (an 8.6 KB cluster profile) drew a 175 MB page, 1,000 of them ended in a MemoryError.
    root = big_fleet(tmp_path / "profiles", 1_000, 64, "workers: 1\ngpusPerWorker: 8\n", hardware="g64")
    page, picture = tmp_path / "plan.html", tmp_path / "plan.svg"
    bounded("plan", root, "--html", page, "--svg", picture)
    html, svg = page.read_text(encoding="utf-8"), picture.read_text(encoding="utf-8")
    assert len(html) < 3_000_000 and len(svg) < 3_000_000
    # 8,192 boxes of 65 a node: pool p0 whole (64 nodes), p1 in part (62), the 998 pools after them one box.
    assert ('<p data-omitted-nodes="63874" data-omitted-pools="998"><strong>Not every node is drawn:</strong>'
            in html)
    assert "The page draws at most 8192 boxes" in html
    for drawing in (html, svg):
        assert drawing.count("data-node=") == 64 + 62
        assert drawing.count("<g data-gpu=") == (64 + 62) * 64
        assert drawing.count('data-pool="') == 2
        assert "... and 2 more nodes like these (nodes 62 to 63), not drawn" in drawing
        assert '" data-omitted-nodes="63872" data-omitted-pools="998">' in drawing
        assert "... and 998 more pool(s), 63872 nodes, not drawn: the page draws at most 8192 boxes" in drawing
        assert "pools p2, p3, p4, p5, p6, p7, p8, p9 and 990 more" in drawing
        assert 'data-rank="7"' in drawing and "wide (pool p0, 1 worker(s) x 8 GPU(s), 8 ranks): starts" in drawing


def test_a_picture_of_a_file_name_with_control_characters_is_well_formed(profiles_copy, tmp_path):
    # A job that can never run is named by its file in the legend: `\x01` and ESC once reached the SVG raw, and no
    # XML parser read it.
    root = profiles_copy({"jobs/pi\x01\x1bx.yaml": TRAIN_JOB + "totalGpus: 40\n"})
    page, picture = tmp_path / "plan.html", tmp_path / "plan.svg"
    done = run_mpigen("plan", root, "--html", page, "--svg", picture)
    assert done.returncode == 0, done.stderr
    legend = "".join(ElementTree.parse(picture).getroot().itertext())
    assert "train (pool dgx, 0 ranks): can never run: " in legend and "pi\\x01\\x1bx.yaml:8:12" in legend
    html, svg = page.read_text(encoding="utf-8"), picture.read_text(encoding="utf-8")
    assert "pi\\x01\\x1bx.yaml:8:12" in html and not RAW_CONTROL.search(html) and not RAW_CONTROL.search(svg)


def test_plan_and_explain_json_are_ascii_whatever_a_file_name_holds(profiles_copy):
    # A right-to-left override and a CSI in C1 from a file name were printed raw.
    name = "t\u202e\u009b.yaml"
    root = profiles_copy({f"jobs/{name}": TRAIN_JOB + "workers: 1\n"})
    for args in (("plan", root), ("explain", "train", "-p", root)):
        done = run_mpigen(*args, "--output", "json")
        assert done.returncode == 0, done.stderr
        assert done.stdout.isascii() and "/jobs/t\\u202e\\u009b.yaml" in done.stdout
        assert f"/jobs/{name}" in json.dumps(json.loads(done.stdout), ensure_ascii=False)
