"""Schema check of rendered documents, the way the API server of one Kubernetes version would judge them.

- Built-in kinds: kubernetes-validate's bundled strict JSON Schemas for the newest bundled Kubernetes
  version not newer than the one asked for (as `kubernetes_validate.validate` picks it). Its
  `validate()` reads the kind's file and the 1.3 MB `_definitions.json` on every call; here each file
  is read once per process and each validator is compiled once per SchemaSet.
- Custom resources mpigen emits: mpigen's own schemas in `schemas/crds/` (shipped in the wheel as
  `generator/schemas/crds/`). Their pod templates and metadata `$ref` the Kubernetes definitions of
  the selected version, so they are checked as strictly as built-in Pods; quantities in them are
  int-or-string with the quantity pattern, as the API server checks them inside a CRD.
- Any other custom resource: schemas converted from CRDs given with `--crds` (generator/check/crdschema);
  these also override mpigen's own schema of the same apiVersion and kind.

Custom resources have null fields pruned first, as the API server does before validating them. Each schema
is judged by two validators (schema_judge.Judge): jsonschema-rs compiled (check/compiled_schemas), asked first, and
LinearValidator, whose verdict stands and whose errors are the findings, asked only where the first does not find
the document valid.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache, partial
from importlib import resources, util
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml.error import YAMLError

from mpigen.check.compiled_schemas import Definitions, compile_check_schema, compiled_definitions
from mpigen.check.crdschema import SchemaKey, crd_schemas
from mpigen.check.schema_judge import RULE, Judge, short
from mpigen.readback import kubeyaml
from mpigen.readback.discover import manifest_files
from mpigen.readback.findings import Finding, RenderedObject, finding
from mpigen.readback.inputs import InputError, read_text
from mpigen.readback.kubeyaml import KubeYAMLError
from mpigen.support.diagnostics import Severity
from mpigen.support.schema_files import schema_dir
from mpigen.vocabulary.kubernetes import CRD_KIND, QUANTITY_PATTERN

if TYPE_CHECKING:  # jsonschema is imported where a document is not found valid, or a CRD's schema is judged
    from referencing import Registry

CRD_SUFFIXES = (".yaml", ".yml", ".json")

_BUNDLE_ROOT = "kubernetes-json-schema"
_STRICT_DIR = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-local-strict$")
_QUANTITY_DEF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
CRD_QUANTITY: dict[str, Any] = {"description": "A quantity in a custom resource: an integer, or a string like 500m or 16Gi.",
                                "type": ["integer", "string"], "pattern": QUANTITY_PATTERN}
_GROUP_PREFIX = re.compile(r"^([^./]*)(?:\.[^/]*)?/")
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


# --- kubernetes-validate's bundle ------------------------------------------------------------------

@cache
def _bundle_files() -> Any:
    """The bundled schema folder (an importlib Traversable), located the way kubernetes-validate does, but without
    running its package, which imports jsonschema: where every document is valid, check never needs it."""
    spec = util.find_spec("kubernetes_validate")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / _BUNDLE_ROOT
    return resources.files("kubernetes_validate").joinpath(_BUNDLE_ROOT)


@cache
def _strict_dirs() -> dict[tuple[int, int], str]:
    """(major, minor) -> the folder of strict schemas, e.g. (1, 31) -> 'v1.31.0-local-strict'."""
    found: dict[tuple[int, int], str] = {}
    for entry in _bundle_files().iterdir():
        match = _STRICT_DIR.match(entry.name)
        if match:
            found[(int(match[1]), int(match[2]))] = entry.name
    return dict(sorted(found.items()))


def bundled_kube_versions() -> list[str]:
    """Kubernetes versions kubernetes-validate bundles strict schemas for, oldest first: ['1.25', ..., '1.37']."""
    return [f"{major}.{minor}" for major, minor in _strict_dirs()]


def select_kube_version(kube_version: str) -> str:
    """The bundled version whose schemas judge `kube_version`: the newest one not newer than it.

    '1.31', 'v1.31' and '1.31.4' all select '1.31'; a version newer than every bundled one selects
    the newest. Raises ValueError for text that is no version, and for versions older than the bundle.
    """
    match = _VERSION.match(kube_version.strip())
    if not match:
        raise ValueError(f"{kube_version!r} is not a Kubernetes version (expected e.g. 1.31)")
    wanted = (int(match[1]), int(match[2]))
    fitting = [version for version in _strict_dirs() if version <= wanted]
    if not fitting:
        oldest = bundled_kube_versions()[0]
        raise ValueError(f"Kubernetes {kube_version} is older than any version kubernetes-validate bundles "
                         f"schemas for (the oldest is {oldest})")
    major, minor = fitting[-1]
    return f"{major}.{minor}"


@cache
def _bundled_json(directory: str, filename: str) -> dict[str, Any] | None:
    """One bundled schema file, read once per process; None when the bundle has no such file. Looked up in the
    folder's listing: a document's kind makes the name, and one past the file system's limit is no file either."""
    if filename not in _builtin_names(directory):
        return None
    return json.loads(_bundle_files().joinpath(directory, filename).read_text(encoding="utf-8"))


@cache
def _definitions(directory: str, crd_view: bool = False) -> dict[str, Any]:
    """`_definitions.json` of one bundled version, which every built-in schema (and mpigen's own) `$ref`s.

    `crd_view` is what custom resources see: a core type embedded in a CRD (an MPIJob's pod
    template) has its quantities as int-or-string with the quantity pattern, and the API server
    checks them; kubernetes-validate's definitions take any number or string.
    """
    definitions = _bundled_json(directory, "_definitions.json")
    if definitions is None:
        raise FileNotFoundError(f"kubernetes-validate has no {directory}/_definitions.json")
    if crd_view:
        definitions = {**definitions, "$defs": {**definitions["$defs"], _QUANTITY_DEF: CRD_QUANTITY}}
    return definitions


@cache
def _registry(directory: str, crd_view: bool = False) -> Registry:
    """The definitions as jsonschema reads them."""
    from referencing import Registry, Resource

    return Resource.from_contents(_definitions(directory, crd_view)) @ Registry()


@cache
def _compiled_definitions(directory: str, crd_view: bool = False) -> Definitions | None:
    """The definitions as jsonschema-rs reads them."""
    return compiled_definitions(_definitions(directory, crd_view))


def _builtin_filename(api_version: str, kind: str) -> str:
    """kubernetes-validate's file name: group prefix before the first dot, `-` for `/`; `pod-v1.json`."""
    return kind.lower() + "-" + _GROUP_PREFIX.sub(r"\1-", api_version) + ".json"


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _serves(schema: Mapping[str, Any], api_version: str, kind: str) -> bool:
    """Whether a bundled schema is really for this group, version and kind.

    kubernetes-validate only keeps the group's first label in its file names, so
    `apps.example.com/v1` would otherwise be judged by the schema of `apps/v1`.
    """
    group, version = _group_version(api_version)
    return any(gvk.get("group", "") == group and gvk.get("version") == version and gvk.get("kind") == kind
               for gvk in schema.get("x-kubernetes-group-version-kind") or [])


@cache
def _builtin_names(directory: str) -> tuple[str, ...]:
    return tuple(sorted(entry.name for entry in _bundle_files().joinpath(directory).iterdir()))


def _same_group_elsewhere(directory: str, api_version: str, kind: str) -> list[str]:
    """`apiVersion kind` of built-ins in the same API group as `api_version` whose kind matches up to case."""
    group, _ = _group_version(api_version)
    prefix = f"{kind.lower()}-"
    served: list[str] = []
    for name in _builtin_names(directory):
        if not name.startswith(prefix):
            continue
        schema = _bundled_json(directory, name) or {}
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            if gvk.get("group", "") == group and str(gvk.get("kind", "")).lower() == kind.lower():
                served.append(f"{'/'.join(filter(None, (group, gvk.get('version'))))} {gvk.get('kind')}")
    return sorted(set(served))


# --- mpigen's own CRD schemas ----------------------------------------------------------------------

def own_schema_dir() -> Path:
    """`schemas/crds/` in a source tree, `generator/schemas/crds/` in an installed wheel."""
    return schema_dir() / "crds"


@cache
def own_schemas() -> dict[SchemaKey, dict[str, Any]]:
    """mpigen's hand-written schemas of the custom resources it emits, by (apiVersion, kind)."""
    schemas: dict[SchemaKey, dict[str, Any]] = {}
    for path in sorted(own_schema_dir().glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        for gvk in schema["x-kubernetes-group-version-kind"]:
            api_version = "/".join(filter(None, (gvk["group"], gvk["version"])))
            schemas[(api_version, gvk["kind"])] = schema
    return schemas


def _schema_problem(schema: dict[str, Any]) -> str | None:
    """Why no Draft 2020-12 validator can use `schema`; None when one can. Judging a CRD's schema against the
    meta-schema costs more than checking every document of a chart by it, and a check builds one schema set per
    Kubernetes version from the same CRDs, whose versions often share one schema: each distinct schema is judged
    once per process."""
    return _schema_text_problem(json.dumps(schema, sort_keys=True))


@lru_cache(maxsize=4096)
def _schema_text_problem(text: str) -> str | None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(json.loads(text))
    except SchemaError as error:
        return str(error.message)
    return None


# --- the schema set --------------------------------------------------------------------------------

class SchemaSet:
    """Every schema one `mpigen check` run judges documents of one Kubernetes version by.

    `compiled_count` counts the validators this set has compiled: one per (apiVersion, kind), however
    many documents are checked.
    """

    def __init__(self, kube_version: str, strict: bool = False) -> None:
        self.kube_version = kube_version
        self.bundled_version = select_kube_version(kube_version)
        self.strict = strict
        self.compiled_count = 0
        major, minor = (int(part) for part in self.bundled_version.split("."))
        self._directory = _strict_dirs()[(major, minor)]
        self._custom: dict[SchemaKey, dict[str, Any]] = dict(own_schemas())
        self._validators: dict[SchemaKey, Judge | None] = {}

    def add_crds(self, paths: list[Path]) -> list[str]:
        """Add the schemas of every CRD in these YAML files and folders (searched recursively).

        They override mpigen's own schema of the same apiVersion and kind. Other documents in those
        files are skipped (a folder may also hold cluster state such as NADs). Returns the problems,
        each as `<path>: <what went wrong>`; the files that could be read still count.
        """
        problems: list[str] = []
        for root in map(Path, paths):
            if root.is_dir():
                found, refused = manifest_files(root)
                files = [p for p in found if p.suffix in CRD_SUFFIXES]
                problems += [f"{p.source}: {p.message}" for p in refused]
            elif root.is_file():
                files = [root]
            else:
                problems.append(f"{root}: no such file or folder")
                continue
            for file in files:
                try:
                    documents = kubeyaml.load_all(read_text(file))
                except InputError as error:
                    problems.append(f"{file}: {error}")
                    continue
                except KubeYAMLError as error:
                    problems.append(f"{file}: line {error.line}: {error.message}")
                    continue
                except YAMLError as error:
                    problems.append(f"{file}: not valid YAML: {' '.join(str(error).split())}")
                    continue
                problems += self.add_crd_objects([(str(file), doc) for doc in documents])
        return problems

    def add_crd_objects(self, documents: list[tuple[str, Any]]) -> list[str]:
        """Add CRDs given as (where, object), e.g. the CRDs a chart renders; one bad CRD costs only itself."""
        problems: list[str] = []
        for where, doc in documents:
            if not isinstance(doc, dict) or doc.get("kind") != CRD_KIND:
                continue
            name = (doc.get("metadata") or {}).get("name", "?") if isinstance(doc.get("metadata"), dict) else "?"
            try:
                schemas = crd_schemas(doc)
                unusable = next(filter(None, map(_schema_problem, schemas.values())), None)
            except (KeyError, TypeError, AttributeError, ValueError) as error:
                problems.append(f"{where}: CRD {name} is not a usable CustomResourceDefinition: {error!r}")
                continue
            if unusable is not None:
                problems.append(f"{where}: CRD {name} has a schema no validator can use: {unusable}")
                continue
            for key, schema in schemas.items():
                self._custom[key] = schema
                self._validators.pop(key, None)
        return problems

    @property
    def custom_schemas(self) -> Mapping[SchemaKey, Mapping[str, Any]]:
        """The schemas of custom resources (mpigen's own, then the CRDs added), by (apiVersion, kind): the CRD rules
        (check/cel) are judged from them too."""
        return self._custom

    def prepare(self, documents: Iterable[RenderedObject]) -> None:
        """Compile the validators of these documents' kinds now (before the documents are shared between the
        cores: each is then compiled once)."""
        for document in documents:
            obj = document.obj
            if isinstance(obj, dict) and isinstance(obj.get("apiVersion"), str) and isinstance(obj.get("kind"), str):
                self._validator((obj["apiVersion"], obj["kind"]))

    def has_schema(self, api_version: str, kind: str) -> bool:
        """Whether documents of this apiVersion and kind are checked against a schema."""
        return self._validator((api_version, kind)) is not None

    def _validator(self, key: SchemaKey) -> Judge | None:
        """The validators of one kind, or None when no schema is known."""
        if key in self._validators:
            return self._validators[key]
        schema = self._custom.get(key)
        custom = schema is not None
        if schema is None:
            builtin = _bundled_json(self._directory, _builtin_filename(*key))
            schema = builtin if builtin is not None and _serves(builtin, *key) else None
        judge = None
        if schema is not None:
            # A custom resource's schema is a mapping, never `true` or `false`: its null fields are pruned.
            judge = Judge(schema, custom and isinstance(schema, Mapping),
                          compile_check_schema(schema, _compiled_definitions(self._directory, crd_view=custom)),
                          partial(_registry, self._directory, custom))
            self.compiled_count += 1
        self._validators[key] = judge
        return judge

    def check(self, document: RenderedObject, own: bool = False) -> list[Finding]:
        """Every schema problem of one document, sorted by path; [] when it is valid. A field its schema does not
        declare (rule `pruned`) is an error in mpigen's `own` output and under --strict, else a warning: the API
        server drops it (or refuses the object, under strict field validation)."""
        obj = document.obj
        if not isinstance(obj, dict):
            return [finding(document, "", f"{short(obj)} is not a Kubernetes object (a mapping)", RULE)]
        missing = [field for field in ("apiVersion", "kind") if not isinstance(obj.get(field), str) or not obj[field]]
        if missing:
            return [finding(document, "", f"{field!r} is a required property (a non-empty string)", RULE)
                    for field in missing]
        api_version, kind = obj["apiVersion"], obj["kind"]
        judge = self._validator((api_version, kind))
        if judge is None:
            return [self._unknown(document, api_version, kind)]
        valid, instance = judge.compiled_verdict(obj)
        pruned = Severity.ERROR if own or self.strict else Severity.WARNING
        return [] if valid else judge.findings(document, instance, pruned)

    def verdicts(self, document: RenderedObject) -> tuple[bool | None, bool] | None:
        """Whether a document of a known kind is valid, to the compiled validator (None where it is not asked) and to
        LinearValidator; None for a document of no known kind. The two must agree
        (tests/unit/check/test_check_compiled_schemas.py)."""
        obj = document.obj
        judge = self._validator((obj["apiVersion"], obj["kind"])) if isinstance(obj, dict) and \
            all(isinstance(obj.get(field), str) and obj[field] for field in ("apiVersion", "kind")) else None
        if judge is None:
            return None
        valid, instance = judge.compiled_verdict(obj)
        return valid, not judge.findings(document, instance)

    def _unknown(self, document: RenderedObject, api_version: str, kind: str) -> Finding:
        served = _same_group_elsewhere(self._directory, api_version, kind)
        if served:  # a removed version (batch/v1beta1 CronJob) or a misspelt kind of a built-in group
            return finding(document, "", f"Kubernetes {self.bundled_version} serves no {api_version} {kind}; "
                           f"it serves {', '.join(served)}", RULE)
        severity = Severity.ERROR if self.strict else Severity.WARNING
        return finding(document, "", f"no schema known for {api_version} {kind}: not a built-in kind of Kubernetes "
                       f"{self.bundled_version}, and no CRD for it was given; add its CRD with --crds DIR", RULE, severity)
