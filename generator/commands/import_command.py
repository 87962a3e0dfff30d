"""`mpigen import`: a cluster's exported objects -> Hardware and Cluster profiles, and hand-written MPIJobs -> job
profiles, in the profiles folder.

Only wiring: reading the files (readback), the import itself (adopt), writing each profile whole (write). Nothing is
written unless every file can be: an existing profile a person has changed since an import wrote it (its digest
line no longer matches), or that no import wrote, is refused by name unless --force; one an import wrote and nobody
changed is replaced by a new import."""

from __future__ import annotations

from pathlib import Path

import click

from mpigen.commands.reporting import exit_with_error
from mpigen.commands.verbosity import say, verbosity_options
from mpigen.support.diagnostics import one_line

_FOLDERS = {"Hardware": "hardware", "Cluster": "clusters", "Job": "jobs"}


def _selector(text: str) -> dict[str, str]:
    pairs = [part.split("=", 1) for part in text.split(",")]
    if not text or any(len(pair) != 2 or not pair[0] for pair in pairs):
        raise click.BadParameter(f"{text!r}: give LABEL=VALUE[,LABEL=VALUE...], as `kubectl get nodes -l` takes")
    return {key: value for key, value in pairs}


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--cluster", "cluster", default=None, help="Name of the Cluster profile to write from the nodes (a "
              "DNS-1035 label); for MPIJobs, the cluster they run on (default: a guess, marked).")
@click.option("--pool", "pool", default=None, help="For MPIJobs: the node pool their workers run on (default: a guess, "
              "marked).")
@click.option("-o", "--profiles", "profiles", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The profiles folder to write into: hardware/<pool>.yaml and clusters/<cluster>.yaml (default: "
              "the repository config's profiles, else the folder `profiles`).")
@click.option("--nodes", "nodes", multiple=True, metavar="LABEL=VALUE[,...]",
              help="Import only the nodes this selector picks (every label equal); repeat it for nodes any of them "
              "picks. Pools that need different network providers are imported apart this way.")
@click.option("--node-facts", "node_facts", multiple=True, metavar="NODE=FILE",
              help="The output of `ibdev2netdev`, `nvidia-smi topo -m` or `lspci -nn` on NODE, saved in FILE (repeat for "
              "each): NODE's pool gets the facts they hold (HCA names, GPUs and NUMA node beside each NIC, VF ids).")
@click.option("--force", is_flag=True, default=False, help="Replace profiles changed since an import wrote them (or "
              "that no import wrote): without it they are named and nothing is written.")
@verbosity_options
@click.pass_context
def import_(ctx: click.Context, files: tuple[Path, ...], cluster: str | None, pool: str | None, profiles: Path | None,
            nodes: tuple[str, ...], node_facts: tuple[str, ...], force: bool) -> None:
    """Write Hardware and Cluster profiles from FILES, objects exported with `kubectl get ... -o yaml` (or json),
    and a job profile for each MPIJob among them (`kubectl get mpijobs -A -o yaml`):

    \b
    kubectl get nodes,namespaces,configmaps,networkattachmentdefinitions,sriovnetworknodestates,\
sriovnetworknodepolicies,nicclusterpolicies,clusterpolicies -A -o yaml > cluster.yaml

    Every value's comment names the object and field it came from; a fact the files do not hold is marked
    `# guess:` with what to read instead. Review those, then `mpigen validate` and `mpigen render`. For each MPIJob
    it also says what mpigen will do differently."""
    from mpigen.adopt import Adoption, AdoptionError, adopt_jobs
    from mpigen.adopt.cluster import adopt_cluster, is_mpijob, read_export
    from mpigen.adopt.node_facts import read_node_facts
    from mpigen.adopt.profiles import edited_since_import
    from mpigen.readback.inputs import MAX_DOCUMENT_BYTES, InputError, read_text
    from mpigen.write import WriteError
    from mpigen.write.target import write_file

    selectors = [_selector(text) for text in nodes]
    folder = profiles if profiles is not None else _default_folder(ctx)
    texts: dict[str, list[tuple[str, str]]] = {}
    for given in node_facts:
        node, _, file = given.partition("=")
        if not node or not file:
            raise click.BadParameter(f"{given!r}: give NODE=FILE", param_hint="--node-facts")
        try:
            texts.setdefault(node, []).append((file, read_text(Path(file), MAX_DOCUMENT_BYTES)))
        except InputError as exc:
            exit_with_error(f"--node-facts {given}: {exc}")
    try:
        facts = read_node_facts(texts) if texts else {}
        documents = read_export(files)
        mpijobs = [document for document in documents if is_mpijob(document)]
        adoption = Adoption()
        if len(mpijobs) < len(documents) or not mpijobs:  # more than MPIJobs: the cluster's objects
            if cluster is None:
                raise click.UsageError("give --cluster NAME: the name of the Cluster profile to write from the nodes")
            adoption, _ = adopt_cluster(documents, cluster, selectors, facts)
        if mpijobs:
            jobs = adopt_jobs(mpijobs, cluster, pool, [folder] if folder.is_dir() else None)
            adoption = Adoption(adoption.profiles + jobs.profiles, adoption.notes + jobs.notes)
    except AdoptionError as exc:
        exit_with_error(str(exc))
        return
    wanted = {folder / _FOLDERS[p.kind] / f"{p.name}.yaml": p.text.encode("utf-8") for p in adoption.profiles}
    edited = sorted(str(path) for path, data in wanted.items() if path.is_file() and path.read_bytes() != data
                    and edited_since_import(path.read_text(encoding="utf-8", errors="replace")))
    if edited and not force:
        exit_with_error(f"{', '.join(edited)} changed since mpigen import wrote them (or it never did); nothing was "
                        "written: compare them with the export, then give --force to replace them")
    changed = {path: data for path, data in wanted.items() if not (path.is_file() and path.read_bytes() == data)}
    before = {path: path.read_bytes() if path.is_file() else None for path in changed}
    done: list[Path] = []
    try:
        for path, data in sorted(changed.items()):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_file(path, data, inputs=files)
            done.append(path)
    except (WriteError, OSError) as exc:
        _undo(done, before)
        exit_with_error(str(exc) if str(exc).endswith("nothing was written") else f"{exc}; nothing was written")
    for path in sorted(wanted):
        say(f"{'wrote' if path in changed else 'unchanged'} {one_line(str(path))}")
    for note in adoption.notes:
        say(f"note: {one_line(note)}", err=True)


def _default_folder(ctx: click.Context) -> Path:
    """The repository's profiles folder, else `profiles` here, made by the import where it does not exist yet: an
    import is how a repository starts."""
    from mpigen.commands.arguments import default_profiles_or_none
    from mpigen.vocabulary.repository import DEFAULT_PROFILES

    found = default_profiles_or_none(ctx, "import")
    return found[0] if found else Path(DEFAULT_PROFILES)


def _undo(done: list[Path], before: dict[Path, bytes | None]) -> None:
    """Put back what the files written so far held (or remove the new ones): an import is written whole or not at all."""
    from mpigen.write import WriteError
    from mpigen.write.target import write_file

    for path in reversed(done):
        old = before[path]
        try:
            if old is None:
                path.unlink()
            else:
                write_file(path, old)
        except (OSError, WriteError):
            continue
