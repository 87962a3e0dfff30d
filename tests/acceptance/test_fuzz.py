"""Fuzzing the example fleet: every mutation of its profiles either compiles to charts that render with real Helm
and pass `mpigen check`, or is refused with clean `path:line:col` diagnostics. Never a traceback.

Each example compiles, writes and checks the whole fleet, so CI mutates the base fleet (tests/conftest.py's
base_fleet): the clusters of profiles/ that between them have every network provider, scheduler, Kueue API, GitOps
tool, job backend and DRA shape of the example fleet and every kind of object and file it writes (which a test here
holds), with their jobs and every hardware file, and the fabric acceptance charts of one of them only: 24 charts of
the 68, as the others prove nothing more. `make fuzz` mutates the whole example fleet.

Each example copies the fleet's profiles and mutates them, at one of two levels:

- tree level (most examples): the profiles' YAML is loaded and 1-3 mutations are applied (delete a key,
  replace a value by one of another type or a hostile string, duplicate or drop a list item, rename a key to a
  near-miss, point a reference at another profile's name, add an unknown key, delete a file, copy a file under
  another name, plant a template in a string, set an optional feature the examples leave out, put a number at
  the edge of int32 or int64), then dumped back to YAML;
- text level: 1-3 byte-level edits of one file (bytes inserted, deleted or replaced, a tab, truncation, `---`,
  anchors and aliases, bytes that are not UTF-8).

Five classes that neither level writes have a test each (the first four written as text into one job file):

- merge keys: `<<` into `env` (a mapping, a list of them, anchored and aliased, nested, with keys written beside
  it) and at the top of a job (spelling out the job's own values, or overridden by them), whose result is known,
  and forms YAML or the schema refuse (not a mapping, twice, an undefined or self-referring alias, in a list);
- implicit types: a plain scalar whose type YAML reads from its look (timestamps, booleans, numbers in every
  base, `=`, `<<`, `~`), in a string field, under YAML 1.2 or a `%YAML 1.1` directive;
- control characters through YAML's escapes (C0, DEL, C1 and NEL, bidi controls, line and paragraph
  separators, zero-width and byte order marks, a lone surrogate) in values and keys;
- long strings: one string of 64 KiB up to just past the 1 MiB profile limit, of what scanners, escapes and
  hole markers trip on (`{{`, `` `{{ ``, `a:`, `[`, `&a `, URLs with a password, `mpigenhole0x...`);
- quantities: a CPU, memory or /dev/shm quantity of a job (its workers' or its launcher's) from 0 to 10^400
  exbibytes and to 10^-45 of a unit, in every suffix, or a node's memoryGiB at the edge of what Kubernetes counts
  (where Kubernetes would round or cap the value, it must be refused for that reason; a string the tree level
  replaces that is a quantity is replaced by such quantities too).

And one class of what belongs to the controllers, which must be refused, for that reason, at a clean place: a
label or annotation key of every reserved domain (as written, under a subdomain, in capitals, with a trailing dot, a
look-alike letter or a space), a controller's or Kubernetes' namespace as a job namespace (or an existing one), the
namespace the profile's own GitOps tool, network operator or device plugin runs in, and a `system-` priority class
declared or named by a job; a site's own `kube-*` namespace is refused only where the infra chart would create it.

Where such a case compiles, what it wrote must reach the cluster as written (an env value, a command argument,
an image), merges must give the objects their spelled-out form gives, and a character docs/security.md refuses must
have been refused; a long string's render must end within 30 s (a linear one takes about a second).

Then `mpigen render` runs in-process into a folder already holding the fleet's charts, and:

- no exception may escape it, and it may raise no Python warning (the real command would print it raw);
- when it fails, every line it prints is `path:line:col: severity: message` with a path of the profile set (or a
  built-in) and a line and column inside that file, and the output folder is byte-for-byte as it was;
- when it succeeds, the folder holds exactly what the profiles compile to, and `mpigen check` (real Helm, the
  upstream CRDs of tests/upstream, --strict) finds no error in it; what Helm renders is exactly what mpigen built, so
  a planted `{{ .Release.Name }}` comes out as that text, not as the release name; and every integer fits the
  int32 or int64 its Kubernetes schema declares (which JSON Schema, and so `check`, leaves unchecked).

Only charts whose bytes are new are given to Helm: renders are cached by chart content.

CI runs a fixed number of examples from a fixed seed without an example database, so every run tries the same
mutations (25 of the tree and text levels, 10 merge-key and 10 implicit-type cases, 15 control characters, 4 long
strings, 15 reserved names, 14 quantities). `make fuzz` runs many more from a random seed (N of the tree and text
levels, N/4 of each of the first three classes (at least 50), N/20 long strings (at least 8), N/8 reserved names
and N/8 quantities (at least 30); the seed is printed, so a failure can be replayed with MPIGEN_FUZZ_SEED), and
renders every new chart with Helm 3 and Helm 4, which must agree.

    MPIGEN_FUZZ_EXAMPLES=N   number of examples; setting it is the long mode (both Helm versions, example database)
    MPIGEN_FUZZ_SEED=S       the seed of a long run
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import shutil
import stat
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import (
    ACCEPTANCE_CHARTS,
    BASE_ACCEPTANCE,
    BASE_CLUSTERS,
    PROFILES,
    REPO,
    UPSTREAM,
    Renders,
    SchemaSets,
    base_fleet,
    cached_check,
    fleet_shapes,
    profile_verdict_disagreements,
    require_helm,
    schema_verdict_disagreements,
    without_keys,
)
from hypothesis import HealthCheck, event, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from jsonschema import FormatChecker
from ruamel.yaml import YAML

from mpigen.check import CheckOptions, run_check
from mpigen.commands.cli import main
from mpigen.commands.pipeline import compile_profiles
from mpigen.load import load_paths
from mpigen.load.catalogue import BUILTIN_DIR, BUILTIN_PREFIX
from mpigen.package import output_files

CI_EXAMPLES = 25  # about 12 s on a 2-core machine, beside the rest of the suite (the base fleet: 24 charts)
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

# --- the fleet, as trees and as bytes ------------------------------------------------------------------------------

FLEET_FILES: Mapping[str, bytes] = base_fleet() if not LONG else {
    p.relative_to(PROFILES).as_posix(): p.read_bytes() for p in sorted(PROFILES.rglob("*.yaml"))}
"""What each example mutates, by path under profiles/: in CI the base fleet (conftest.base_fleet: every shape of the
example fleet, and a third of its charts), in the long run the whole example fleet."""


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


FLEET_TREES: dict[str, Any] = {path: _load(raw) for path, raw in FLEET_FILES.items()}
FLEET_CLUSTERS = {tree["name"] for path, tree in FLEET_TREES.items() if path.startswith("clusters/")}

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
REFERENCE_VALUES = sorted({value for tree in FLEET_TREES.values() for path, value in nodes(tree)
                           if path and path[-1] in REFERENCE_KEYS and isinstance(value, str)}
                          | {value for tree in FLEET_TREES.values() for value in tree.get("namespaces", [])})

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
            st.sampled_from(HOSTILE_STRINGS), st.text(max_size=20),
            *([quantity_texts(), quantity_texts()] if QUANTITY.fullmatch(value) else []))
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
    classes: list[str] = field(default_factory=list)
    """The hostile classes the case belongs to (for the statistics of `make fuzz`)."""
    kept: list[Kept] = field(default_factory=list)
    """Texts a compiled fleet must carry as written."""
    same_as_example: list[str] = field(default_factory=list)
    """Job files whose charts must render to the same objects as the fleet's own (merge keys spelling them out)."""
    must_refuse: str = ""
    """Why the case must not compile, if it must not."""
    refused_for: str = ""
    """Text the refusal must hold (the rule that refuses it, not an error elsewhere), if any."""
    must_compile: str = ""
    """Why the case must compile, if it must (a name that looks reserved but is the site's own)."""
    kinds: list[str] = field(default_factory=list)
    """Which shapes of its class the case has, for the statistics."""

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
        ("launcherCreationPolicy", "AtStartup"), ("sshPort", 2222), ("sshPort", 22122), ("runAsUser", 1000),
        ("workerCommand", ["/usr/sbin/sshd", "-De", "-f", "/home/mpiuser/.sshd_config"]),
        ("scheduling", {"minAvailable": 2}), ("scheduling", {"minAvailable": 5}), ("scheduling", {"queue": "vision"}),
        ("scheduling", {"queue": "experiments", "priorityClass": "training-high"}),
        ("scheduling", {"priorityClass": "research", "topology": {"level": "host"}}),
        ("scheduling", {"topology": {"level": "rack", "mode": "preferred"}}),
        ("scheduling", {"topology": {"level": "block", "sliceLevel": "rack"}}),
        ("scheduling", {"topology": {"level": "rack", "sliceLevel": "block", "mode": "preferred"}}),
        *(("*", {"cluster": cluster, "pool": pool, "namespace": namespace}) for cluster, pool, namespace in (
            ("dgx-lab", "dgx", "ml-training"), ("dgx-lab", "cpu", "hpc"), ("cpu-lab", "cpu", "mpi"),
            ("netapp-lab", "dgx", "ai-training"), ("dgx-pod", "dgx", "team-vision"), ("dgx-pod", "dgx", "team-language"),
            ("volcano-lab", "dgx", "training"), ("h100-dra", "h100", "llm"), ("gb200-rack", "gb200", "frontier"),
            ("kueue-lab", "cpu", "research"), ("roce-lab", "dgx", "roce-training"))
          if cluster in FLEET_CLUSTERS),  # the job moved, as a whole, to another pool of the fleet
    ),
    "Cluster": (
        ("podSecurity", {"hpc": "privileged"}), ("podSecurity", {"mpi": "baseline", "ml-training": "restricted"}),
        ("cpuManagerPolicy", "static"), ("network", {"provider": "sriov-network-operator"}),
        ("network", {"provider": "rdma-shared"}), ("network", {"provider": "tcp"}),
        ("network", {"provider": "host-network", "sshPort": 2222}),
        ("gitops", {"tool": "flux", "repoURL": "https://git.example.com/{{ .Release.Name }}.git", "path": "charts"}),
        ("gitops", {"tool": "argocd", "repoURL": "ssh://git@git.example.com/org/repo.git", "revision": "release/1.0",
                    "project": "ml", "namespace": "gitops", "destination": "https://10.0.0.1:6443"}),
        ("gitops", {"tool": "flux", "sourceRef": {"name": "flux-system"}, "valuesPath": "environments/lab"}),
        ("gitops", {"tool": "flux", "repoURL": "https://git.example.com/org/repo.git", "secretRef": "deploy-key",
                    "sourceRef": {"name": "{{ .Release.Name }}", "namespace": "flux-system"}}),
        ("gitops", {"tool": "argocd", "repoURL": "https://git.example.com/org/repo.git", "applications": "applicationset",
                    "valuesPath": "charts/values"}),
        ("gitops", {"tool": "argocd", "repoURL": "https://git.example.com/org/repo.git", "applications": "applicationset",
                    "namespace": "gitops", "valuesPath": "environments/{{ .Values.image }}"}),
        ("kubernetesVersion", "1.29"), ("kubernetesVersion", "1.33"), ("kubernetesVersion", "1.34"),
        ("dra", {}), ("dra", {"gpuDeviceClass": "h100.example.com", "nicDeviceClass": "rdma.example.com",
                              "computeDomains": False}), ("namespaces", ["mpi", "hpc", "ml-training"]),
        ("scheduling", {"scheduler": "kueue"}), ("scheduling", {"scheduler": "volcano"}),
        ("scheduling", {"scheduler": "coscheduling", "schedulerName": "{{ .Release.Name }}"}),
        ("scheduling", {"scheduler": "kueue", "queues": [{"name": "a", "nodes": {"dgx": 1}, "cohort": "c",
                                                           "borrowNodes": {"dgx": 1}}, {"name": "b", "cohort": "c"}],
                        "topology": [{"name": "rack", "nodeLabel": "example.com/rack"},
                                     {"name": "host", "nodeLabel": "kubernetes.io/hostname"}],
                        "priorityClasses": [{"name": "high", "value": 1000, "description": LOOKUP}]}),
        ("scheduling", {"scheduler": "kueue", "topology": [
            {"name": "block", "nodeLabel": "example.com/block", "domainNodes": 6},
            {"name": "rack", "nodeLabel": "nvidia.com/gpu.clique", "domainNodes": 4},
            {"name": "host", "nodeLabel": "kubernetes.io/hostname", "domainNodes": 1}]}),
        ("scheduling", {"scheduler": "volcano", "queues": [{"name": "q", "weight": 3}],
                        "priorityClasses": [{"name": "p", "value": -5}]}),
        ("scheduling", {"scheduler": "kueue", "waitForPodsReady": {"timeoutSeconds": 1, "imageGB": 0.001,
                                                                   "nodePullMBps": 1, "registryMBps": 1}}),
        ("scheduling", {"scheduler": "volcano", "waitForPodsReady": {"timeoutSeconds": 2147483647, "imageGB": 100000}}),
        ("description", RELEASE_NAME),
    ),
    "Hardware": (
        ("extends", "dgx-a100"), ("extends", "dgx-h100"), ("gpu", {"count": 4, "model": "A100"}),
        ("gpu", {"count": 4, "model": "GB200", "nvlinkDomainGpus": 72}), ("gpu", {"count": 8, "nvlinkDomainGpus": 12}),
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
    trees = copy.deepcopy(FLEET_TREES)
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
    case.files = {path: (dump(trees[path]) if path in dirty else FLEET_FILES.get(path) or dump(trees[path]))
                  for path in sorted(trees) if path not in deleted}
    return case


BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\r", b"\t", b"\x85", b"\xe2\x80\xa8")
SNIPPETS = (b"---\n", b"\n---\n", b"...\n", b"&a ", b"*a", b"&a", b" *a\n", b"<<: *a\n", b"\t", b"{", b"[", b"}",
            b"]", b"'", b'"', b":", b": ", b"- ", b"#", b"|", b">", b"!!binary ", b"!!python/object:os.system ",
            b"%YAML 1.1\n", b"? ", b"\n  ", b"{{ .Release.Name }}")


@st.composite
def text_cases(draw: st.DrawFn) -> Case:
    name = draw(st.sampled_from(sorted(FLEET_FILES)))
    raw = bytearray(FLEET_FILES[name])
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
    case.files = {**FLEET_FILES, name: bytes(raw)}
    return case


# --- YAML the tree mutations cannot write: merge keys, implicit types, escapes, long strings ------------------------
#
# Each is written as text into one job file, through a top-level key the job gets anew (its old block removed):
# `env`, `program`, `mpirunArgs`, `image` or `description`. What the text must become, if the profile compiles, is
# recorded with the case (`Kept`), and checked in what Helm renders.

JOB_FILES = sorted(name for name in FLEET_FILES if name.startswith("jobs/"))


@dataclass(frozen=True)
class Kept:
    """What a compiled fleet must hold: `text` as the value of env variable `name` in every container of the job
    that sets it (`where` "env"), as an element of a container's command or args ("command"), or as an image."""

    job: str
    where: str
    text: str
    name: str = ""

    def __repr__(self) -> str:
        shown = self.text if len(self.text) < 60 else f"{self.text[:30]!r}...({len(self.text)} characters)"
        return f"Kept({self.job} {self.where}, {self.name or ''}{'=' if self.name else ''}{shown!r})"


def flow(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


IMPLICIT = ("2024-01-01 10:00:00", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
            "=", "<<", "~", "null", "Null", "yes", "No", "on", "OFF", "y", "n", "true", "False", "1e3", "12e03",
            "0x1F", "0o17", "012", "0b101", "1_000", "1__0", "1:20", "190:20:30", ".inf", "-.Inf", ".nan", "+1",
            "-0", "1.10", "0.", ".5", "1.0", "4.0", "0xZZ", "2024-13-45", "2024-1-1")
"""Plain scalars YAML 1.1 or 1.2 may read as something other than the text: a string field keeps the text or is
refused."""
CONTROL_ESCAPES = {"\\0": "\x00", "\\a": "\x07", "\\e": "\x1b", "\\x7f": "\x7f", "\\x85": "\x85", "\\N": "\x85",
                   "\\x9b": "\x9b", "\\u202e": "\u202e", "\\u2066": "\u2066", "\\u200f": "\u200f",
                   "\\u061c": "\u061c", "\\L": "\u2028", "\\P": "\u2029", "\\r": "\r", "\\v": "\x0b",
                   "\\t": "\t", "\\n": "\n", "\\u200b": "\u200b", "\\ufeff": "\ufeff", "\\_": "\u00a0",
                   "\\u00ad": "\u00ad", "\\U0001F600": "\U0001f600", "\\ud800": "\ud800"}
"""YAML escapes of control, format and separator characters, and what each stands for."""
FORBIDDEN_IN_VALUES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
                                 "\u2028\u2029\ud800-\udfff]")
"""What no profile value may hold (a tab and a newline may stand in a value, not in a key): written here from
docs/security.md rather than imported, so that a change of the rule fails this test."""
FORBIDDEN_IN_KEYS = re.compile(f"[\t\n{FORBIDDEN_IN_VALUES.pattern[1:-1]}]")
TARGETS = ("env-value", "env-key", "program", "mpirunArgs", "image", "description")


def _string_field(job: str, target: str, written: str, text: str | None, case: Case) -> None:
    """Put the YAML scalar `written` (standing for `text`, or for what the loader makes of it when None) at
    `target` of `job`, recording what a compile must keep."""
    tree = FLEET_TREES[job]
    raw = FLEET_FILES[job].decode("utf-8")
    if target in ("env-value", "env-key"):
        env = {str(k): str(v) for k, v in (tree.get("env") or {}).items()}
        body = "".join(f"  {flow(k)}: {flow(v)}\n" for k, v in env.items())
        line = f"  FUZZED: {written}\n" if target == "env-value" else f"  {written}: fuzzed\n"
        raw = without_keys(raw, "env") + "env:\n" + body + line
        if text is not None:
            case.kept.append(Kept(job, "env", text, "FUZZED") if target == "env-value"
                             else Kept(job, "env", "fuzzed", text))
    elif target in ("program", "mpirunArgs"):
        items = [str(v) for v in tree.get(target) or (["/bin/true"] if target == "program" else [])]
        raw = without_keys(raw, target) + f"{target}:\n" + "".join(f"  - {flow(v)}\n" for v in items) + \
            f"  - {written}\n"
        if text is not None:
            case.kept.append(Kept(job, "command", text))
    elif target == "image":
        raw = without_keys(raw, "image") + f"image: {written}\n"
        if text is not None:
            case.kept.append(Kept(job, "image", text))
    else:
        raw = without_keys(raw, "description") + f"description: {written}\n"
    case.files[job] = raw.encode("utf-8")


@st.composite
def merge_key_cases(draw: st.DrawFn) -> Case:
    """`<<` in its valid forms (a mapping, a list of them, anchored and aliased, nested), with a known result,
    and in forms YAML refuses (not a mapping, twice, an undefined alias, inside a list)."""
    job = draw(st.sampled_from(JOB_FILES))
    case = Case(dict(FLEET_FILES), [f"{job}: merge keys"], classes=["merge keys"])
    raw = FLEET_FILES[job].decode("utf-8")
    tree = FLEET_TREES[job]
    form = draw(st.sampled_from(("env", "env", "top", "top-override", "hostile")))
    names = st.sampled_from(("A", "B", "C", "NCCL_DEBUG"))
    texts = st.sampled_from(("1", "x", "", "{{ .Release.Name }}", "2024-01-01 10:00:00", "a b"))
    if form == "env":
        sources = draw(st.lists(st.dictionaries(names, texts, min_size=1, max_size=3), min_size=1, max_size=3))
        explicit = draw(st.dictionaries(names, texts, max_size=2))
        style = draw(st.sampled_from(("flow", "list", "block", "anchored", "nested")))
        if len(sources) < 2 and style in ("list", "anchored", "nested"):
            style = "flow"
        sources = sources[:1] if style in ("flow", "block") else sources[:2] if style == "nested" else sources
        merged: dict[str, str] = {}
        for source in reversed(sources):  # the first mapping of a list wins, and the explicit keys over all
            merged.update(source)
        merged.update(explicit)
        text = {"flow": f"  <<: {flow(sources[0])}\n",
                "list": f"  <<: [{', '.join(map(flow, sources))}]\n",
                "block": "  <<:\n" + "".join(f"    {k}: {flow(v)}\n" for k, v in sources[0].items()),
                "anchored": f"  <<: [&first {flow(sources[0])}, *first, {', '.join(map(flow, sources[1:]))}]\n",
                "nested": f"  <<: {{<<: {flow(sources[-1])}, {flow(sources[0])[1:-1]}}}\n"}[style]
        kept_env = {str(k): str(v) for k, v in (tree.get("env") or {}).items() if k not in merged}
        old = "".join(f"  {flow(k)}: {flow(v)}\n" for k, v in kept_env.items())
        body = "".join(f"  {k}: {flow(v)}\n" for k, v in explicit.items())
        raw = without_keys(raw, "env") + "env:\n" + old + text + body
        case.kept += [Kept(job, "env", v, k) for k, v in merged.items()]
        case.steps.append(f"env {style}: {text.strip()} {body.strip()}")
        case.kinds.append(f"merge into env, {style}")
    elif form in ("top", "top-override"):
        keys = [k for k in ("namespace", "image", "workers", "slotsPerWorker", "shmSize") if k in tree]
        moved = draw(st.lists(st.sampled_from(keys), min_size=1, max_size=len(keys), unique=True))
        if form == "top":
            raw = without_keys(raw, *moved) + f"<<: {flow({k: tree[k] for k in moved})}\n"
        else:  # the key is written too, with its own value: the written one wins
            raw = raw + f"<<: {flow({k: 'merged-and-overridden' for k in moved})}\n"
        case.same_as_example.append(job)
        case.steps.append(f"top-level {form}: {moved}")
        case.kinds.append(f"merge at the top, {form}")
    else:
        hostile = draw(st.sampled_from((
            "<<: 3\n", '<<: "text"\n', "<<: [1]\n", "<<: *nowhere\n", "<<: ~\n", "<<: []\n", "<<: {}\n",
            "<<: {workers: 1}\n<<: {workers: 2}\n", "<<: [{workers: 1}, 5]\n", "<<: &self {<<: *self}\n",
            "program: [{<<: {a: b}}]\n", "env:\n  <<: {A: [x]}\n", '"<<": {workers: 1}\n', "<<: !!map {}\n",
            "env: &e\n  A: x\nlauncher:\n  <<: *e\n", "? <<\n: {workers: 1}\n")))
        raw = (without_keys(raw, "program", "env") + ("program: [/bin/true]\n" if "program" in hostile else "")
               + hostile)
        case.steps.append(f"hostile {hostile!r}")
        case.kinds.append("merge in a form YAML or the schema refuses")
    case.files[job] = raw.encode("utf-8")
    return case


@st.composite
def implicit_type_cases(draw: st.DrawFn) -> Case:
    """A plain scalar whose YAML type depends on its look (timestamps, booleans, numbers, `=`, `<<`), where a
    string belongs, under YAML 1.2 or a `%YAML 1.1` directive: the text written, or refused."""
    job = draw(st.sampled_from(JOB_FILES))
    written = draw(st.sampled_from(IMPLICIT))
    target = draw(st.sampled_from(TARGETS))
    case = Case(dict(FLEET_FILES), [f"{job}: {target} = {written} (plain)"], classes=["implicit types"])
    _string_field(job, target, written, written, case)
    version = draw(st.sampled_from(("1.2", "1.1")))
    if version == "1.1":
        case.files[job] = b"%YAML 1.1\n---\n" + case.files[job]
        case.steps.append("under %YAML 1.1")
    case.kinds.append(f"implicit type in {target}, YAML {version}")
    return case


@st.composite
def control_character_cases(draw: st.DrawFn) -> Case:
    """Control, bidi, separator, zero-width and surrogate characters through YAML's escapes, in values and keys:
    refused where docs/security.md says so, else kept as written."""
    job = draw(st.sampled_from(JOB_FILES))
    escape = draw(st.sampled_from(sorted(CONTROL_ESCAPES)))
    target = draw(st.sampled_from(TARGETS))
    before, after = draw(st.sampled_from((("", ""), ("a", "b"), ("/bin/x", " --flag"), ("", "x"))))
    written = '"' + before + escape + after.replace('"', '\\"') + '"'
    text = before + CONTROL_ESCAPES[escape] + after
    case = Case(dict(FLEET_FILES), [f"{job}: {target} = {written}"], classes=["control characters"])
    _string_field(job, target, written, text, case)
    forbidden = FORBIDDEN_IN_KEYS if target == "env-key" else FORBIDDEN_IN_VALUES
    if forbidden.search(text):
        case.must_refuse = f"{CONTROL_ESCAPES[escape]!r} in {target}"
    case.kinds.append(f"{'forbidden' if case.must_refuse else 'allowed'} character in {target}")
    return case


LONG_UNITS = ("{{", "`{{", '{{"\\', "}}{{-", "a:", "a: ", "[", "{", "&a ", "*a ", "x", "://a:b@", "--password=",
              "é", "😀", "\u00ad", "\\", "'", "- ", " #", "${", "$(", "\u200b", "-eyJ", "hf_", "markers")
LONG_SIZES = (64 * 1024, 256 * 1024, 1024 * 1024 - 8192, 1024 * 1024 + 1)


@st.composite
def long_string_cases(draw: st.DrawFn) -> Case:
    """One string of 64 KiB up to just past the 1 MiB profile limit, repeating what scanners, escapes and
    template markers trip on: compiled with the text kept, or refused, and in time either way."""
    job = draw(st.sampled_from(JOB_FILES))
    unit = draw(st.sampled_from(LONG_UNITS))
    size = draw(st.sampled_from(LONG_SIZES))
    target = draw(st.sampled_from(("env-value", "env-value", "program", "description", "env-key", "image")))
    style = draw(st.sampled_from(("double", "single")))
    if unit == "markers":
        parts, n, length = [], 0, 0
        while length < size:
            parts.append(f"mpigenhole{n}x")
            length += len(parts[-1])
            n += 1
        text = "".join(parts)
    else:
        text = unit * max(size // len(unit.encode("utf-8")), 1)
    written = flow(text) if style == "double" else "'" + text.replace("'", "''") + "'"
    case = Case(dict(FLEET_FILES), [f"{job}: {target} = {style}-quoted {unit!r} x {len(text)}"],
                classes=["long strings"])
    _string_field(job, target, written, text, case)
    band = {LONG_SIZES[0]: "64 KiB", LONG_SIZES[1]: "256 KiB", LONG_SIZES[2]: "just under 1 MiB"}.get(size, "over 1 MiB")
    case.kinds.append(f"{band} string in {target}")
    return case


# --- what belongs to the controllers: reserved key domains, their namespaces, `system-` priority classes -------------
#
# Written out from docs/security.md rather than imported, so that a change of the rules fails here.

RESERVED_DOMAINS = ("kubernetes.io", "k8s.io", "x-k8s.io", "kubeflow.org", "volcano.sh", "helm.sh", "argoproj.io",
                    "fluxcd.io", "cncf.io", "multus-cni.io", "openshift.io", "nvidia.com", "kai.scheduler", "runai",
                    "projectcalico.org", "cilium.io", "ovn.kubernetes.io", "k8s.ovn.org", "antrea.io", "spidernet.io",
                    "mpigen")
CONTROLLER_NAMESPACES = ("argocd", "flux-system", "kueue-system", "volcano-system", "volcano-monitoring",
                         "scheduler-plugins", "kai-scheduler", "kai-resource-reservation", "mpi-operator", "kubeflow",
                         "kubeflow-system", "sriov-network-operator", "openshift-sriov-network-operator",
                         "nvidia-network-operator", "network-operator", "gpu-operator", "nvidia-gpu-operator",
                         "nvidia-device-plugin", "gpu-feature-discovery", "nvidia-dra-driver-gpu", "node-feature-discovery",
                         "tigera-operator", "calico-system", "cert-manager", "kube-system", "kube-public",
                         "kube-node-lease", "kube-flannel", "kube-ovn", "openshift-ovn-kubernetes", "openshift-monitoring")
SITE_KUBE_NAMESPACES = ("kube-openmpi", "kube-jobs")
"""`kube-*` namespaces of a site's own: a job namespace where it exists already, never one the infra chart creates
(Kubernetes' documentation keeps the prefix for its system namespaces)."""
KEY_SPELLINGS = ("as-is", "subdomain", "upper", "capitalised", "trailing-dot", "look-alike", "space")
LOOK_ALIKES = {"o": "\u043e", "e": "\u0435", "a": "\u0430", "i": "\u0456", "c": "\u0441", "p": "\u0440", "x": "\u0445"}
CLUSTER_FILES = sorted(name for name in FLEET_FILES if name.startswith("clusters/"))


def _spelled(domain: str, spelling: str) -> str:
    """A key prefix of `domain` as someone might write it to get past a check."""
    if spelling == "subdomain":
        return f"v1.{domain}"
    if spelling == "upper":
        return domain.upper()
    if spelling == "capitalised":
        return domain[:1].upper() + domain[1:]
    if spelling == "trailing-dot":
        return domain + "."
    if spelling == "look-alike":
        at = next(i for i, char in enumerate(domain) if char in LOOK_ALIKES)
        return domain[:at] + LOOK_ALIKES[domain[at]] + domain[at + 1:]
    if spelling == "space":
        return domain + " "
    return domain


@st.composite
def reserved_cases(draw: st.DrawFn) -> Case:
    """A label or annotation key of a reserved domain in any spelling, a controller's or Kubernetes' namespace as a job
    namespace (or existing one, or the one the profile's GitOps tool or network operator runs in), or a `system-`
    priority class declared or named: each refused, for that reason, at a clean `path:line:col`. A site's own `kube-*`
    namespace is refused where the infra chart would create it, and compiles where it exists already."""
    trees = copy.deepcopy(FLEET_TREES)
    case = Case({}, classes=["reserved"])
    kind = draw(st.sampled_from(("key", "key", "namespace", "component-namespace", "priority-class")))
    if kind == "key":
        job = draw(st.sampled_from(JOB_FILES))
        domain, spelling = draw(st.sampled_from(RESERVED_DOMAINS)), draw(st.sampled_from(KEY_SPELLINGS))
        field_ = draw(st.sampled_from(("labels", "annotations")))
        key = f"{_spelled(domain, spelling)}/{draw(st.sampled_from(('default-network', 'queue', 'x', 'name')))}"
        value = "kube-system/host-bridge" if field_ == "annotations" else "x"
        trees[job].setdefault(field_, {})[key] = value
        if draw(st.booleans()):
            trees[job][field_]["team.example.com/owner"] = "ml"  # a key of one's own beside it
        case.files[job] = dump(trees[job])
        case.refused_for = (f"is in domain {domain}, which a job may not use" if spelling in ("as-is", "subdomain")
                            else f"in `{field_}` is not valid")
        case.steps.append(f"{job}: {field_}[{key!r}] = {value!r}")
        case.kinds.append(f"reserved key {spelling}, in {field_}")
    elif kind == "namespace":
        cluster = draw(st.sampled_from(CLUSTER_FILES))
        namespace = draw(st.sampled_from(CONTROLLER_NAMESPACES + SITE_KUBE_NAMESPACES))
        tree = trees[cluster]
        tree["namespaces"] = [*tree["namespaces"], namespace]
        existing = draw(st.booleans())
        if existing:
            tree["existingNamespaces"] = [*tree.get("existingNamespaces", []), namespace]
        case.files[cluster] = dump(tree)
        case.steps.append(f"{cluster}: namespaces += {namespace} (existing: {existing})")
        if namespace in SITE_KUBE_NAMESPACES and existing:
            case.must_compile = f"{namespace} is the site's own, and exists already"
            case.kinds.append("a site's own kube-* namespace, existing")
        else:
            case.refused_for = f"namespace '{namespace}' "
            case.kinds.append("a controller's namespace" if not namespace.startswith("kube-") else
                              "a site's own kube-* namespace, to create" if namespace in SITE_KUBE_NAMESPACES else
                              "Kubernetes' namespace")
    elif kind == "component-namespace":
        cluster = draw(st.sampled_from(CLUSTER_FILES))
        tree = trees[cluster]
        namespace = draw(st.sampled_from(("deploy", "gitops", "ops", "sriov", "plugins")))
        component = draw(st.sampled_from(("gitops", "operator", "device-plugin")))
        if component == "gitops":
            tree["gitops"] = {"tool": draw(st.sampled_from(("argocd", "flux"))),
                              "repoURL": "https://git.example.com/fleet.git", "namespace": namespace}
        elif component == "operator":
            tree["network"] = {"provider": "sriov-network-operator", "operatorNamespace": namespace}
        else:
            tree["network"] = {"provider": draw(st.sampled_from(("sriov-device-plugin", "rdma-shared", "host-network"))),
                               "devicePluginNamespace": namespace}
        tree["namespaces"] = [*tree["namespaces"], namespace]
        case.files[cluster] = dump(tree)
        case.refused_for = f"namespace '{namespace}' belongs to this cluster's"
        case.steps.append(f"{cluster}: {component} runs in {namespace}, a job namespace too")
        case.kinds.append(f"the namespace of the profile's {component}")
    else:
        name = "system-" + draw(st.sampled_from(("node-critical", "cluster-critical", "gpu", "high")))
        cluster = draw(st.sampled_from(CLUSTER_FILES))
        tree = trees[cluster]
        scheduling = tree.setdefault("scheduling", {"scheduler": "none"})
        classes = scheduling.setdefault("priorityClasses", [])
        declared = draw(st.booleans()) or not classes
        if declared:
            classes.append({"name": name, "value": draw(st.sampled_from((1000, -5, 1_000_000_000)))})
            case.files[cluster] = dump(tree)
        jobs = [job for job in JOB_FILES if trees[job]["cluster"] == tree["name"]]
        if jobs and (not declared or draw(st.booleans())):
            job = draw(st.sampled_from(jobs))
            trees[job].setdefault("scheduling", {})["priorityClass"] = name
            case.files[job] = dump(trees[job])
        elif not declared:
            classes.append({"name": name, "value": 1000})
            case.files[cluster] = dump(tree)
        case.refused_for = f"priority class '{name}': Kubernetes keeps priority class names starting with `system-`"
        case.steps.append(f"{cluster}: priority class {name} ({'declared' if declared else 'named by a job'})")
        case.kinds.append(f"a `system-` priority class, {'declared' if declared else 'named only'}")
    case.files = {**FLEET_FILES, **case.files}
    case.must_refuse = case.steps[-1]
    return case


# --- quantities of every size and precision -------------------------------------------------------------------------
#
# Written out from docs/security.md rather than imported: Kubernetes counts a CPU request in whole
# millicores and memory (and /dev/shm) in whole bytes, rounding anything finer up, and as an int64 of that unit; a
# node's memory in GiB is at most that many bytes.

QUANTITY_SUFFIXES = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
                     "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
QUANTITY_FIELDS = {("resources", "cpu"): 1000, ("resources", "memory"): 1, ("launcher", "resources", "cpu"): 1000,
                   ("launcher", "resources", "memory"): 1, ("shmSize",): 1}
"""Where a job writes a quantity, and how many of what Kubernetes counts make one (millicores in a CPU)."""
WHOLE_PARTS = ("0", "1", "2", "16", "512", "9223372036854775807", "9223372036854775808", "9" * 29, "1" + "0" * 400)
FRACTION_PARTS = ("", "5", "25", "001", "0005", "000000001", "0000000001", "0" * 30 + "1", "1" * 45)
NODE_MEMORY_GIB = (1, 2**33 - 1, 2**33, 2**63, 10**40)
MAX_COUNT = 2**63 - 1
QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)")


def quantity_texts() -> st.SearchStrategy[str]:
    """Quantities the profile grammar takes, from 0 to 10^400 exbibytes and to 10^-45 of a unit."""
    return st.builds(lambda whole, fraction, suffix: whole + (f".{fraction}" if fraction else "") + suffix,
                     st.sampled_from(WHOLE_PARTS), st.sampled_from(FRACTION_PARTS),
                     st.sampled_from(sorted(QUANTITY_SUFFIXES)))


@st.composite
def quantity_cases(draw: st.DrawFn) -> Case:
    """A quantity of any size, precision and suffix in a job's CPU, memory or /dev/shm (its workers' or its
    launcher's), or a node's memoryGiB at the edge of what Kubernetes counts: compiled as the cluster would keep it,
    or refused (for that reason where Kubernetes would round or cap it); never a traceback."""
    trees = copy.deepcopy(FLEET_TREES)
    case = Case({}, classes=["quantities"])
    if draw(st.integers(0, 5)) == 0:
        hardware = draw(st.sampled_from(sorted(name for name in FLEET_FILES if name.startswith("hardware/"))))
        gib = draw(st.sampled_from(NODE_MEMORY_GIB))
        trees[hardware]["memoryGiB"] = gib
        case.files[hardware] = dump(trees[hardware])
        case.steps.append(f"{hardware}: memoryGiB = {gib}")
        if gib * 2**30 > MAX_COUNT:
            case.must_refuse, case.refused_for = case.steps[-1], f"`memoryGiB` is {gib}; it must be <= {2**33 - 1}"
        case.kinds.append(f"node memory {'past' if case.must_refuse else 'within'} what Kubernetes counts")
    else:
        job = draw(st.sampled_from(JOB_FILES))
        path, per_unit = draw(st.sampled_from(sorted(QUANTITY_FIELDS.items())))
        text = draw(quantity_texts())
        node = trees[job]
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = text
        case.files[job] = dump(trees[job])
        case.steps.append(f"{job}: {'.'.join(path)} = {text!r}")
        number, suffix = QUANTITY.fullmatch(text).groups()
        count = Fraction(number) * QUANTITY_SUFFIXES[suffix] * per_unit
        unit = "millicores" if per_unit == 1000 else "bytes"
        if count > MAX_COUNT:
            case.must_refuse, case.refused_for = case.steps[-1], "more than Kubernetes can count"
        elif count.denominator != 1:
            case.must_refuse, case.refused_for = case.steps[-1], f"not a whole number of {unit}"
        case.kinds.append(f"{'.'.join(path)}: " + ("past what Kubernetes counts" if count > MAX_COUNT else "rounded"
                                                   if count.denominator != 1 else "kept"))
    case.files = {**FLEET_FILES, **case.files}
    return case


cases = st.one_of(tree_cases(), tree_cases(), tree_cases(), text_cases())

# --- running it -----------------------------------------------------------------------------------------------------

DIAGNOSTIC = re.compile(r"(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<severity>error|warning): (?P<message>.+)")
SUMMARY = re.compile(r"\d+ error\(s\), \d+ warning\(s\) in \d+ profile file\(s\); nothing was written")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@dataclass(repr=False)
class Fixture:
    root: Path
    baseline: dict[str, bytes]
    options: CheckOptions
    renders: Renders
    schema_sets: SchemaSets
    example: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """The fleet's objects (unmutated), by chart folder."""

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
        with cached_check(self.renders, self.schema_sets):
            yield


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    """`folder` holding exactly `files`, as plain files of the default mode and the folders they are in: written
    whole where it holds anything else (a link, a FIFO), else by what differs, as each example changes a few files
    of a few hundred (writing every file again cost more than most examples)."""
    present: dict[str, Path] = {}
    folders: list[Path] = []
    if folder.is_dir() and not folder.is_symlink():
        for dirpath, dirnames, filenames in os.walk(folder):
            folders.extend(Path(dirpath) / name for name in dirnames)
            present.update({(Path(dirpath) / name).relative_to(folder).as_posix(): Path(dirpath) / name
                            for name in filenames})
    plain = [path.lstat() for path in [*present.values(), *folders]]
    if len(present) + len(folders) != sum(stat.S_ISREG(s.st_mode) or stat.S_ISDIR(s.st_mode) for s in plain):
        shutil.rmtree(folder)
        present, folders = {}, []
    for path in present.keys() - files.keys():
        present[path].unlink()
    for path, data in files.items():
        target = folder / path
        if path in present:
            if stat.S_IMODE(target.lstat().st_mode) == FILE_MODE and target.read_bytes() == data:
                continue
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    needed = {parent for path in files for parent in (folder / path).parents}
    for empty in sorted((f for f in folders if f not in needed), key=lambda f: len(f.parts), reverse=True):
        empty.rmdir()


FILE_MODE = 0o666 & ~os.umask(os.umask(0o022))
"""The mode a file written here gets (the process's umask applied)."""


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
    helm4 = require_helm(4)
    helm3 = require_helm(3) if LONG else None  # the long fuzz compares Helm 3 and Helm 4
    root = tmp_path_factory.mktemp("fuzz").resolve()
    fixture = Fixture(root, {}, CheckOptions(helm=str(helm4), crds=CRDS, strict=True),
                      Renders(compare_with=str(helm3) if helm3 else None), SchemaSets())
    write_files(fixture.profiles, FLEET_FILES)
    result = render(fixture.profiles, fixture.out)
    assert result.exit_code == 0, result.output
    fixture.baseline = snapshot(fixture.out)
    fixture.example = {chart.directory: sorted((m.obj for m in chart.manifests), key=identity)
                       for chart in compile_profiles([fixture.profiles]).charts}
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
    judge = schema_set._validator((document.api_version, document.kind))
    if judge is not None:
        validator = judge.validator.evolve(format_checker=INTEGER_FORMATS)
        found |= {tuple(e.absolute_path): e.validator_value for e in validator.iter_errors(document.obj)
                  if e.validator == "format"}
    return [f"{document.label}: {list(path)}: {get(document.obj, path)} is beyond {fmt}" for path, fmt in found.items()]


def containers(obj: Any) -> Iterator[dict[str, Any]]:
    """Every container of every pod template in a rendered object."""
    for _, node in nodes(obj):
        if isinstance(node, dict):
            for key in ("containers", "initContainers"):
                if isinstance(node.get(key), list):
                    yield from (c for c in node[key] if isinstance(c, dict))


def kube_expanded(text: str) -> str:
    """What a container gets from an env value, command or argument: Kubernetes expands `$(VAR)` references
    and reads `$$` as `$` (k8s.io/kubernetes third_party/forked/golang/expansion; no variable is defined here,
    so a reference stays as written)."""
    out, position = [], 0
    while position < len(text):
        ch = text[position]
        if ch != "$" or position + 1 == len(text):
            out.append(ch)
            position += 1
            continue
        after = text[position + 1]
        if after == "$":
            out.append("$")
            position += 2
        elif after == "(" and (close := text.find(")", position + 2)) != -1:
            out.append(text[position:close + 1])
            position = close + 1
        else:  # `$x`, or `$(` never closed: kept, and the scan goes on after the `$`'s next character
            out.append("$" + after)
            position += 2
    return "".join(out)


def kept_problems(kept: list[Kept], documents: list[Any], charts: dict[str, str]) -> list[str]:
    """The texts a case wrote that a compiled fleet does not carry as written (`charts`: the folder of each
    job file's chart, as check names it), once Kubernetes has expanded env values and commands. A TrainJob's pods
    are in the TrainingRuntime its runtimeRef names, which the cluster's infra chart carries."""
    problems = []
    for want in kept:
        own = [document for document in documents if document.chart == charts.get(want.job)]
        runtimes = {(document.namespace, document.obj["spec"]["runtimeRef"]["name"]) for document in own
                    if document.kind == "TrainJob"}
        own += [document for document in documents
                if document.kind == "TrainingRuntime" and (document.namespace, document.name) in runtimes]
        every = [c for document in own for c in containers(document.obj)]
        if want.where == "env":
            given = [kube_expanded(e.get("value", "")) for c in every for e in c.get("env") or []
                     if e.get("name") == want.name]
            ok = bool(given) and all(value == want.text for value in given)
        elif want.where == "command":
            given = [[kube_expanded(part) for part in c.get("command", []) + c.get("args", [])] for c in every]
            ok = any(want.text in line for line in given)
        else:
            given = [c.get("image") for c in every]
            ok = want.text in given
        if not ok:
            shown = [repr(g)[:200] for g in given]
            problems.append(f"{want!r} is not what the cluster gets: {shown}")
    return problems


def run_case(fixture: Fixture, case: Case, seconds: float | None = None) -> None:
    """Render `case` into a copy of the fleet's charts, and hold it to the promises of the module docstring;
    `seconds` bounds the render's wall time (a linear render of 1 MiB takes about one)."""
    write_files(fixture.profiles, case.files)
    write_files(fixture.out, fixture.baseline)
    started = time.perf_counter()
    result = render(fixture.profiles, fixture.out)
    elapsed = time.perf_counter() - started
    assert seconds is None or elapsed < seconds, f"render took {elapsed:.1f} s"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        trace = "".join(traceback.format_exception(*result.exc_info))
        pytest.fail(f"render raised {type(result.exception).__name__}:\n{trace}")
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    failed = result.exit_code == 1
    problems = check_diagnostics(result.stderr, fixture.profiles.resolve(), failed)
    assert not problems, "\n".join(problems) + "\n--- stderr:\n" + result.stderr
    changed = [fixture.profiles / path for path, data in case.files.items() if FLEET_FILES.get(path) != data]
    judged = profile_verdict_disagreements(load_paths(changed).documents if changed else [])
    assert not judged.disagreements, "the compiled validator and jsonschema disagree:\n" + "\n".join(judged.disagreements)
    event("refused with diagnostics" if failed else "compiled")
    if not failed and case.planted:
        event("compiled with a template planted")
    for name in case.classes:
        event(f"class {name}: {'refused' if failed else 'compiled'}")
    for kind in case.kinds:
        event(kind)
    if failed:
        assert not case.must_compile, f"refused although it must compile: {case.must_compile}\n{result.stderr}"
        assert snapshot(fixture.out) == fixture.baseline, "a failed render changed the output folder"
        assert case.refused_for in result.stderr, f"refused, but not for {case.refused_for!r}:\n{result.stderr}"
        return
    assert not case.must_refuse, f"compiled although it must be refused: {case.must_refuse}"
    compiled = compile_profiles([fixture.profiles])
    assert compiled.ok
    for job in case.same_as_example:
        chart = next(c for c in compiled.charts if c.source.endswith("/" + job))
        assert sorted((m.obj for m in chart.manifests), key=identity) == fixture.example[chart.directory], (
            f"{job}: merge keys spelling out the fleet's own values give other objects")
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
    newest = max(fixture.schema_sets.made.values(), key=lambda made: [int(n) for n in made.bundled_version.split(".")])
    for judging in (schema_set, newest):  # mpigen's own schemas, and the upstream CRDs check was given
        judged = schema_verdict_disagreements(judging, report.documents)
        assert not judged.disagreements, "the compiled validator and LinearValidator disagree:\n" + "\n".join(
            judged.disagreements)
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
    charts = {job: f"{fixture.out.as_posix()}/{chart.directory}" for chart in compiled.charts
              for job in {want.job for want in case.kept} if chart.source.endswith("/" + job)}
    problems = kept_problems(case.kept, report.documents, charts)
    assert not problems, "\n".join(problems)


def _settings() -> Callable[[Any], Any]:
    database = DirectoryBasedExampleDatabase(str(REPO / ".hypothesis" / "examples"))
    return settings(max_examples=EXAMPLES, deadline=None, database=database if LONG else None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@seed(SEED)
@_settings()
@given(case=cases)
@example(case=Case(dict(FLEET_FILES), ["the fleet as it is"]))
def test_a_mutated_fleet_compiles_and_checks_clean_or_fails_cleanly(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case)


# CI: the same examples of each class every run (the fixed seed), a few of each form the class draws; `make fuzz`: N/4.
CLASS_EXAMPLES = max(EXAMPLES // 4, 50) if LONG else 10  # merge keys and implicit types compile most: 1-1.5 s each
CONTROL_EXAMPLES = max(EXAMPLES // 4, 50) if LONG else 15  # refused more often: about 0.5 s each


@seed(SEED)
@settings(_settings(), max_examples=CLASS_EXAMPLES)
@given(case=merge_key_cases())
def test_merge_keys_compile_as_spelled_out_or_fail_cleanly(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case)


@seed(SEED)
@settings(_settings(), max_examples=CLASS_EXAMPLES)
@given(case=implicit_type_cases())
def test_implicitly_typed_scalars_in_string_fields_keep_their_text_or_fail_cleanly(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case)


@seed(SEED)
@settings(_settings(), max_examples=CONTROL_EXAMPLES)
@given(case=control_character_cases())
def test_control_characters_are_refused_or_kept_as_written(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case)


RESERVED_EXAMPLES = max(EXAMPLES // 8, 30) if LONG else 15  # each is refused by validation alone: fast


@seed(SEED)
@settings(_settings(), max_examples=RESERVED_EXAMPLES)
@given(case=reserved_cases())
def test_what_belongs_to_the_controllers_is_refused_cleanly(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case)


QUANTITY_EXAMPLES = max(EXAMPLES // 8, 30) if LONG else 14  # most are refused by validation alone: fast


@seed(SEED)
@settings(_settings(), max_examples=QUANTITY_EXAMPLES)
@given(case=quantity_cases())
def test_quantities_of_any_size_and_precision_compile_as_kept_or_are_refused_cleanly(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case)


LONG_EXAMPLES = max(EXAMPLES // 20, 8) if LONG else 4  # each renders and checks up to 1 MiB of profile: seconds


@seed(SEED)
@settings(_settings(), max_examples=LONG_EXAMPLES)
@given(case=long_string_cases())
def test_a_long_adversarial_string_compiles_kept_or_fails_cleanly_in_time(fuzz: Fixture, case: Case) -> None:
    run_case(fuzz, case, seconds=30)


def test_the_base_fleet_has_every_shape_of_the_example_fleet(example, base_profiles):
    """What CI's fuzz proves of the base fleet holds for the example fleet only while the base has every shape the
    example has: a cluster of a new shape in profiles/ fails here until conftest.BASE_CLUSTERS names it."""
    base = compile_profiles([base_profiles])
    assert base.ok, [d.format() for d in base.diagnostics]
    missing = fleet_shapes(example) - fleet_shapes(base)
    assert not missing, f"the base fleet lacks {sorted(missing)}: add the example cluster that has it to BASE_CLUSTERS"
    acceptance = sorted(chart.directory for chart in base.charts if "/acceptance/" in chart.directory)
    assert acceptance == [chart for chart in ACCEPTANCE_CHARTS if chart.startswith(f"{BASE_ACCEPTANCE}/")]
    assert {cluster.name for cluster in base.fleet.clusters} == set(BASE_CLUSTERS)


@pytest.mark.parametrize(("written", "container_gets"), [
    ("$$(VAR)", "$(VAR)"), ("$(VAR)", "$(VAR)"), ("$$", "$"), ("$$$$", "$$"), ("$", "$"), ("a$b", "a$b"),
    ("$(open", "$(open"), ("$$${x}", "$${x}"), ("$(a)$$(b)", "$(a)$(b)"),
])
def test_kube_expanded_reads_dollars_as_kubernetes_does(written, container_gets):
    """From Kubernetes' expansion rules (pkg third_party/forked/golang/expansion), with no variable defined."""
    assert kube_expanded(written) == container_gets
