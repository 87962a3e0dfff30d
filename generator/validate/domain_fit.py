"""A Kueue job's topology level against the size of its domains: workers that no single domain of a `required`
level can hold stay Pending for ever ("topology ... doesn't allow to fit"); a `preferred` level is split; a job cut
into slices (`sliceLevel`, or the hardware's NVLink domain) must be a whole number of them. The numbers are
model/domains.py's, which resolve writes and plan shows."""

from __future__ import annotations

from typing import Any

from mpigen.load import ProfileFile
from mpigen.model import admission, derive, domains
from mpigen.support.diagnostics import NEVER_FITS, Diagnostic, Severity, did_you_mean
from mpigen.vocabulary import kueue_releases
from mpigen.vocabulary import scheduling as vocabulary


def _sizes(cluster: dict[str, Any], hardware: dict[str, Any]) -> tuple[domains.DomainSize, ...]:
    return domains.pool_domain_sizes(domains.topology_levels(cluster["scheduling"]["topology"]), hardware)


def _said(cluster: dict[str, Any], size: domains.DomainSize) -> str:
    return f"cluster '{cluster['name']}': {size.said()}" if size.origin == domains.PROFILE else size.said()


def _release(cluster: dict[str, Any]) -> kueue_releases.KueueRelease:
    return kueue_releases.named(cluster.get("scheduling", {}).get("kueueVersion"))


def _slices_served(cluster: dict[str, Any]) -> bool:
    return _release(cluster).serves(kueue_releases.PODSET_SLICES_MINOR)


def check_slice_level(document: ProfileFile, cluster: dict[str, Any], topology: dict[str, Any],
                      hardware: dict[str, Any]) -> list[Diagnostic]:
    """`sliceLevel` names a level of the cluster below the job's level, whose domain size is known, on a Kueue
    release that reads the slice annotations."""
    if "sliceLevel" not in topology:
        return []
    where = document.location("scheduling", "topology", "sliceLevel")
    if not _slices_served(cluster):
        since = kueue_releases.release_name(kueue_releases.PODSET_SLICES_MINOR)
        return [Diagnostic(where, f"podset slices need Kueue {since} or later, and cluster '{cluster['name']}' runs "
                           f"Kueue {_release(cluster).name} (its `scheduling.kueueVersion`), which ignores the slice "
                           "annotations", f"upgrade Kueue to {since} or later and say so in `kueueVersion`, or remove "
                           "`sliceLevel` (and fit the job in one domain of its level)")]
    sizes = {size.level: size for size in _sizes(cluster, hardware)}
    cut, level = sizes.get(topology["sliceLevel"]), sizes[topology["level"]]
    if cut is None:
        return [Diagnostic(where, f"cluster '{cluster['name']}' declares no topology level '{topology['sliceLevel']}'",
                           did_you_mean(topology["sliceLevel"], list(sizes)))]
    if cut.index <= level.index:
        lower = [size.level for size in sizes.values() if size.index > level.index]
        return [Diagnostic(where, f"slice level '{cut.level}' is not below the job's level '{level.level}': each slice "
                           "lies within one domain of the job's level, and Kueue refuses a slice level above it",
                           f"use one of {', '.join(repr(name) for name in lower)}, or a higher `level`" if lower
                           else "use a higher `level`, and this one as `sliceLevel`")]
    if cut.nodes is None:
        return [Diagnostic(where, f"cluster '{cluster['name']}' does not say how many nodes a '{cut.level}' domain "
                           "holds, so a slice's size is not known",
                           f"give its level '{cut.level}' `domainNodes`")]
    return []


def check_domain_fit(document: ProfileFile, cluster: dict[str, Any], topology: dict[str, Any],
                     hardware: dict[str, Any], shape: derive.Layout) -> list[Diagnostic]:
    """The job's workers against one domain of its level, and against its slices."""
    sizes = _sizes(cluster, hardware)
    kueue = admission.scheduler_of(cluster) == admission.KUEUE
    scheduler = "Kueue" if kueue else "KAI"
    served = kueue and _slices_served(cluster)
    fit = domains.job_fit(sizes, topology, shape.worker_count, shape.workers_per_node, slices_served=served)
    found = _check_slices(document, cluster, sizes, topology, fit) if served else []
    count, domain = fit.domains, fit.domain
    if count is None or count <= 1:
        return found
    where = document.location("scheduling", "topology", "level")
    needs = (f"the job's {fit.workers} workers need {fit.nodes_needed} nodes, but one '{domain.level}' domain "
             f"({domain.node_label}) holds {domain.nodes} ({_said(cluster, domain)})")
    if not fit.required:
        return [*found, Diagnostic(where, f"{needs}: {scheduler} will likely split the job across {count} "
                                   f"{domain.level}s", "fewer workers keep it in one"
                                   + ("; a `sliceLevel` keeps each part within one lower domain" if kueue else ""),
                                   severity=Severity.WARNING)]
    most = fit.most_workers or 0
    higher = [size.level for size in sizes if size.index < domain.index]
    fixes = [f"a higher level ({', '.join(repr(name) for name in higher)})" if higher else "",
             "`mode: preferred`", f"at most {most} worker(s)",
             f"a higher `level` with `sliceLevel: {domain.level}` (slices of {most} workers)"
             if kueue and higher and most > 1 and fit.workers % most == 0 else ""]
    fixes = [fix for fix in fixes if fix]
    return [*found, Diagnostic(where, f"{needs}: it never fits, so {scheduler} keeps the job Pending for ever",
                               f"use {', '.join(fixes[:-1])}, or {fixes[-1]}", code=NEVER_FITS)]


def _check_slices(document: ProfileFile, cluster: dict[str, Any], sizes: tuple[domains.DomainSize, ...],
                  topology: dict[str, Any], fit: domains.DomainFit) -> list[Diagnostic]:
    """Workers larger than one domain of the slice level, not a whole number of slices: the job's own `sliceLevel`
    is refused; slices derived from the NVLink domain are left out, with a warning."""
    cut, derived = domains.slice_domain(sizes, topology)
    if cut is None or cut.nodes is None or cut.index <= fit.domain.index or fit.slices is not None:
        return []
    size = cut.nodes * max(fit.workers_per_node, 1)
    if fit.workers <= size:
        return []
    nearest = " or ".join(str(n) for n in domains.nearest_multiples(fit.workers, size))
    what = (f"the job's {fit.workers} workers are not a whole number of slices of {size} (one '{cut.level}' domain, "
            f"{cut.node_label}, holds {cut.nodes} nodes: {_said(cluster, cut)})")
    if derived:
        return [Diagnostic(document.location("scheduling", "topology", "level"),
                           f"{what}, so they get no slice annotations and Kueue may place them across NVLink domains "
                           "at will", f"use {nearest} workers", severity=Severity.WARNING)]
    return [Diagnostic(document.location("scheduling", "topology", "sliceLevel"),
                       f"{what}; Kueue cuts the workers into equal slices ({vocabulary.SLICE_SIZE})",
                       f"use {nearest} workers, or another `sliceLevel`")]
