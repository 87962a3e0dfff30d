"""A hand-written launcher command taken apart: mpirun, the flags mpigen writes itself or a profile field holds, the
flags kept as they are, and the program every rank runs.

mpirun reads its flags up to the first word that is neither a flag nor a flag's value: that word starts the program.
So the flags that take a value must be known; a flag not known here is taken to stand alone (kept in `mpirunArgs`),
and the split is then said in a note, for a person to check.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from mpigen.validate.topology import MCA_FLAGS

LAUNCHERS = frozenset({"mpirun", "mpiexec", "mpiexec.hydra", "orterun", "prterun"})
"""The names of the MPI launchers of OpenMPI, Intel MPI and MPICH (Hydra): a command whose first word is one of these
(by its file name) is an mpirun line."""

RANK_COUNT = frozenset({"-np", "--np", "-n", "--n", "-c"})
ALLOW_ROOT = frozenset({"--allow-run-as-root", "-allow-run-as-root"})
HOSTS = frozenset({"-H", "--host", "-host", "-hosts", "--hostfile", "-hostfile", "--machinefile", "-machinefile",
                   "-f", "--default-hostfile", "-default-hostfile", "--rankfile", "-rf", "-npernode", "--npernode",
                   "-N", "-npersocket", "--npersocket", "-hostlist"})
"""Where the ranks run: mpigen's hostfile (and, for OpenMPI, its rankfile) says it for every run; kept beside
mpigen's `--rankfile`, a rankfile or ranks-per-node flag of the MPIJob makes OpenMPI refuse the conflicting
mapping policies; Hydra takes one `-f`, `-hosts` or `-hostlist` ('duplicate host file or host list setting')."""
BIND_TO = frozenset({"--bind-to", "-bind-to"})
MAP_BY = frozenset({"--map-by", "-map-by"})
EXPORT = frozenset({"-x"})
MCA = frozenset(MCA_FLAGS)
HYDRA_ENV = frozenset({"-genv", "-env"})
"""Intel MPI and MPICH: `-genv NAME VALUE` or `-genv NAME=VALUE`, a variable for every rank."""
ENV_POLICY = frozenset({"-genvlist", "-genvall", "-genvnone"})
"""Which of the launcher's variables Hydra passes on: mpigen's line says it (`-genv`, and `-genvlist` for a Secret's
or the run's name), and Hydra takes one of these once ('duplicate environment setting')."""
WITH_VALUE = RANK_COUNT | HOSTS | BIND_TO | MAP_BY | EXPORT | frozenset({
    "--rank-by", "-rank-by", "--prefix", "-wdir", "--wdir", "-wd", "--cpus-per-proc", "-cpus-per-proc",
    "--cpus-per-rank", "-cpus-per-rank", "--output-filename", "-output-filename", "--tune", "--am", "--launch-agent",
    "--timeout",
    "-ppn", "-perhost", "-genvlist", "-iface", "-bootstrap", "-bootstrap-exec", "--report-bindings-file",
    "--mca-param-file", "--personality", "--path", "-path", "--preload-files", "-s", "--preload-binary",
    "-launcher", "-launcher-exec", "-envlist", "-outfile-pattern", "-errfile-pattern", "-rmk", "-demux", "-configfile",
    "-gwdir", "-gpath", "-umask",
})
"""Flags whose value is the next word (`-mca` and `-genv` take two)."""
STANDALONE = ALLOW_ROOT | frozenset({
    "--oversubscribe", "-oversubscribe", "--nooversubscribe", "-v", "--verbose", "-q", "--quiet", "--tag-output",
    "-tag-output", "--timestamp-output", "-timestamp-output", "--display-map", "-display-map", "--report-bindings",
    "-report-bindings", "--noprefix", "--use-hwthread-cpus", "-use-hwthread-cpus", "-l", "-prepend-rank",
    "--merge-stderr-to-stdout", "-print-rank-map", "-print-all-exitcodes", "--display-allocation", "--nolocal",
    "-nolocal", "--no-oversubscribe", "-disable-x", "--debug-daemons", "-d", "--debug", "-genvall", "-genvnone",
    "-envall", "-envnone", "-rr",
})
"""Flags known to stand alone."""


@dataclass(frozen=True)
class Export:
    """`-x NAME` (the launcher's variable, passed on) or `-x NAME=VALUE` (`-genv NAME VALUE` for Hydra)."""

    name: str
    value: str | None
    flag: str


@dataclass(frozen=True)
class Mca:
    """`-mca KEY VALUE`: an OpenMPI MCA parameter, which OMPI_MCA_KEY in the environment sets as well."""

    key: str
    value: str


@dataclass(frozen=True)
class MpirunLine:
    """An mpirun command, taken apart. `launcher` is None where the command does not start with an MPI launcher."""

    launcher: str | None
    rank_count: str | None = None
    rank_flag: str | None = None
    allow_root: bool = False
    hosts: tuple[str, ...] = ()
    """The flags (with their values) that said where the ranks run: mpigen's hostfile does."""
    env_policy: tuple[str, ...] = ()
    """Hydra's flags (with their values) that said which variables reach the ranks: mpigen's line does."""
    bind_to: str | None = None
    bind_flag: str = "--bind-to"
    map_by: str | None = None
    map_flag: str = "--map-by"
    """The flags as written (`-bind-to` for Hydra), for a value kept in mpirunArgs."""
    exports: tuple[Export, ...] = ()
    mca: tuple[Mca, ...] = ()
    kept: tuple[str, ...] = ()
    """Flags the profile has no field for, as written: `mpirunArgs`."""
    unknown: tuple[str, ...] = ()
    """Flags not known to take a value or not: taken to stand alone."""
    program: tuple[str, ...] = field(default=())


def is_mpirun(command: list[str]) -> bool:
    return bool(command) and posixpath.basename(command[0]) in LAUNCHERS


def split_mpirun(command: list[str]) -> MpirunLine:
    """`command` taken apart; a command that does not start with an MPI launcher is all program."""
    if not is_mpirun(command):
        return MpirunLine(launcher=None, program=tuple(command))
    line: dict[str, object] = {}
    hosts: list[str] = []
    env_policy: list[str] = []
    exports: list[Export] = []
    mca: list[Mca] = []
    kept: list[str] = []
    unknown: list[str] = []
    at = 1
    while at < len(command):
        word = command[at]
        flag, equals, inline = word.partition("=")
        if not word.startswith("-") or word in ("-", "--"):
            if word == "--":
                at += 1
            break
        if word in HYDRA_ENV and at + 1 < len(command) and "=" in command[at + 1]:  # -genv NAME=VALUE: one word
            name, _, given = command[at + 1].partition("=")
            exports.append(Export(name, given, word))
            at += 2
            continue
        if flag in MCA or word in HYDRA_ENV:
            if at + 2 >= len(command):  # a flag without its two words: nothing of a program follows
                kept += command[at:]
                at = len(command)
                break
            first, second = command[at + 1], command[at + 2]
            if flag in MCA:
                mca.append(Mca(first, second))
            else:
                exports.append(Export(first, second, word))
            at += 3
            continue
        takes_value = flag in WITH_VALUE and not equals
        value = command[at + 1] if takes_value and at + 1 < len(command) else (inline if equals else None)
        if flag in RANK_COUNT:
            line["rank_count"], line["rank_flag"] = value, flag
        elif flag in ALLOW_ROOT:
            line["allow_root"] = True
        elif flag in HOSTS:
            hosts += command[at:at + 2] if takes_value else [word]
        elif flag in ENV_POLICY:
            env_policy += command[at:at + 2] if takes_value else [word]
        elif flag in BIND_TO:
            line["bind_to"], line["bind_flag"] = value, flag
        elif flag in MAP_BY:
            line["map_by"], line["map_flag"] = value, flag
        elif flag in EXPORT and value is not None:
            name, has_value, given = value.partition("=")
            exports.append(Export(name, given if has_value else None, flag))
        else:
            kept += command[at:at + 2] if takes_value else [word]
            if flag not in WITH_VALUE and flag not in STANDALONE and not equals:
                unknown.append(word)
        at += 2 if takes_value else 1
    return MpirunLine(
        launcher=command[0], rank_count=_text(line.get("rank_count")), rank_flag=_text(line.get("rank_flag")),
        allow_root=bool(line.get("allow_root")), hosts=tuple(hosts), env_policy=tuple(env_policy),
        bind_to=_text(line.get("bind_to")), bind_flag=_text(line.get("bind_flag")) or "--bind-to",
        map_by=_text(line.get("map_by")), map_flag=_text(line.get("map_flag")) or "--map-by", exports=tuple(exports),
        mca=tuple(mca), kept=tuple(kept), unknown=tuple(unknown), program=tuple(command[at:]))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
