"""The names a fleet's profiles declare, at a glance: for shell completion (job, cluster and pool names) and the
charts folder the clusters' `gitops.path` agree on. Each file is read within the profiles' size limit and parsed
with the C parser under check's limits (generator/readback/kubeyaml.py), nothing is validated and nothing is
reported: a file that cannot be read is skipped, and the command that compiles the profiles says why. A file the
C parser refuses is read as a profile is, so the glance sees what the compile will."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpigen.load.discover import discover
from mpigen.load.reading import identity_lines, read_file
from mpigen.model.defaults import GITOPS
from mpigen.readback.kubeyaml import load_all
from mpigen.support.yamllimits import MAX_NESTING


@dataclass(frozen=True)
class ClusterGlance:
    name: str
    pools: tuple[str, ...]
    gitops_path: str | None
    """Where its GitOps tool reads the charts in git (the default filled in); None for a cluster without one."""


@dataclass(frozen=True)
class JobGlance:
    name: str
    cluster: str
    pool: str


@dataclass(frozen=True)
class FleetGlance:
    clusters: tuple[ClusterGlance, ...] = ()
    jobs: tuple[JobGlance, ...] = ()

    @property
    def gitops_paths(self) -> frozenset[str]:
        """The distinct `gitops.path` of the clusters that have a GitOps tool."""
        return frozenset(c.gitops_path for c in self.clusters if c.gitops_path is not None)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _mapping(document: Any) -> dict[str, Any]:
    return document if isinstance(document, dict) else {}


def _read(raw: bytes, path: str) -> dict[str, Any]:
    """The file's mapping: by the C parser where it reads it, else as a profile is read (YAML 1.2, which takes what
    libyaml's 1.1 refuses, such as a URL in a flow mapping); {} where neither does."""
    try:
        documents = load_all(raw.decode("utf-8"), max_depth=MAX_NESTING)
    except Exception:  # any text libyaml refuses or a limit stops
        from mpigen.load.parse import load_bytes
        from mpigen.load.plain import to_plain

        document, _ = load_bytes(raw, path, path)
        return _mapping(to_plain(document.data)) if document is not None else {}
    return _mapping(documents[0]) if len(documents) == 1 else {}


def glance(paths: Iterable[Path], kinds: frozenset[str] = frozenset({"Cluster", "Job"})) -> FleetGlance:
    """The clusters and jobs (those of `kinds`) the profile files under `paths` name, in file order; never raises
    for their content. A file whose own `kind:` line names another kind is not parsed (the charts folder's default
    reads the clusters only: a fleet's thousand jobs cost it a read each, not a parse)."""
    files, _ = discover(paths)
    clusters: list[ClusterGlance] = []
    jobs: list[JobGlance] = []
    for file, _root in files:
        raw, _ = read_file(file, str(file))
        if raw is None:
            continue
        declared = identity_lines(raw.decode("utf-8", errors="replace")).get("kind")
        if declared is not None and declared not in kinds:
            continue
        data = _read(raw, str(file))
        name = _text(data.get("name"))
        if name is None:
            continue
        if data.get("kind") not in kinds:
            continue
        if data.get("kind") == "Cluster":
            pools = tuple(pool for entry in data.get("nodePools") or () if (pool := _text(_mapping(entry).get("name"))))
            gitops = data.get("gitops")
            path = (_text(gitops.get("path")) or GITOPS["path"]) if isinstance(gitops, dict) else None
            clusters.append(ClusterGlance(name, pools, path))
        elif data.get("kind") == "Job":
            jobs.append(JobGlance(name, _text(data.get("cluster")) or "", _text(data.get("pool")) or ""))
    return FleetGlance(tuple(clusters), tuple(jobs))
