"""Shared fixtures: the example fleet, real Helm binaries, the upstream reference data.

The upstream files the tests read (CRDs, examples, reference code) are copied into tests/upstream/ with their
provenance (tests/upstream/SOURCES.yaml), so a fresh clone runs every test. A missing Helm binary fails the tests
that need it, saying how to get one (`make test` installs both).
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import functools
import hashlib
import json
import os
import pickle
import re
import resource
import shutil
import subprocess
import sys
import threading
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from pathlib import Path
from types import MappingProxyType
from typing import Any
from unittest import mock

import pytest
from ruamel.yaml import YAML

import mpigen.check.run as check_module
import mpigen.check.schema_stage as schema_stage_module
import mpigen.load.files as profile_files
from mpigen.commands.pipeline import CompileResult, compile_profiles
from mpigen.insight import capacity
from mpigen.load import load_paths
from mpigen.load.catalogue import expand_hardware
from mpigen.load.document import ProfileFile
from mpigen.load.parse import load_bytes
from mpigen.manifests.node_placement import launcher_pool
from mpigen.model import Scheduler
from mpigen.package import output_files
from mpigen.readback.discover import ChartInfo
from mpigen.support.diagnostics import Diagnostic, Severity
from mpigen.support.parallel import split_map
from mpigen.validate import validate
from mpigen.vocabulary import kubernetes
from mpigen.write import CACHE_DIR

REPO = Path(__file__).resolve().parent.parent
PROFILES = REPO / "profiles"
CHARTS = REPO / "charts"

# The example fleet's fabric acceptance charts, by hand from profiles/clusters/*.yaml `acceptance` and the rule
# (generator/model/acceptance.py): each GPU pool of at least 2 nodes gets `accept-<pool>-<collective>-pair` per
# collective, `accept-<pool>-<collective>-pool` per collective where the pool (or `maxNodes`) has more than 2 nodes,
# and `accept-<pool>-perftest-<rail>` per rail, in `<cluster>/acceptance/`.
ACCEPTANCE_POOLS = {  # cluster: (its GPU pool, that pool's nodes for the pool-wide run, collectives, rails)
    "dgx-lab": ("dgx", 4, ("all-gather", "all-reduce"), 4),  # its cpu pool has no GPUs
    "dgx-pod": ("dgx", 8, ("all-reduce",), 4),
    "gb200-rack": ("gb200", 18, ("all-reduce",), 4),
    "h100-dra": ("h100", 4, ("all-reduce",), 8),
    "netapp-lab": ("dgx", 2, ("all-reduce",), 4),  # 2 nodes: no pool-wide run
    "roce-lab": ("dgx", 2, ("all-reduce",), 4),  # 2 nodes: no pool-wide run
    "volcano-lab": ("dgx", 4, ("all-reduce",), 4),  # 6 nodes, `maxNodes: 4`
}
ACCEPTANCE_CHARTS = sorted(
    f"{cluster}/acceptance/accept-{pool}-{test}" for cluster, (pool, nodes, collectives, rails) in ACCEPTANCE_POOLS.items()
    for test in [f"{c}-{scope}" for c in collectives for scope in ("pair", "pool") if scope == "pair" or nodes > 2]
    + [f"perftest-rail{rail}" for rail in range(rails)])
assert len(ACCEPTANCE_CHARTS) == 8 + 6 + 6 + 10 + 5 + 5 + 6  # 46: by cluster in the order above
# The files `mpigen render profiles` writes: 211 for the 25 charts and their bootstrap files; an acceptance chart has 7
# (Chart.yaml, values.yaml, values.schema.json, NOTES.txt, _helpers.tpl, its MPIJob and hostfile ConfigMap templates),
# h100-dra's 10 and gb200-rack's 6 a ResourceClaimTemplate too, gb200-rack's a ComputeDomain too; and dgx-lab's and
# dgx-pod's bootstrap/apps/acceptance.yaml.
FLEET_FILES = 211 + 46 * 7 + (10 + 6) + 6 + 2
assert FLEET_FILES == 557

# A GPU job on the example cluster's DGX-1 pool, sized by whatever a test adds (7 lines: additions start at 8).
TRAIN_JOB = """\
apiVersion: mpigen/v1alpha1
kind: Job
name: train
cluster: dgx-lab
pool: dgx
image: nvcr.io/nvidia/pytorch:24.03-py3
program: [python, train.py]
"""
# A CPU job `wide` on cluster `big` (`big_cluster`), namespace mpi, a whole node a worker (the built-in cpu-node: 64
# cores, so 64 slots), sized by whatever a test adds (9 lines: additions start at 10).
WIDE_JOB = """\
apiVersion: mpigen/v1alpha1
kind: Job
name: wide
cluster: big
pool: p0
image: mpioperator/mpi-pi:openmpi
program: [/home/mpiuser/pi]
runAsUser: 1000
sshAuthMountPath: /home/mpiuser/.ssh
sshPort: 2222
"""


def nvl72_edits(trays: int = 36, topology: str = "    level: block\n") -> dict[str, str | None]:
    """Edits of the example fleet for a GB200 NVL72 pod: dgx-pod's pool of 72 trays of 4 GPUs (NVLink domains of 72
    GPUs: 18 trays, GFD's `nvidia.com/gpu.clique` label), blocks of 36 trays over the cliques, and the vision job on
    `trays` trays with `topology` (the lines under its `scheduling.topology:`), under a waitForPodsReady timeout that
    covers a first pull on them. The language job is removed."""
    pod = (PROFILES / "clusters" / "dgx-pod.yaml").read_text(encoding="utf-8")
    vision = (PROFILES / "jobs" / "vision-resnet50.yaml").read_text(encoding="utf-8")
    dgx1 = (PROFILES / "hardware" / "dgx-1.yaml").read_text(encoding="utf-8")
    tray = dgx1.replace("name: dgx-1\n", "name: gb200-tray\n")
    tray = tray.replace("  count: 8\n", "  count: 4\n  nvlinkDomainGpus: 72\n")
    for nic, gpus in (("0, 1", "0"), ("2, 3", "1"), ("4, 5", "2"), ("6, 7", "3")):
        tray = tray.replace(f"gpus: [{nic}]", f"gpus: [{gpus}]")
    pod = pod.replace("hardware: dgx-1", "hardware: gb200-tray").replace("    nodes: 8\n", "    nodes: 72\n")
    pod = pod.replace("{dgx: 4}", "{dgx: 36}").replace("      domainNodes: 8  # the whole pod\n", "      domainNodes: 36\n")
    rack = "nodeLabel: fabric.example.com/leaf-switch\n      domainNodes: 4  # four nodes under each leaf switch\n"
    pod = pod.replace(rack, "nodeLabel: nvidia.com/gpu.clique\n")
    wait = "    timeoutSeconds: 600\n"
    assert wait in pod
    pod = pod.replace(wait, "    timeoutSeconds: 1800\n")  # a first pull on 36 trays: Kueue v0.19's default of 30m
    vision = vision.replace("totalGpus: 32", f"totalGpus: {4 * trays}").replace("    level: rack\n", topology)
    return {"hardware/gb200-tray.yaml": tray, "clusters/dgx-pod.yaml": pod, "jobs/vision-resnet50.yaml": vision,
            "jobs/language-bert.yaml": None}


def big_cluster(pools: int, nodes: int, hardware: str = "cpu-node") -> str:
    """Cluster `big` of `pools` pools `p0`, `p1`, ... of `nodes` nodes of `hardware`, namespace mpi."""
    listed = "".join(f"  - name: p{i}\n    hardware: {hardware}\n    nodes: {nodes}\n" for i in range(pools))
    return ('apiVersion: mpigen/v1alpha1\nkind: Cluster\nname: big\nkubernetesVersion: "1.32"\nnamespaces: [mpi]\n'
            f"nodePools:\n{listed}")


# What no text mpigen prints may hold raw (mpigen.support.diagnostics.one_line writes each as an escape): C0 controls but
# tab and newline, DEL, C1, bidi controls, line separators, lone surrogates, U+FFFE/U+FFFF. Spelt out here rather
# than imported, so a narrower set in the code fails the tests.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
                         "\ud800-\udfff\ufffe\uffff]")
# Names that hold all of them at once: an OSC window title, an OSC 8 hyperlink, clear screen and a cursor move, CSI in
# C1, a right-to-left override, NUL, \x01 and \x0b (no XML 1.0 parser reads them), a lone surrogate, U+FFFF.
HOSTILE_NAME = ("a\x1b]0;owned\x07\x1b]8;;https://example.invalid/\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x1b[1;1H"
                "\x9b31m\u202eb\x00\x01\x0b\ud800\uffffc")

# The upstream projects' own files (CRDs, examples, reference code) the tests judge mpigen's output by, copied
# verbatim; tests/upstream/SOURCES.yaml names each one's repository, commit, path and licence.
UPSTREAM = REPO / "tests" / "upstream"


SARIF_SCHEMA = UPSTREAM / "sarif" / "sarif-schema-2.1.0.json"


@functools.cache
def _sarif_validator() -> Any:
    from jsonschema import Draft4Validator

    return Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")))


def sarif_problems(text: str) -> list[str]:
    """What the SARIF 2.1.0 JSON schema (OASIS's own, tests/upstream/sarif/) finds wrong with a log; [] when valid."""
    return [f"{list(error.absolute_path)}: {error.message}" for error in _sarif_validator().iter_errors(json.loads(text))]


@pytest.fixture(scope="session")
def upstream() -> Path:
    """tests/upstream/: the upstream CRDs, examples and reference code."""
    return UPSTREAM


def helm_path(major: int) -> Path | None:
    configured = os.environ.get(f"MPIGEN_HELM{major}")
    candidates = [Path(configured)] if configured else []
    candidates.append(REPO / ".tools" / f"helm{major}" / "helm")
    return next((c for c in candidates if c.exists()), None)


def require_helm(major: int) -> Path:
    """A real Helm `major` binary. `make test` installs both, so a missing one fails the test, saying how to get it,
    instead of skipping what the test proves."""
    path = helm_path(major)
    if path is None:
        pytest.fail(f"no Helm {major} binary: run `make helm` (it installs .tools/helm{major}/helm), "
                    f"or point MPIGEN_HELM{major} at one", pytrace=False)
    return path


@pytest.fixture(scope="module", params=[3, 4], ids=["helm3", "helm4"])
def helm(request: pytest.FixtureRequest) -> Path:
    """A real Helm binary; the tests that take it run once per major version.

    Module-scoped, so pytest keeps each module's tests together: a session-scoped parameter has it run every module's
    Helm 3 tests, then every module's Helm 4 tests, then the rest, building each module's fixtures (a rendered matrix,
    a compiled fleet) once for each of the three."""
    return require_helm(request.param)


@pytest.fixture(scope="module")
def helm4() -> Path:
    """Helm 4, which `check --strict` renders the matrices with (Argo CD 3.5 and Flux ship it); that Helm 3 renders
    each chart to the very same objects is `assert_helm_renders_the_compiled_objects`, far cheaper than a
    second strict check (tests/acceptance/test_matrix.py)."""
    return require_helm(4)


def run_helm(helm: Path, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(helm), *map(str, args)], capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"helm {' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}")
    return result


class ParseMemo:
    """The YAML trees of the profile files this process parsed, by their bytes: the many tests that lay an edit over
    the example fleet (the corpus, validation, the fuzzers) load its 27 files each time, and parsing them was most of
    what those tests cost. A file whose bytes were parsed before gets that tree again, as a fresh copy through pickle
    (the form in which the loader's second process already hands its half of the trees back: see
    generator/support/parallel.py); any other bytes, and every file that is refused, go through the real parser. The
    tests of loading itself parse every time (`parse_every_time`)."""

    def __init__(self) -> None:
        self.trees: dict[bytes, tuple[bytes, tuple[str, ...]]] = {}

    def load_bytes(self, raw: bytes, path: str, source: str) -> tuple[ProfileFile | None, list[Diagnostic]]:
        known = self.trees.get(raw)
        if known is not None:
            return ProfileFile(path=path, source=source, data=pickle.loads(known[0]), lines=known[1]), []
        document, diagnostics = load_bytes(raw, path, source)
        self._keep(raw, document, diagnostics)
        return document, diagnostics

    def split_map(self, work: Callable[..., list[Any]], items: Any, weight: Any = None, tally: Any = None
                  ) -> list[Any]:
        """The loader's split_map, unchanged: the trees parsed in its second process are kept here too."""
        results = split_map(work, items, weight, tally=tally)
        if work is profile_files._load_each:
            for raw, _, document, diagnostics in results:
                if raw is not None and raw not in self.trees:
                    self._keep(raw, document, diagnostics)
        return results

    def _keep(self, raw: bytes, document: ProfileFile | None, diagnostics: list[Diagnostic]) -> None:
        if document is not None and not diagnostics:
            self.trees[raw] = (pickle.dumps(document.data, protocol=pickle.HIGHEST_PROTOCOL), document.lines)


@pytest.fixture(scope="session", autouse=True)
def parsed_once() -> Iterator[None]:
    """Every test loads profiles through one ParseMemo a process."""
    memo = ParseMemo()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(profile_files, "load_bytes", memo.load_bytes)
        patch.setattr(profile_files, "split_map", memo.split_map)
        yield


@pytest.fixture(scope="module")
def parse_every_time() -> Iterator[None]:
    """The loader as it is, for the tests of loading and of its parallel half (`pytestmark = usefixtures(...)`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(profile_files, "load_bytes", load_bytes)
        patch.setattr(profile_files, "split_map", split_map)
        yield


@pytest.fixture(scope="session")
def example() -> CompileResult:
    """The example fleet in profiles/, compiled in memory."""
    result = compile_profiles([PROFILES])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result


# --- the base fleet: each shape of the example fleet once (tests/acceptance/test_fuzz.py) ----------------------------

BASE_CLUSTERS = ("cpu-lab", "dgx-lab", "dgx-pod", "gb200-rack", "kai-lab", "kueue-lab", "roce-lab", "volcano-lab")
"""The example clusters that between them have every network provider, scheduler, Kueue API, GitOps tool, job backend,
DRA shape, kind of object and kind of output file of the example fleet (`fleet_shapes`; test_fuzz.py holds the two
equal): cpu-lab (no rails, Coscheduling, Flux), dgx-lab (SR-IOV device plugin, no scheduler, Argo CD, TrainJob),
dgx-pod (SR-IOV operator on InfiniBand, Kueue with topology and priority classes), gb200-rack (DRANET, DRA with a
ComputeDomain), kai-lab (KAI Scheduler: Queues under a parent, its Topology), kueue-lab (Kueue v1beta1), roce-lab
(SR-IOV operator on Ethernet) and volcano-lab (host network, Volcano, its Job backend). h100-dra and netapp-lab have no
shape of their own."""
BASE_ACCEPTANCE = "dgx-pod"
"""The one cluster of the base fleet that keeps its fabric acceptance charts (6 of the example's 46)."""


def without_keys(text: str, *keys: str) -> str:
    """The file's text without the top-level `keys` and the block under each."""
    out, skipping = [], False
    for line in text.split("\n"):
        if skipping and (line.startswith((" ", "-", "\t")) or not line.strip()):
            continue
        skipping = any(line.startswith(f"{key}:") for key in keys)
        if not skipping:
            out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


@functools.cache
def base_fleet() -> MappingProxyType[str, bytes]:
    """The base fleet's profile files, by path under the profiles folder, read once a process: every hardware file of
    profiles/, the clusters of BASE_CLUSTERS as written there (but for the `acceptance` block of all but
    BASE_ACCEPTANCE) and their jobs. For tests that compile the fleet for every example, where the example fleet's
    other clusters and 40 acceptance charts prove nothing more and cost most of the time (68 charts against 24)."""
    files: dict[str, bytes] = {}
    for path in sorted(PROFILES.rglob("*.yaml")):
        name, raw = path.relative_to(PROFILES).as_posix(), path.read_bytes()
        profile = YAML(typ="safe", pure=True).load(raw)
        cluster = profile["name"] if profile["kind"] == "Cluster" else profile.get("cluster")
        if profile["kind"] != "Hardware" and cluster not in BASE_CLUSTERS:
            continue
        if profile["kind"] == "Cluster" and cluster != BASE_ACCEPTANCE:
            raw = without_keys(raw.decode("utf-8"), "acceptance").encode("utf-8")
        files[name] = raw
    assert {f"clusters/{name}.yaml" for name in BASE_CLUSTERS} <= files.keys(), sorted(files)
    return MappingProxyType(files)


@pytest.fixture(scope="session")
def base_profiles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base fleet as a profiles folder, written once a session, for tests that render a fleet only to have charts
    to work on, whose number proves nothing there (the writer's). Read it; copy it to change it."""
    root = tmp_path_factory.mktemp("base-fleet") / "profiles"
    for name, raw in base_fleet().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(raw)
    return root


def fleet_shapes(result: CompileResult) -> set[tuple[str, ...]]:
    """What sorts of thing a compiled fleet has, whatever their number: each network provider, scheduler, Kueue API,
    GitOps tool and way of listing applications, DRA shape and job backend, each kind of object its charts hold and
    each name of a file it writes."""
    assert result.fleet is not None
    shapes: set[tuple[str, ...]] = set()
    for cluster in result.fleet.clusters:
        shapes |= {("network provider", cluster.network.provider.value),
                   ("scheduler", cluster.scheduling.scheduler.value)}
        if cluster.scheduling.scheduler is Scheduler.KUEUE:
            shapes.add(("Kueue API", cluster.scheduling.kueue_release.api_version))
        if cluster.gitops is not None:
            shapes.add(("GitOps", cluster.gitops.tool.value, cluster.gitops.applications.value))
        if cluster.dra is not None:
            shapes.add(("DRA", f"compute domains: {cluster.dra.compute_domains}"))
    shapes |= {("job backend", job.backend.value) for job in (*result.fleet.jobs, *result.fleet.acceptance)}
    shapes |= {("object", m.obj["apiVersion"], m.obj["kind"]) for chart in result.charts for m in chart.manifests}
    shapes |= {("output file", path.rsplit("/", 1)[-1]) for path in output_files(result.charts)}
    return shapes


@pytest.fixture
def profiles_copy(tmp_path: Path) -> Callable[..., Path]:
    """A copy of profiles/ in tmp, with files replaced (text), added, or removed (None)."""

    def make(edits: dict[str, str | None] | None = None) -> Path:
        root = tmp_path / "profiles"
        if root.exists():
            shutil.rmtree(root)
        shutil.copytree(PROFILES, root)
        for relpath, text in (edits or {}).items():
            target = root / relpath
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        return root

    return make


def is_run_of(name: str, job: str) -> bool:
    """Whether `name` is an MPIJob name of job `job` under the default naming policy: `<job>-<7 hex>`.

    Written out here rather than taken from mpigen.model.names, so that a change of the format fails tests.
    """
    return re.fullmatch(re.escape(job) + r"-[0-9a-f]{7}", name) is not None


def run_name_of(objects: list[dict[str, Any]], job: str) -> str:
    """The name of the one MPIJob of `job` among `objects`."""
    found = [o["metadata"]["name"] for o in objects if o.get("kind") == "MPIJob" and is_run_of(o["metadata"]["name"], job)]
    assert len(found) == 1, (job, found)
    return found[0]


def run_mpigen(*args: str | Path, cwd: Path | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, in its own process (`env`: variables set beside the environment's)."""
    return subprocess.run([sys.executable, "-m", "mpigen", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env={**os.environ, **env} if env is not None else None)


# Warnings a Python started as `python -m mpigen` does not print (its default filters): any other warning the command
# raises would reach its stderr raw.
SILENT_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def invoke_mpigen(*args: str | Path, cwd: Path | None = None,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command line in this process (click's runner), giving what `run_mpigen` gives: for the many variants of a
    command, where `run_mpigen` proves the whole command in a process of its own. It saves starting Python, importing
    mpigen and building what a command builds once a process (check's schemas) for every run. An exception the
    command lets out, the traceback the real one would print, fails the test with it, as does a Python warning the real
    command would print to stderr."""
    from click.testing import CliRunner

    from mpigen.commands.cli import main

    with current_folder(cwd or Path.cwd()), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(main, [str(arg) for arg in args], prog_name="mpigen", env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError("".join(traceback.format_exception(result.exception)))
    printed = [f"{w.category.__name__}: {w.message}" for w in caught if not issubclass(w.category, SILENT_WARNINGS)]
    assert not printed, "Python warnings, which the command prints raw to stderr:\n" + "\n".join(printed)
    return subprocess.CompletedProcess(["mpigen", *map(str, args)], result.exit_code, result.stdout, result.stderr)


# --- helpers several test modules share ---------------------------------------------------------------

def chart_digest(folder: Path) -> str:
    """One hash of a chart folder: every file's name and bytes."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            digest.update(f"{path.relative_to(folder).as_posix()}\0{len(data)}\0".encode())
            digest.update(data)
    return digest.hexdigest()


@dataclass
class Renders:
    """`mpigen check`'s chart renderer (Helm lint and template), cached by chart content, for tests that check the same
    charts with the same Helm again (the fuzzers, the committed charts); with `compare_with` (the long fuzz) each new
    chart is also linted and rendered by a second Helm, which must agree: the same objects, the same verdicts."""

    compare_with: str | None = None
    cache: dict[tuple[Any, ...], tuple[Any, str | None]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    disagreements: list[str] = field(default_factory=list)
    """Of the charts of the current check (cleared before each)."""

    def renderer(self) -> type:
        base = check_module._Renderer
        outer = self

        class CachedRenderer(base):  # type: ignore[misc, valid-type]
            def __call__(self, chart: ChartInfo, version: str, linted: Any = None) -> Any:
                # `linted`: the chart's findings from a `helm lint` of several charts, the same as its own lint's.
                key = (self.helm, version, chart.display, chart.name, chart_digest(chart.path))
                with outer.lock:
                    hit = outer.cache.get(key)
                if hit is None:
                    rendered = super().__call__(chart, version, linted)
                    other = base(outer.compare_with)(chart, version) if outer.compare_with and self.helm else None
                    hit = (rendered, None if other is None else outer.disagreement(chart, rendered, other))
                    with outer.lock:
                        outer.cache[key] = hit
                rendered, disagreement = hit
                if disagreement:
                    with outer.lock:
                        outer.disagreements.append(disagreement)
                return copy.deepcopy(rendered)

        return CachedRenderer

    @staticmethod
    def disagreement(chart: ChartInfo, mine: Any, theirs: Any) -> str | None:
        def verdicts(findings: list[Any]) -> list[tuple[str, str]]:
            return sorted({(f.rule, f.severity.value) for f in findings})

        (docs, findings), (other_docs, other_findings) = mine, theirs
        if [(d.source, d.obj) for d in docs] != [(d.source, d.obj) for d in other_docs]:
            return f"{chart.display}: Helm 3 and Helm 4 render different objects"
        if verdicts(findings) != verdicts(other_findings):
            return (f"{chart.display}: Helm 3 and Helm 4 judge it differently: "
                    f"{[f.format() for f in findings]} != {[f.format() for f in other_findings]}")
        return None


class SchemaSets:
    """`mpigen check`'s schema sets, built once per Kubernetes version: reading the CRDs costs seconds."""

    def __init__(self) -> None:
        self.real = schema_stage_module.SchemaSet
        self.made: dict[tuple[str, bool], Any] = {}

    def __call__(self, version: str, strict: bool = False) -> Any:
        if (version, strict) not in self.made:
            made = self.real(version, strict=strict)
            added: dict[tuple[str, ...], list[str]] = {}
            plain_add = made.add_crds

            def add_crds(paths: list[Path]) -> list[str]:
                key = tuple(map(str, paths))
                if key not in added:
                    added[key] = plain_add(paths)
                return added[key]

            made.add_crds = add_crds
            self.made[(version, strict)] = made
        return self.made[(version, strict)]

    def formats(self) -> Any:
        """Built-in and mpigen's own schemas, which keep the `format` of integers (CRDs converted by check lose it)."""
        if not hasattr(self, "_formats"):
            self._formats = self.real(check_module.bundled_kube_versions()[-1])
        return self._formats


@contextlib.contextmanager
def cached_check(renders: Renders, schema_sets: SchemaSets | None = None) -> Iterator[None]:
    """run_check in this process with Helm's renders of a chart it rendered before taken from `renders`, and the
    schema sets from `schema_sets` where given (only for checks that all give the same CRDs: a set keeps them)."""
    assert hasattr(check_module, "_Renderer") and hasattr(schema_stage_module, "SchemaSet"), "run_check changed"
    with contextlib.ExitStack() as patches:
        patches.enter_context(mock.patch.object(check_module, "_Renderer", renders.renderer()))
        if schema_sets is not None:
            patches.enter_context(mock.patch.object(schema_stage_module, "SchemaSet", schema_sets))
        yield


def in_cache(path: Path, root: Path) -> bool:
    """Whether `path` lies in the output folder `root`'s cache, which only `render --stamp` makes: walks over the
    repository's charts/ leave it out, since a developer may keep a stamp there (it is not output)."""
    return path.relative_to(root).parts[:1] == (CACHE_DIR,)


@contextlib.contextmanager
def current_folder(folder: Path) -> Iterator[None]:
    """Run with `folder` as the current folder (relative paths are the command line's, walked from there)."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def snapshot(root: Path) -> dict[str, str]:
    """Everything under `root` without following links: files by hash, links by target, folders by name."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[key] = f"link -> {os.readlink(path)}"
            elif path.is_dir():
                found[key] = "folder"
            elif not path.is_file():
                found[key] = "special"
            else:
                found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found

def run_limited(args: list[str | Path], preexec: Callable[[], None], timeout: float = 120,
                cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mpigen", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=preexec, cwd=cwd)


def memory_limited(limit: int) -> Callable[[], None]:
    """A `preexec_fn` giving the process at most `limit` bytes of address space (RLIMIT_AS): one that grows past it
    fails (a MemoryError in Python) instead of taking the machine's memory."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return limit_memory


def without_root_privileges() -> None:
    """Before exec: as root, give up the capabilities that ignore file modes (from the bounding set, so exec does
    not hand them back), so that a folder of mode 0555 refuses writes as it does for any user. Fails loudly
    where that is not allowed, never skips."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) refused: cannot make a folder read-only to root")

PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = 24, 1, 2, 3


# --- validation outcomes (tests/unit/validate/) --------------------------------------------------------


@dataclass
class Outcome:
    root: Path
    diagnostics: list[Diagnostic]

    def shown(self) -> list[str]:
        return [d.format() for d in self.diagnostics]

    def at(self, relpath: str, line: int, column: int) -> str:
        return f"{self.root / relpath}:{line}:{column}"


@pytest.fixture
def diagnose(profiles_copy: Callable[..., Path]) -> Callable[[dict[str, str | None]], Outcome]:
    """Load and validate a copy of profiles/ with `edits` applied; every diagnostic, sorted."""

    def run(edits: dict[str, str | None]) -> Outcome:
        root = profiles_copy(edits)
        loaded = load_paths([root])
        expanded = expand_hardware(loaded.documents, loaded.unreadable)  # as the pipeline does, before validate
        return Outcome(root, loaded.diagnostics + expanded.diagnostics
                       + validate(expanded.documents, [*loaded.unreadable, *expanded.unresolved]))

    return run


def expect(outcome: Outcome, *wanted: tuple, severity: Severity = Severity.ERROR) -> None:
    """Exactly these diagnostics, in this order: (relpath, line, col, message fragment[, hint fragment])."""
    shown = outcome.shown()
    assert len(outcome.diagnostics) == len(wanted), shown
    for diagnostic, (relpath, line, column, message, *hint) in zip(outcome.diagnostics, wanted, strict=True):
        assert str(diagnostic.location) == outcome.at(relpath, line, column), shown
        assert diagnostic.severity is severity, shown
        assert message in diagnostic.message, shown
        if hint:
            assert hint[0] in diagnostic.hint, shown
        formatted = diagnostic.format()
        assert formatted.startswith(f"{outcome.at(relpath, line, column)}: {severity.value}: "), formatted
        if diagnostic.hint:
            assert formatted.endswith(f"; {diagnostic.hint}"), formatted


DROPPED = ": the API server drops it, and the setting never takes effect; remove it, or correct its name or place"
"""What `mpigen check` says of a field no schema declares, after `unknown field` (rule `pruned`)."""


class CustomResourceSchemas:
    """CRDs, and custom resources judged by them as `mpigen check` judges them (its SchemaSet, newest Kubernetes)."""

    def __init__(self, paths: list[Path] = (), documents: list[dict[str, Any]] = ()) -> None:
        from ruamel.yaml import YAML

        from mpigen.check.crdschema import crd_schemas
        from mpigen.check.schemas import SchemaSet, bundled_kube_versions

        self.schema_set = SchemaSet(bundled_kube_versions()[-1])
        assert self.schema_set.add_crds(list(paths)) == []
        loaded = [doc for path in paths for doc in YAML(typ="safe").load_all(Path(path).read_text(encoding="utf-8"))]
        assert self.schema_set.add_crd_objects([("test", doc) for doc in documents]) == []
        self.converted = {key: schema for doc in [*loaded, *documents]
                          if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"
                          for key, schema in crd_schemas(doc).items()}
        self.keys = set(self.converted)

    def __contains__(self, key: object) -> bool:
        return key in self.keys

    def problems(self, document: dict[str, Any]) -> list[str]:
        """`<json path>: <message>` of each finding; [] when the resource is valid."""
        from mpigen.readback.findings import RenderedObject

        findings = self.schema_set.check(RenderedObject("test", document))
        return [f"{finding.path or '.'}: {finding.message}" for finding in findings]


# --- the compiled validators against jsonschema (tests/unit/*/test_*compiled_schema*.py, the fuzzers) ------------


@dataclass
class Judged:
    """Documents judged both ways: by the compiled validator (where it is asked) and by jsonschema."""

    disagreements: list[str]
    compiled: int = 0
    """How many the compiled validator judged."""
    refused: int = 0
    """How many of those it (and jsonschema) found invalid."""

    def count(self, label: str, verdicts: tuple[bool | None, bool] | None) -> None:
        if verdicts is None or verdicts[0] is None:
            return
        self.compiled += 1
        self.refused += not verdicts[0]
        if verdicts[0] != verdicts[1]:
            self.disagreements.append(f"{label}: compiled {'valid' if verdicts[0] else 'invalid'}, jsonschema "
                                      f"{'valid' if verdicts[1] else 'invalid'}")


_JUDGED: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
"""Verdicts already worked out, by schema set and document: a fuzzer meets the same documents again and again."""


def schema_verdict_disagreements(schema_set: Any, documents: list[Any]) -> Judged:
    """`check`'s rendered documents judged by a SchemaSet both ways (SchemaSet.verdicts)."""
    known = _JUDGED.setdefault(schema_set, {})
    judged = Judged([])
    for document in documents:
        key = repr(document.obj)
        if key not in known:
            known[key] = schema_set.verdicts(document)
        judged.count(f"{document.label} {key[:300]}", known[key])
    return judged


def profile_verdict_disagreements(documents: list[Any]) -> Judged:
    """Profiles (ProfileFile) of a known kind judged by their schema both ways (validate.schema.schema_verdicts)."""
    from mpigen.load import to_plain
    from mpigen.support.schema_files import KIND_SCHEMA_FILES
    from mpigen.validate.schema import schema_verdicts

    known = _JUDGED.setdefault(schema_verdicts, {})
    judged = Judged([])
    for document in documents:
        kind = document.kind
        if type(kind) is not str or kind not in KIND_SCHEMA_FILES:
            continue
        instance = to_plain(document.data)
        key = f"{kind} {instance!r}"
        if key not in known:
            known[key] = schema_verdicts(KIND_SCHEMA_FILES[kind], instance)
        judged.count(f"{document.path}: {key[:300]}", known[key])
    return judged


def mutated_tree(draw: Callable[[Any], Any], tree: Any, values: Any, keys: list[str],
                 fixed: tuple[str, ...] = ()) -> Any:
    """A copy of a JSON-like tree with one to three of its values replaced, removed or added anywhere, for the
    compiled validators' fuzzers: `draw` is hypothesis', `values` a strategy of fresh values, `keys` what an added
    entry is called; the top-level entries `fixed` stay as they are."""
    from hypothesis import strategies as st

    tree = copy.deepcopy(tree)
    for _ in range(draw(st.integers(1, 3))):
        places: list[tuple[Any, Any]] = []
        stack: list[Any] = [tree]
        while stack:
            node = stack.pop()
            entries = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
            for key, value in entries:
                if node is not tree or key not in fixed:
                    places.append((node, key))
                stack.append(value)
        if not places:
            break
        node, key = draw(st.sampled_from(places))
        action = draw(st.sampled_from(["replace", "replace", "remove", "add"]))
        if action == "replace":
            node[key] = draw(values)
        elif action == "remove":
            del node[key]
        elif isinstance(node, dict):
            node[draw(st.sampled_from(keys))] = draw(values)
        else:
            node.append(draw(values))
    return tree


# --- plan's placement, as it was first written (tests/unit/insight/, tests/acceptance/test_fuzz_insight.py) -----------


class FirstFitReference:
    """The straightforward first fit `mpigen.insight.capacity._Nodes` must equal: every node's free resources
    in a list, and for each worker a scan of all nodes from the first for one with room and fewer than `per_node`
    of its job's workers (counted by `list.count`). Quadratic in workers and linear in nodes per worker, so only
    for small pools; the arithmetic is capacity's exact context, as the real one's."""

    def __init__(self, offer: Any, nodes: int) -> None:
        self.free = [dict(offer.items) for _ in range(nodes)]

    @classmethod
    def of(cls, pool: Any) -> FirstFitReference:
        return cls(capacity.node_offer(pool), pool.nodes)

    def place(self, job: Any) -> tuple[int, ...] | None:
        return self.place_workers(capacity.worker_ask(job).items, job.worker_count, job.workers_per_node)

    def place_workers(self, ask: tuple[tuple[str, Decimal], ...], workers: int, per_node: int) -> tuple[int, ...] | None:
        with localcontext(kubernetes.EXACT):
            taken: list[int] = []
            for _ in range(workers):
                node = next((i for i, free in enumerate(self.free) if taken.count(i) < per_node
                             and all(free.get(name, Decimal(0)) >= amount for name, amount in ask)), None)
                if node is None:
                    for i in taken:
                        self._take(i, ask, -1)
                    return None
                self._take(node, ask, 1)
                taken.append(node)
            return tuple(taken)

    def _take(self, node: int, ask: tuple[tuple[str, Decimal], ...], sign: int) -> None:
        for name, amount in ask:
            self.free[node][name] = self.free[node].get(name, Decimal(0)) - sign * amount


class QuotasReference:
    """`mpigen.insight.capacity._Quotas` as first written: a job's cohort and what its queues have used are
    summed anew for every job (quadratic in jobs x queues), the reference the real one must equal.

    A second, deliberately straightforward implementation, not a copy to share code with: a change of how capacity.py
    pins launchers or of its cohort rules (what a queue may borrow, who counts in a cohort) must be made here too, or
    the fuzzer (tests/acceptance/test_fuzz_insight.py) reports the difference."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.used: dict[tuple[str, str, str], Decimal] = {}
        """(queue, pool or '' for a cluster-wide Volcano capability, resource) -> admitted."""

    def _limits(self, queue: Any, job: Any) -> list[tuple[tuple[str, str, str], Decimal, list[str], Decimal]]:
        """(use key, limit, queues sharing the limit, what the job asks of it) for each resource the job asks of its
        queue. Under Kueue a launcher pinned to the cluster's `launcherPool` counts against that pool's share."""
        found = []
        if self.cluster.scheduling.scheduler is Scheduler.VOLCANO:
            asked = capacity.job_demand(job, launcher=True)
            capability = queue.capability()
            for name, amount in asked.items:
                if name in capability:
                    found.append(((queue.name, "", name), Decimal(capability[name][0]), [queue.name], amount))
            return found
        pinned = launcher_pool(job)
        if pinned is None or pinned.name == job.pool.name:
            asks = [(job.pool.name, capacity.job_demand(job, launcher=True))]
        else:
            asks = [(job.pool.name, capacity.job_demand(job)), (pinned.name, capacity.launcher_ask(job))]
        cohort = [q for q in self.cluster.scheduling.queues if queue.cohort is not None and q.cohort == queue.cohort]
        for pool, asked in asks:
            share = next((s for s in queue.shares if s.pool.name == pool), None)
            for quota in share.quotas if share is not None else ():
                amount = asked.get(quota.resource)
                if not amount:
                    continue
                found.append(((queue.name, pool, quota.resource), Decimal(quota.reach), [queue.name], amount))
                if cohort:
                    total = sum(q.count for other in cohort for s in other.shares if s.pool.name == pool
                                for q in s.quotas if q.resource == quota.resource)
                    found.append((("", pool, quota.resource), Decimal(total), [q.name for q in cohort], amount))
        return found

    def full(self, job: Any) -> tuple[str, ...]:
        """The queues whose quota has no room left for the job (none: it may be admitted)."""
        queue = capacity.queue_of(job)
        if queue is None:
            return ()
        for (owner, pool, name), limit, queues, amount in self._limits(queue, job):
            sharing = [owner] if owner else queues  # '' : the cohort's total, used by all its queues
            used = sum((self.used.get((q, pool, name), Decimal(0)) for q in sharing), Decimal(0))
            if used + amount > limit:
                return tuple(queues)
        return ()

    def take(self, job: Any) -> None:
        queue = capacity.queue_of(job)
        if queue is None:
            return
        for key, _, _, amount in self._limits(queue, job):
            if key[0]:
                self.used[key] = self.used.get(key, Decimal(0)) + amount


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mpigen's wheel, built once from a copy of the source as a release is: setuptools builds in the source folder
    (build/, egg-info), and a test leaves nothing in the repository, nor takes a stale build/ of it."""
    folder = tmp_path_factory.mktemp("wheel")
    source = folder / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".tools", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", ".bench"))
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(folder), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return next(folder.glob("mpigen-*.whl"))


# --- fabric acceptance logs (tests/unit/verify/, tests/acceptance/test_verify_cli.py) -------------------------------

VERIFY_DATA = REPO / "tests" / "data" / "verify"
"""Logs of nccl-tests and perftest, each with its provenance in SOURCES.yaml there, and fleet/: the setups the DRANET
logs ran on, as profiles whose acceptance jobs judge them."""
VERIFY_FLEET = VERIFY_DATA / "fleet"
DRANET_H200_WORKERS = "nccl-test-dranet-1gpu-1nic-worker"
"""The worker pods of DRANET's MPIJob (dranet-h200-all-reduce.log): `<worker>-0`, `<worker>-1`."""
DRANET_B200_PODS = "nccl-gib-test"
"""The StatefulSet pods of DRANET's NVIDIA DRA example (dranet-b200-*.log): `<pod>-0`, `<pod>-1`."""


def log_text(name: str) -> str:
    return (VERIFY_DATA / name).read_text(encoding="utf-8")


def as_workers_of(text: str, pods: str, job: str) -> str:
    """A log of pods `<pods>-<i>` as the same run would print it on job `job`'s workers `<job>-worker-<i>` (the hosts of
    its `#  Rank` lines, and every other mention): the stated edit that makes a real log one of an acceptance job."""
    return re.sub(rf"\b{re.escape(pods)}-(\d+)", rf"{job}-worker-\1", text)


@pytest.fixture(scope="session")
def verify_fleet() -> CompileResult:
    """tests/data/verify/fleet compiled: cluster gke-lab's acceptance jobs on one-GPU, one-NIC nodes of H200 and B200."""
    result = compile_profiles([VERIFY_FLEET])
    assert result.ok, [d.format() for d in result.diagnostics]
    return result
