"""The repository config, `.mpigen.yaml`: what a team sets once per repository (where the profiles and the charts
are, which Helm, the reports' format and strictness), so that `mpigen render` and the other commands need no
paths. Inside a git work tree it is found from the current folder upward to the work tree's root; outside one, only
in the current folder (as git reads no repository above a folder it does not own). A found config is used only if
the current user owns it and no one else can replace it (config_refusal). `--config PATH` / MPIGEN_CONFIG name one
instead; a path in it is relative to its own folder. It is read as a profile is, and judged by
schemas/config.schema.json with the same file:line:col messages. An option on the command line always wins."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mpigen.support.diagnostics import Diagnostic, Location, one_line, sort_diagnostics
from mpigen.support.project import page_url
from mpigen.support.schema_files import CONFIG_SCHEMA_FILE
from mpigen.vocabulary.repository import CONFIG_ENV, CONFIG_FILE, DEFAULT_CHARTS, DEFAULT_PROFILES

MAX_CONFIG_BYTES = 64 * 1024
"""A config is a few lines; a bigger file is not one (and is refused before it is parsed)."""
_CONFIG_HINT = (f"a {CONFIG_FILE} is one mapping of its settings (`profiles:`, `charts:`, `helm:`, `check:` ...): "
                f"{page_url('docs/output.md', 'The repository config: .mpigen.yaml')}")


class ConfigError(Exception):
    """The config file cannot be used: each diagnostic says where and how to fix it (exit 1)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.format() for d in diagnostics))
        self.diagnostics = diagnostics


class NoCurrentFolder(Exception):
    """The current folder cannot be read (removed since the shell entered it): no config can be looked for."""


@dataclass(frozen=True)
class RepositoryConfig:
    """The settings of one config file, its paths joined to its folder; every field None where it says nothing."""

    file: Path | None = None
    """The file read (as found or given); None where there is none."""
    profiles: tuple[Path, ...] | None = None
    charts: Path | None = None
    helm: str | None = None
    settings: tuple[tuple[str, str, Any], ...] = ()
    """(command, option, value) of the per-command sections (`check: {strict: true}`)."""
    profiles_at: tuple[Location, ...] = ()
    """Where each of `profiles` is written, for a path there that does not exist."""
    helm_at: Location | None = None
    """Where `helm` is written, for a Helm there that cannot be used."""
    notes: tuple[str, ...] = ()
    """Why a config that was found is not used (printed as warnings by the command)."""

    @property
    def folder(self) -> Path:
        """What paths of the config, and the defaults `profiles` and `charts`, are relative to."""
        return self.file.parent if self.file is not None else Path()

    def setting(self, command: str, option: str) -> Any:
        """The value the config gives the option of a command, or None."""
        return next((value for c, o, value in self.settings if (c, o) == (command, option)), None)


@dataclass(frozen=True)
class FoundConfig:
    """What the search found: the config to read (None: none), and why one found was not used."""

    file: Path | None
    refused: str | None = None


def _shown(path: Path) -> Path:
    """A found path as the user would write it from here: relative where it lies below or beside the current
    folder's ancestors (`../.mpigen.yaml`), absolute otherwise."""
    relative = os.path.relpath(path)
    return Path(relative) if not relative.startswith("../../../..") else path


def find_config(start: Path | None = None) -> FoundConfig:
    """The `.mpigen.yaml` of the folder `start` (the current one) or, inside a git work tree, of its nearest parent
    that has one up to the work tree's root; outside a work tree the current folder's only. One that someone else
    could have put there (config_refusal) is not used: `refused` says why."""
    from mpigen.support.worktree import git_top

    try:
        here = (start or Path.cwd()).resolve()
    except OSError as exc:
        raise NoCurrentFolder(f"the current folder cannot be read ({exc.strerror or exc}): it was removed or "
                              "moved since the shell entered it; cd into a folder that exists") from None
    top = git_top(here)
    for folder in (here, *here.parents) if top is not None else (here,):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            why = config_refusal(candidate)
            if why is not None:
                return FoundConfig(None, f"{one_line(str(candidate))} is not read: {why}; it sets nothing here "
                                   f"(name a config of your own with --config or {CONFIG_ENV})")
            return FoundConfig(_shown(candidate))
        if folder == top:
            break
    return FoundConfig(None)


def config_refusal(file: Path) -> str | None:
    """Why a config that was found may have been put there by someone else, or None where it is the user's: it (and
    a link's target) is owned by another user, or it is writable by others (or a group that is not the user's own),
    or its folder is, without the sticky bit (anyone there could replace it). Git's `safe.directory` ownership check is the
    model: a config names a program `check` runs. Not judged where the system has no owners (Windows)."""
    if not hasattr(os, "geteuid"):
        return None
    user = os.geteuid()
    try:
        entry, target, folder = os.lstat(file), file.stat(), file.parent.stat()
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if user not in (entry.st_uid, target.st_uid) or entry.st_uid != target.st_uid:
        return f"it is owned by another user (uid {target.st_uid if target.st_uid != user else entry.st_uid})"
    if target.st_mode & stat.S_IWOTH:
        return "it is writable by every user, who could change it"
    if target.st_mode & stat.S_IWGRP and not _own_group(target.st_gid):
        return "it is writable by a group of other users, who could change it"
    sticky = folder.st_mode & stat.S_ISVTX
    if folder.st_mode & stat.S_IWOTH and not sticky:
        return "its folder is writable by every user, who could replace it"
    if folder.st_mode & stat.S_IWGRP and not sticky and not _own_group(folder.st_gid):
        return "its folder is writable by a group of other users, who could replace it"
    return None


def _own_group(gid: int) -> bool:
    """Whether `gid` is the user's private group (named as the user, and their primary group): no one else is in it."""
    try:
        import grp
        import pwd

        user = pwd.getpwuid(os.geteuid())
        return gid == user.pw_gid and grp.getgrgid(gid).gr_name == user.pw_name
    except (ImportError, KeyError):
        return False


def read_config(file: Path) -> RepositoryConfig:
    """The settings of the config file `file`; ConfigError with every problem (file:line:col) where it has any."""
    from mpigen.load import load_file, to_plain  # the YAML parser: only where there is a config to read
    from mpigen.validate.schema import check_schema

    if not file.is_file():
        what = "does not exist" if not file.exists() else "is not a file"
        raise ConfigError([Diagnostic(Location(str(file)), f"the config file {what}",
                                      f"give the path of a {CONFIG_FILE} (--config or {CONFIG_ENV}), or leave both out")])
    size = _size(file)
    if size > MAX_CONFIG_BYTES:
        raise ConfigError([Diagnostic(Location(str(file)), f"the config file is {size} bytes, more than the "
                                      f"{MAX_CONFIG_BYTES} a config may have", _CONFIG_HINT)])
    if _says_nothing(file):
        return RepositoryConfig(file=file)  # an empty config marks the repository's root, and sets nothing
    document, problems = load_file(file, str(file), str(file))
    if document is None:
        raise ConfigError([_of_the_config(d, loading=True) for d in problems])
    problems, _ = check_schema(document, CONFIG_SCHEMA_FILE)
    if problems:
        raise ConfigError(sort_diagnostics(_of_the_config(d, loading=False) for d in problems))
    data = to_plain(document.data)
    folder = file.parent
    profiles = data.get("profiles")
    if isinstance(profiles, str):
        profiles = [profiles]
    helm = data.get("helm")
    if helm is not None and "/" in helm:
        helm = os.path.abspath(folder / helm)  # never a bare name: Helm is run by this path, not looked up on PATH
    settings = tuple((command, option, value) for command, section in data.items() if isinstance(section, dict)
                     for option, value in section.items())
    return RepositoryConfig(file=file, profiles=tuple(folder / path for path in profiles) if profiles else None,
                            charts=folder / data["charts"] if "charts" in data else None, helm=helm, settings=settings,
                            profiles_at=tuple(document.location("profiles", *([] if isinstance(data["profiles"], str)
                                                                               else [index]))
                                              for index in range(len(profiles or ()))),
                            helm_at=document.location("helm") if helm is not None else None)


def _of_the_config(diagnostic: Diagnostic, loading: bool) -> Diagnostic:
    """A problem the profile loader (`loading`) or schema check words for a profile, worded for the config: its
    root is "the config", the loader's advice for a profile (`apiVersion`, one profile per file) becomes the
    config's, and a schema description given as the fix reads on after the `;`."""
    message = diagnostic.message.replace(" in the profile", " of the config").replace("a profile", "the config")
    hint = diagnostic.hint
    if loading and ("profile" in hint or "apiVersion" in hint):
        hint = _CONFIG_HINT
    elif hint[:1].isupper() and hint[1:2].islower():
        hint = hint[0].lower() + hint[1:].removesuffix(".")
    return replace(diagnostic, message=message, hint=hint)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0  # the loader says why it cannot be read


def _says_nothing(file: Path) -> bool:
    try:
        with file.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False  # the loader says why it cannot be read
    lines = head.decode("utf-8", errors="replace").splitlines()
    return len(head) < 4096 and all(not line.strip() or line.lstrip().startswith("#") for line in lines)


def load_config(named: Path | None) -> RepositoryConfig:
    """The config named by `--config` / MPIGEN_CONFIG (`named`), else the one found from here, else none (with
    the note of one found and not used). NoCurrentFolder where there is nothing to look from."""
    if named is not None:
        return read_config(named)
    found = find_config()
    if found.file is None:
        return RepositoryConfig(notes=(found.refused,) if found.refused else ())
    return read_config(found.file)


def describe(config: RepositoryConfig) -> str:
    """Where the defaults come from, for the messages that name them."""
    return one_line(str(config.file)) if config.file is not None else f"no {CONFIG_FILE} here or above"


class NoDefault(Exception):
    """Nothing was given and there is no default to take: the message says what to give (a usage error)."""


def default_profiles(config: RepositoryConfig, command: str) -> tuple[Path, ...]:
    """The profiles a command reads when given none: the config's (ConfigError, at its line, for one that does not
    exist), else the `profiles` folder beside it (or here)."""
    if config.profiles is not None:
        missing = [(path, at) for path, at in zip(config.profiles, config.profiles_at, strict=False) if not path.exists()]
        if missing:
            raise ConfigError([Diagnostic(at, f"`profiles` names {one_line(str(path))}, which does not exist",
                                          "write the profiles folder relative to this file's folder")
                               for path, at in missing])
        return config.profiles
    folder = config.folder / DEFAULT_PROFILES
    if folder.is_dir():
        return (folder,)
    where = (f"{one_line(str(config.file))} names none (`profiles:`) and there is no folder {one_line(str(folder))}"
             if config.file is not None else
             f"there is no `{DEFAULT_PROFILES}` folder here, and no {CONFIG_FILE} here or above to name one")
    raise NoDefault(f"no profiles given: {where}; give the profiles folder (e.g. `mpigen {command} fleet/profiles`), "
                    f"or name it in {CONFIG_FILE} (`profiles: fleet/profiles`; `mpigen init` writes one)")


def default_charts(config: RepositoryConfig, profiles: tuple[Path, ...]) -> Path:
    """The charts folder when none is given: the config's; else the `gitops.path` the clusters of `profiles` agree
    on (from the root of the git work tree, else the config's folder); else (no cluster has GitOps) `charts` beside
    the config (or here). Clusters whose paths differ leave no folder to guess: NoDefault names them."""
    if config.charts is not None:
        return config.charts
    from mpigen.load.glance import glance
    from mpigen.support.worktree import git_top

    clusters = [c for c in glance(profiles, frozenset({"Cluster"})).clusters if c.gitops_path is not None]
    agreed = {c.gitops_path for c in clusters if c.gitops_path is not None}
    if len(agreed) > 1:
        named = ", ".join(f"{one_line(c.name)} ({one_line(str(c.gitops_path))})" for c in clusters)
        raise NoDefault(f"no charts folder given, and the clusters' gitops.path differ: {named}; give the charts "
                        f"folder with -o (--charts for plan and explain), or set `charts:` in {CONFIG_FILE}")
    if len(agreed) == 1:
        top = git_top(config.folder)
        return _shown((top or config.folder.resolve()) / next(iter(agreed)))
    return config.folder / DEFAULT_CHARTS
