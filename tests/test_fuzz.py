"""Fuzzing the example fleet: every mutation of profiles/ either compiles to charts that render with real Helm
and pass `mpigen check`, or is refused with clean `path:line:col` diagnostics. Never a traceback.

Each example copies profiles/ and mutates it, at one of two levels:

- tree level (most examples): the profiles' YAML is loaded and 1-3 mutations are applied (delete a key,
  replace a value by one of another type or a hostile string, duplicate or drop a list item, rename a key to a
  near-miss, point a reference at another profile's name, add an unknown key, delete a file, copy a file under
  another name, plant a template in a string, set an optional feature the examples leave out, put a number at
  the edge of int32 or int64), then dumped back to YAML;
- text level: 1-3 byte-level edits of one file (bytes inserted, deleted or replaced, a tab, truncation, `---`,
  anchors and aliases, bytes that are not UTF-8).

Then `mpigen render` runs in-process into a folder already holding the example fleet's charts, and:

- no exception may escape it, and it may raise no Python warning (the real command would print it raw);
- when it fails, every line it prints is `path:line:col: severity: message` with a path of the profile set (or a
  built-in) and a line and column inside that file, and the output folder is byte-for-byte as it was;
- when it succeeds, the folder holds exactly what the profiles compile to, and `mpigen check` (real Helm, the
  upstream CRDs of ../shared, --strict) finds no error in it; what Helm renders is exactly what mpigen built, so
  a planted `{{ .Release.Name }}` comes out as that text, not as the release name; and every integer fits the
  int32 or int64 its Kubernetes schema declares (which JSON Schema, and so `check`, leaves unchecked).

Only charts whose bytes are new are given to Helm: renders are cached by chart content.

CI runs a fixed number of examples from a fixed seed without an example database, so every run tries the same
mutations. `make fuzz` runs many more from a random seed (printed, so a failure can be replayed with
MPIGEN_FUZZ_SEED), and renders every new chart with Helm 3 and Helm 4, which must agree.

    MPIGEN_FUZZ_EXAMPLES=N   number of examples; setting it is the long mode (both Helm versions, example database)
    MPIGEN_FUZZ_SEED=S       the seed of a long run
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import re
import shutil
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from click.testing import CliRunner
from conftest import PROFILES, REQUIRED, UPSTREAM, helm_path, need
from hypothesis import HealthCheck, event, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from jsonschema import FormatChecker
from ruamel.yaml import YAML

import generator.check as check_module
from generator.catalogue import BUILTIN_DIR, BUILTIN_PREFIX
from generator.check import CheckOptions, run_check
from generator.check.render import ChartInfo
from generator.cli import main
from generator.package import output_files
from generator.pipeline import compile_profiles

CI_EXAMPLES = 200  # about 45 s on a 2-core machine
CI_SEED = 20_260_611
LONG = "MPIGEN_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("MPIGEN_FUZZ_EXAMPLES", CI_EXAMPLES))
SEED = int(os.environ.get("MPIGEN_FUZZ_SEED") or CI_SEED)
# The upstream CRDs of every custom kind a mutated fleet may render (check --strict refuses a kind without one).
CRDS = (UPSTREAM / "gitops" / "argocd" / "application-crd.yaml",
        *(UPSTREAM / "gitops" / "flux" / f"{name}.yaml" for name in (
            "source.toolkit.fluxcd.io_gitrepositories", "kustomize.toolkit.fluxcd.io_kustomizations",
            "helm.toolkit.fluxcd.io_helmreleases")),
        *(UPSTREAM / "network" / "sriov-network-operator" / f"config__crd__bases__sriovnetwork.openshift.io_{name}.yaml"
          for name in ("sriovnetworknodepolicies", "sriovnetworks", "sriovibnetworks")),
        UPSTREAM / "mpi-operator" / "kubeflow.org_mpijobs.yaml",
        UPSTREAM / "network" / "nad-client" / "artifacts__networks-crd.yaml")

# --- the example fleet, as trees and as bytes -----------------------------------------------------------------------

EXAMPLE_FILES: dict[str, bytes] = {p.relative_to(PROFILES).as_posix(): p.read_bytes()
                                   for p in sorted(PROFILES.rglob("*.yaml"))}


def _load(raw: bytes) -> Any:
    return YAML(typ="safe", pure=True).load(raw)


def dump(tree: Any) -> bytes:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.allow_unicode = True
    yaml.width = 4096
    out = BytesIO()
    yaml.dump(tree, out)
    return out.getvalue()


EXAMPLE_TREES: dict[str, Any] = {path: _load(raw) for path, raw in EXAMPLE_FILES.items()}

Path_ = tuple[Any, ...]


def nodes(tree: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """Every node of a tree with the keys leading to it, the root first."""
    yield path, tree
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from nodes(value, (*path, key))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from nodes(value, (*path, index))


def get(tree: Any, path: Path_) -> Any:
    for key in path:
        tree = tree[key]
    return tree


REFERENCE_KEYS = ("name", "cluster", "pool", "hardware", "extends", "nic", "namespace", "claim", "kind", "provider",
                  "tool", "hostInterface", "pfName", "hca")
REFERENCE_VALUES = sorted({value for tree in EXAMPLE_TREES.values() for path, value in nodes(tree)
                           if path and path[-1] in REFERENCE_KEYS and isinstance(value, str)}
                          | {value for tree in EXAMPLE_TREES.values() for value in tree.get("namespaces", [])})

# --- values of other types, and hostile strings ----------------------------------------------------------------------

RELEASE_NAME = "rel={{ .Release.Name }};"
LOOKUP = 'sec={{ lookup "v1" "Secret" "" "" }};'
TEMPLATES = (RELEASE_NAME, LOOKUP, "{{ .Values.workers }}", "{{", "}}", '{{ fail "boom" }}', '{{ "{{" }}',
             "{{- /* x */ -}}", "{{ include \"x\" . }}", "a{{b", "{{ .Chart.Name }}")
HOSTILE_STRINGS = (
    "", " ", "-", ".", "a" * 63, "a" * 64, "a" * 253, "a" * 254, "x" * 5000,
    "dgх-lab",  # Cyrillic х
    "dgx‐lab",  # U+2010 hyphen
    "ｄｇｘ", "Dgx-Lab", "dgx-lab ", " dgx-lab", "dgx_lab", "😀", "\u202eevil", "a\u200bb", "é", "e\u0301",
    "a\nb", "a\r\nb", "\n", "line\n", "\r", "\t", "a\tb", "\x00", "a\x00b", "\x1b[31m", "\x7f", "\u0085", "\u2028",
    '"', "'", "a'b\"c", "\\", "%d %s %%", "%", "100%", "../../x", "/etc/passwd", "a/b", "..", "*", "&a", "*a", "# c",
    "- x", ": y", "key: value", "{a: 1}", "[1]", "true", "false", "null", "~", "yes", "no", "on", "1.30", "0x10",
    "1e3", "0o17", "012", "-1", "0", ".inf", "=", "$(VAR)", "${HOME}", "`id`", "; rm -rf /", "--", "-rf",
    "http://", "https://a b", "1Gi", "-1Gi", "0Gi", "1.5", "999999999999Gi", "1e400", "Ki", "InfiniBand",
    "Ethernet", "OpenMPI", "none", "static", *TEMPLATES,
)
BOUNDARIES = (0, -1, 1, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 10**30)
"""Integers at the edges of what Kubernetes decodes (int32, int64) and of what a float64 holds exactly."""
SPECIAL_NUMBERS = (0, -1, 1, 2, 3, 7, 8, 9, 16, 63, 64, 65, 100, 255, 256, 1023, 65535, 65536, 2**31 - 1, 2**31,
                   2**53 + 1, 2**63 - 1, 2**63, 2**64, 10**30, -(2**63), 0.0, -0.0, 0.5, 1.5, 1e300, -1e-300,
                   math.inf, -math.inf, math.nan, True, False, None)


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.sampled_from(HOSTILE_STRINGS),
        st.sampled_from(SPECIAL_NUMBERS),
        st.integers(),
        st.text(max_size=12),
        st.sampled_from(REFERENCE_VALUES),
    )


def values() -> st.SearchStrategy[Any]:
    return st.one_of(
        scalars(),
        st.sampled_from(([], {}, [None], [[]], [{}], {"a": 1}, {"name": "x"})),
        st.lists(scalars(), max_size=3),
        st.dictionaries(st.sampled_from(("name", "a", "count", "nic", "x")), scalars(), max_size=2),
    )


def near_misses(key: str) -> list[str]:
    """Keys a person might type instead of `key`."""
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), key)
    found = [key.lower(), key.upper(), key.capitalize(), snake, key + "s", key[:-1], key + " ", " " + key,
             key.replace("i", "1"), key + "\u200b", key[1:] + key[:1], "x" + key]
    if len(key) > 2:
        found.append(key[:1] + key[2] + key[1] + key[3:])
    return sorted({k for k in found if k and k != key})


def with_original(value: Any) -> st.SearchStrategy[Any]:
    """Values derived from the one a mutation replaces: a near-miss of it is a likely typo, a hostile value of
    its own type is more likely to get past validation into the charts."""
    if isinstance(value, str) and value:
        return st.one_of(
            st.sampled_from([*near_misses(value), value + RELEASE_NAME, LOOKUP + value, value * 3, value + "\n"]),
            st.sampled_from(HOSTILE_STRINGS), st.text(max_size=20))
    if isinstance(value, bool):
        return st.just(not value)
    if isinstance(value, int):
        return st.one_of(st.sampled_from((value - 1, value + 1, -value, value * 1000, str(value), float(value))),
                         st.sampled_from([n for n in SPECIAL_NUMBERS if isinstance(n, int)]))
    return values()


# --- the mutations -----------------------------------------------------------------------------------------------------


@dataclass
class Case:
    """A mutated profile set: its files (path under profiles/ -> bytes) and what was done to get them."""

    files: dict[str, bytes]
    steps: list[str] = field(default_factory=list)
    planted: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return "Case(" + "; ".join(self.steps) + ")"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # how Hypothesis prints a falsifying example
        printer.text(repr(self))


def _plant(case: Case, value: Any) -> None:
    for _, node in nodes(value):
        if isinstance(node, str) and "{{" in node:
            case.planted.append(node)


# Optional settings the example profiles leave out, in shapes validation may accept, some with planted templates:
# mutations that only break things never reach these features' code.
FEATURES: dict[str, tuple[tuple[str, Any], ...]] = {
    "Job": (
        ("privileged", {"reason": "needs the node's devices for the benchmark"}),
        ("privileged", {"reason": f"vendor tool {RELEASE_NAME} pokes /dev"}),
        ("volumes", [{"name": "host", "hostPath": "/data/{{ .Release.Name }}", "mountPath": "/data"}]),
        ("volumes", [{"name": "scratch", "hostPath": "/scratch", "mountPath": "/scratch", "readOnly": True}]),
        ("volumes", [{"name": "imagenet", "claim": "imagenet", "mountPath": "/etc/mpigen"}]),
        ("naming", "stable"), ("mpiImplementation", "Intel"), ("mpiImplementation", "MPICH"), ("openMPIVersion", 5),
        ("placement", {"bindTo": "core", "mapBy": "numa"}), ("placement", {"bindTo": "gpu-nic-socket"}),
        ("launcherCommand", ["sh", "-c", f"echo {RELEASE_NAME} && mpirun hostname"]),
        ("allowRerunAfterTtl", True), ("runPolicy", {"ttlSecondsAfterFinished": 60}), ("runPolicy", {"suspend": True}),
        ("runPolicy", {"backoffLimit": 0, "activeDeadlineSeconds": 3600, "ttlSecondsAfterFinished": 0}),
        ("rails", ["rail0"]), ("rails", ["rail3", "rail0"]), ("workers", 1), ("workers", 4), ("totalGpus", 8),
        ("gpusPerWorker", 4), ("slotsPerWorker", 3), ("shmSize", "1Gi"), ("runAsUser", 0), ("namespace", "hpc"),
        ("env", {"NCCL_DEBUG": RELEASE_NAME, "MY_FLAG": LOOKUP, "OMPI_MCA_btl": "^openib"}),
        ("env", {"DB_PASSWORD": "hunter2", "AWS_SECRET_ACCESS_KEY": "AKIAxxxxxxxxxxxxxxxx"}),
        ("mpirunArgs", ["-x", RELEASE_NAME]), ("description", LOOKUP), ("sshAuthMountPath", "/root/.ssh"),
        ("resources", {"cpu": "500m", "memory": "512Mi"}), ("launcher", {"resources": {"cpu": "2"}}),
        ("launcherCreationPolicy", "AtStartup"),
        *(("*", {"cluster": cluster, "pool": pool, "namespace": namespace}) for cluster, pool, namespace in (
            ("dgx-lab", "dgx", "ml-training"), ("dgx-lab", "cpu", "hpc"), ("cpu-lab", "cpu", "mpi"),
            ("netapp-lab", "dgx", "ai-training"))),  # the job moved, as a whole, to another pool of the fleet
    ),
    "Cluster": (
        ("podSecurity", {"hpc": "privileged"}), ("podSecurity", {"mpi": "baseline", "ml-training": "restricted"}),
        ("cpuManagerPolicy", "static"), ("network", {"provider": "sriov-network-operator"}),
        ("network", {"provider": "rdma-shared"}), ("network", {"provider": "tcp"}),
        ("network", {"provider": "host-network", "sshPort": 2222}),
        ("gitops", {"tool": "flux", "repoURL": "https://git.example.com/{{ .Release.Name }}.git", "path": "charts"}),
        ("gitops", {"tool": "argocd", "repoURL": "ssh://git@git.example.com/org/repo.git", "revision": "release/1.0",
                    "project": "ml", "namespace": "gitops", "destination": "https://10.0.0.1:6443"}),
        ("kubernetesVersion", "1.29"), ("kubernetesVersion", "1.33"), ("namespaces", ["mpi", "hpc", "ml-training"]),
        ("description", RELEASE_NAME),
    ),
    "Hardware": (
        ("extends", "dgx-a100"), ("extends", "dgx-h100"), ("gpu", {"count": 4, "model": "A100"}),
        ("nodeLabels", {"example.com/rack": "r1"}), ("memoryGiB", 1), ("description", LOOKUP),
        ("cpu", {"sockets": 1, "coresPerSocket": 1, "threadsPerCore": 1}),
    ),
}
FREE_TEXT = {"program", "env", "mpirunArgs", "workerCommand", "description", "model"}
"""Keys of strings that validation lets through as they are: where a template would reach the charts."""
COPY_NAMES = ("copy-of-{base}", "{stem}.yml", "{{{{ .Release.Name }}}}-{base}", "a b {base}", "ü-{base}", "#{base}",
              "-{base}", ".hidden-{base}", "{base}.bak", "sub/dir/{base}", "{stem}'\"%.yaml")
"""Names a copied file gets: odd but possible file names (some are not profile files: hidden, .bak)."""
TREE_MUTATIONS = ("replace", "delete_key", "rename_key", "add_key", "duplicate_item", "drop_item", "reference",
                  "delete_file", "copy_file", "template", "feature", "number")


@st.composite
def tree_cases(draw: st.DrawFn) -> Case:
    trees = copy.deepcopy(EXAMPLE_TREES)
    dirty: set[str] = set()
    deleted: set[str] = set()
    case = Case({})
    for _ in range(draw(st.integers(1, 3))):
        alive = sorted(set(trees) - deleted)
        if not alive:
            break
        name = draw(st.sampled_from(alive))
        tree = trees[name]
        everything = list(nodes(tree))
        kind = draw(st.sampled_from(TREE_MUTATIONS))
        if kind == "replace":
            if len(everything) < 2:
                case.steps.append(f"{name}: (nothing to replace)")
                continue
            path, old = draw(st.sampled_from(everything[1:]))
            new = draw(st.one_of(values(), with_original(old)))
            get(tree, path[:-1])[path[-1]] = new
            _plant(case, new)
            case.steps.append(f"{name}: {list(path)} = {new!r}")
        elif kind in ("delete_key", "rename_key"):
            keyed = [path for path, _ in everything if path and isinstance(get(tree, path[:-1]), dict)]
            if not keyed:
                case.steps.append(f"{name}: (no key to {kind})")
                continue
            path = draw(st.sampled_from(keyed))
            parent = get(tree, path[:-1])
            value = parent.pop(path[-1])
            if kind == "rename_key":
                new_key = draw(st.sampled_from(near_misses(str(path[-1]))))
                parent[new_key] = value
                case.steps.append(f"{name}: rename {list(path)} to {new_key!r}")
            else:
                case.steps.append(f"{name}: delete {list(path)}")
        elif kind == "add_key":
            maps = [path for path, node in everything if isinstance(node, dict)]
            path = draw(st.sampled_from(maps))
            parent = get(tree, path)
            siblings = [near for key in parent for near in near_misses(str(key))]
            key = draw(st.sampled_from(["extra", "unknownKey", "privileged", "hostPath", *siblings]))
            parent[key] = draw(values())
            _plant(case, parent[key])
            case.steps.append(f"{name}: add {[*path, key]} = {parent[key]!r}")
        elif kind in ("duplicate_item", "drop_item"):
            lists = [(path, node) for path, node in everything if isinstance(node, list) and node]
            if not lists:
                case.steps.append(f"{name}: (no list to {kind})")
                continue
            path, items = draw(st.sampled_from(lists))
            index = draw(st.integers(0, len(items) - 1))
            if kind == "drop_item":
                del items[index]
            else:
                items.insert(index, copy.deepcopy(items[index]))
            case.steps.append(f"{name}: {kind} {[*path, index]}")
        elif kind == "reference":
            refs = [path for path, node in everything if path and path[-1] in REFERENCE_KEYS and isinstance(node, str)]
            if not refs:
                case.steps.append(f"{name}: (no reference)")
                continue
            path = draw(st.sampled_from(refs))
            new = draw(st.sampled_from(REFERENCE_VALUES))
            get(tree, path[:-1])[path[-1]] = new
            case.steps.append(f"{name}: {list(path)} = {new!r} (another profile's name)")
        elif kind == "template":  # into a string, which may well be free text (a program argument, an env value)
            strings = [(path, node) for path, node in everything if path and isinstance(node, str)]
            if not strings:
                case.steps.append(f"{name}: (no string for a template)")
                continue
            free = [(path, node) for path, node in strings if set(path) & FREE_TEXT]
            path, old = draw(st.one_of(st.sampled_from(free), st.sampled_from(strings)) if free
                             else st.sampled_from(strings))
            template = draw(st.sampled_from(TEMPLATES))
            new = draw(st.sampled_from((old + template, template + old, f"{old} {template}", template)))
            get(tree, path[:-1])[path[-1]] = new
            _plant(case, new)
            case.steps.append(f"{name}: {list(path)} = {new!r}")
        elif kind == "feature":
            features = FEATURES.get(str(tree.get("kind")) if isinstance(tree, dict) else "", ())
            if not features:
                case.steps.append(f"{name}: (no feature for its kind)")
                continue
            key, value = copy.deepcopy(draw(st.sampled_from(features)))
            if key == "*":
                tree.update(value)
            elif isinstance(tree.get(key), list) and isinstance(value, list) and draw(st.booleans()):
                value = tree[key] + value
            if key != "*":
                tree[key] = value
            _plant(case, value)
            case.steps.append(f"{name}: [{key!r}] = {value!r}")
        elif kind == "number":  # a number at an edge, where the profile has a number
            numbers = [(path, node) for path, node in everything
                       if path and isinstance(node, int) and not isinstance(node, bool)]
            if not numbers:
                case.steps.append(f"{name}: (no number)")
                continue
            path, old = draw(st.sampled_from(numbers))
            new = draw(st.sampled_from((*BOUNDARIES, old + 1, old - 1, old * 2, float(old), old + 0.5)))
            get(tree, path[:-1])[path[-1]] = new
            case.steps.append(f"{name}: {list(path)} = {new!r}")
        elif kind == "delete_file":
            deleted.add(name)
            case.steps.append(f"delete {name}")
            continue
        else:  # copy_file
            folder = draw(st.sampled_from(("hardware", "clusters", "jobs", name.rsplit("/", 1)[0])))
            base = name.rsplit("/", 1)[1]
            target = folder + "/" + draw(st.sampled_from(COPY_NAMES)).format(base=base, stem=base[:-5])
            trees[target] = copy.deepcopy(tree)
            dirty.add(target)
            case.steps.append(f"copy {name} to {target}")
            continue
        dirty.add(name)
    case.files = {path: (dump(trees[path]) if path in dirty else EXAMPLE_FILES.get(path) or dump(trees[path]))
                  for path in sorted(trees) if path not in deleted}
    return case


BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\r", b"\t", b"\x85", b"\xe2\x80\xa8")
SNIPPETS = (b"---\n", b"\n---\n", b"...\n", b"&a ", b"*a", b"&a", b" *a\n", b"<<: *a\n", b"\t", b"{", b"[", b"}",
            b"]", b"'", b'"', b":", b": ", b"- ", b"#", b"|", b">", b"!!binary ", b"!!python/object:os.system ",
            b"%YAML 1.1\n", b"? ", b"\n  ", b"{{ .Release.Name }}")


@st.composite
def text_cases(draw: st.DrawFn) -> Case:
    name = draw(st.sampled_from(sorted(EXAMPLE_FILES)))
    raw = bytearray(EXAMPLE_FILES[name])
    case = Case({})
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(raw)))
        kind = draw(st.sampled_from(("insert", "delete", "replace", "truncate", "line")))
        if kind == "insert":
            data = draw(st.one_of(st.sampled_from(SNIPPETS + BAD_BYTES), st.binary(min_size=1, max_size=4)))
            raw[at:at] = data
            case.steps.append(f"{name}: insert {bytes(data)!r} at byte {at}")
        elif kind == "delete":
            length = draw(st.integers(1, 40))
            del raw[at:at + length]
            case.steps.append(f"{name}: delete {length} byte(s) at {at}")
        elif kind == "replace":
            if at == len(raw):
                at = max(len(raw) - 1, 0)
            data = draw(st.one_of(st.sampled_from(BAD_BYTES), st.binary(min_size=1, max_size=1)))
            raw[at:at + 1] = data
            case.steps.append(f"{name}: replace byte {at} by {bytes(data)!r}")
        elif kind == "truncate":
            del raw[at:]
            case.steps.append(f"{name}: truncate at {at}")
        else:  # a snippet at the start of a line
            start = raw.rfind(b"\n", 0, at) + 1
            data = draw(st.sampled_from(SNIPPETS))
            raw[start:start] = data
            case.steps.append(f"{name}: insert {bytes(data)!r} at the line starting at byte {start}")
    case.files = {**EXAMPLE_FILES, name: bytes(raw)}
    return case


cases = st.one_of(tree_cases(), tree_cases(), tree_cases(), text_cases())

# --- running it -----------------------------------------------------------------------------------------------------

DIAGNOSTIC = re.compile(r"(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<severity>error|warning): (?P<message>.+)")
SUMMARY = re.compile(r"\d+ error\(s\), \d+ warning\(s\) in \d+ profile file\(s\); nothing was written")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def chart_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path, data in snapshot(folder).items():
        digest.update(f"{path}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


@dataclass
class Renders:
    """`mpigen check`'s chart renderer (Helm lint and template), cached by chart content; in the long run each new
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
            def __call__(self, chart: ChartInfo, version: str) -> Any:
                key = (self.helm, version, chart.display, chart.name, chart_digest(chart.path))
                with outer.lock:
                    hit = outer.cache.get(key)
                if hit is None:
                    rendered = super().__call__(chart, version)
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
        self.real = check_module.SchemaSet
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


@dataclass(repr=False)
class Fixture:
    root: Path
    baseline: dict[str, bytes]
    options: CheckOptions
    renders: Renders
    schema_sets: SchemaSets

    def __repr__(self) -> str:
        return f"Fixture({self.root})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @property
    def profiles(self) -> Path:
        return self.root / "profiles"

    @property
    def out(self) -> Path:
        return self.root / "charts"

    @contextmanager
    def cached_check(self) -> Iterator[None]:
        assert hasattr(check_module, "_Renderer") and hasattr(check_module, "SchemaSet"), "run_check changed"
        with mock.patch.object(check_module, "_Renderer", self.renders.renderer()), \
                mock.patch.object(check_module, "SchemaSet", self.schema_sets):
            yield


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """`folder` holding exactly `files`."""
    if folder.exists():
        shutil.rmtree(folder)
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)


def render(profiles: Path, out: Path) -> Any:
    """`mpigen render` in-process; a Python warning it raises (which the real command prints to stderr, beside the
    diagnostics) fails the example."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(main, ["render", str(profiles), "-o", str(out)], catch_exceptions=True)
    shown = [f"{w.category.__name__}: {w.message}" for w in caught]
    assert not shown, "render raised Python warnings, printed raw to stderr:\n" + "\n".join(shown)
    return result


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    helm4 = helm_path(4)
    need(helm4 is not None, "no Helm 4 binary (run `make helm`)")
    helm3 = helm_path(3) if LONG else None
    if LONG:
        need(helm3 is not None, "no Helm 3 binary (run `make helm`): the long fuzz compares Helm 3 and Helm 4")
    crds = tuple(p for p in CRDS if p.is_file())
    if REQUIRED:
        need(len(crds) == len(CRDS), f"the upstream CRDs under {UPSTREAM}")
    root = tmp_path_factory.mktemp("fuzz").resolve()
    fixture = Fixture(root, {}, CheckOptions(helm=str(helm4), crds=crds, strict=bool(crds)),
                      Renders(compare_with=str(helm3) if helm3 else None), SchemaSets())
    write_files(fixture.profiles, EXAMPLE_FILES)
    result = render(fixture.profiles, fixture.out)
    assert result.exit_code == 0, result.output
    fixture.baseline = snapshot(fixture.out)
    with fixture.cached_check():
        report = run_check([fixture.out], fixture.options)
    assert not report.errors and not fixture.renders.disagreements, (
        [f.format() for f in report.findings], fixture.renders.disagreements)
    return fixture


YAML_LINE_BREAK = re.compile("\r\n?|\n")  # what ends a line for YAML 1.2, and so for diagnostics


def _within(path: str, line: int, column: int, profiles: Path) -> str | None:
    """Why (path, line, column) is not a place in a file of the profile set, or None when it is."""
    if path.startswith(BUILTIN_PREFIX + "/"):
        file = BUILTIN_DIR / path[len(BUILTIN_PREFIX) + 1:]
    else:
        file = Path(path)
        if not file.resolve().is_relative_to(profiles):
            return f"{path} is not in the profile set"
    if not file.is_file():
        return f"{path} is not a file of the profile set"
    lines = YAML_LINE_BREAK.split(file.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff"))
    if not 1 <= line <= len(lines):
        return f"line {line} is not in {path} ({len(lines)} lines)"
    if not 1 <= column <= len(lines[line - 1]) + 1:
        return f"column {column} is not on line {line} of {path} ({len(lines[line - 1])} characters)"
    return None


def check_diagnostics(stderr: str, profiles: Path, failed: bool) -> list[str]:
    """Problems with what render printed on stderr: every line a diagnostic, a warning, or the summary."""
    problems = []
    lines = stderr.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if failed:
        if not lines or not SUMMARY.fullmatch(lines[-1]):
            return [f"no summary line at the end of: {stderr!r}"]
        lines.pop()
    for line in lines:
        match = DIAGNOSTIC.fullmatch(line)
        if match is None:
            if not failed and line.startswith("warning: "):
                continue
            problems.append(f"not a path:line:col diagnostic: {line!r}")
            continue
        where = _within(match["path"], int(match["line"]), int(match["column"]), profiles)
        if where:
            problems.append(f"{where}: {line!r}")
    if failed and not any(" error: " in line for line in lines):
        problems.append(f"render failed without an error diagnostic: {stderr!r}")
    return problems


def identity(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace", "")), str(meta.get("name"))


def _strings(node: Any) -> Iterator[str]:
    """Every string of a tree, keys too."""
    for _, value in nodes(node):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            yield from (key for key in value if isinstance(key, str))


MARKED = {RELEASE_NAME: re.compile(r"rel=(.*?);", re.DOTALL), LOOKUP: re.compile(r"sec=(.*?);", re.DOTALL)}
"""Templates planted between markers: whatever stands between the markers in the output must be the template."""


def evaluated(planted: list[str], text: str) -> str | None:
    """The first rendering of a planted marked template in `text`, or None when each came out as written."""
    for template, pattern in MARKED.items():
        if any(template in p for p in planted):
            for found in pattern.finditer(text):
                if not found.group(1).startswith("{{"):
                    return found.group(0)
    return None


INTEGER_FORMATS = FormatChecker(formats=())
"""The integer formats of Kubernetes schemas, which the API server's typed decoding enforces (an MPIJob with
`backoffLimit: 2147483648` is stored, then mpi-operator cannot decode it) and JSON Schema leaves unchecked."""
INTEGER_FORMATS.checks("int32")(lambda v: not isinstance(v, int) or isinstance(v, bool) or -(2**31) <= v < 2**31)
INTEGER_FORMATS.checks("int64")(lambda v: not isinstance(v, int) or isinstance(v, bool) or -(2**63) <= v < 2**63)


def integer_overflows(schema_set: Any, document: Any) -> list[str]:
    """Integers of a rendered object beyond what its schema's int32/int64 format, or any int64, can hold."""
    found = {tuple(path): "int64" for path, value in nodes(document.obj)
             if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63}
    compiled = schema_set._validator((document.api_version, document.kind))
    if compiled is not None:
        validator = compiled[0].evolve(format_checker=INTEGER_FORMATS)
        found |= {tuple(e.absolute_path): e.validator_value for e in validator.iter_errors(document.obj)
                  if e.validator == "format"}
    return [f"{document.label}: {list(path)}: {get(document.obj, path)} is beyond {fmt}" for path, fmt in found.items()]


def run_case(fixture: Fixture, case: Case) -> None:
    write_files(fixture.profiles, case.files)
    write_files(fixture.out, fixture.baseline)
    result = render(fixture.profiles, fixture.out)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        trace = "".join(traceback.format_exception(*result.exc_info))
        pytest.fail(f"render raised {type(result.exception).__name__}:\n{trace}")
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    failed = result.exit_code == 1
    problems = check_diagnostics(result.stderr, fixture.profiles.resolve(), failed)
    assert not problems, "\n".join(problems) + "\n--- stderr:\n" + result.stderr
    event("refused with diagnostics" if failed else "compiled")
    if not failed and case.planted:
        event("compiled with a template planted")
    if failed:
        assert snapshot(fixture.out) == fixture.baseline, "a failed render changed the output folder"
        return
    compiled = compile_profiles([fixture.profiles])
    assert compiled.ok
    assert snapshot(fixture.out) == {**output_files(compiled.charts), ".mpigen-owned": snapshot(fixture.out)[
        ".mpigen-owned"]}, "the output folder is not what the profiles compile to"
    fixture.renders.disagreements.clear()
    with fixture.cached_check():
        report = run_check([fixture.out], fixture.options)
    assert not fixture.renders.disagreements, "\n".join(fixture.renders.disagreements)
    errors = [f for f in report.findings if f.severity.value == "error"]
    assert not errors, "mpigen check:\n" + "\n".join(f.format() for f in errors)
    schema_set = fixture.schema_sets.formats()
    overflows = [problem for document in report.documents for problem in integer_overflows(schema_set, document)]
    assert not overflows, "numbers Kubernetes cannot decode:\n" + "\n".join(overflows)
    by_chart: dict[str, list[dict[str, Any]]] = {}
    for document in report.documents:
        by_chart.setdefault(document.chart, []).append(document.obj)
    for chart in compiled.charts:
        rendered = sorted(by_chart.get(f"{fixture.out.as_posix()}/{chart.directory}", []), key=identity)
        built = sorted((m.obj for m in chart.manifests), key=identity)
        assert rendered == built, f"{chart.directory}: Helm renders other objects than mpigen built"
    for text in (s for document in report.documents for s in _strings(document.obj)):
        rendering = evaluated(case.planted, text)
        assert rendering is None, f"a planted template was evaluated: {rendering!r} in {text!r}"


def _settings() -> Callable[[Any], Any]:
    database = DirectoryBasedExampleDatabase(str(Path(__file__).parent.parent / ".hypothesis" / "examples"))
    return settings(max_examples=EXAMPLES, deadline=None, database=database if LONG else None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@seed(SEED)
@_settings()
@given(case=cases)
@example(case=Case(dict(EXAMPLE_FILES), ["the example fleet as it is"]))
def test_a_mutated_fleet_compiles_and_checks_clean_or_fails_cleanly(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case)
