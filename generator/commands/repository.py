"""The repository config, `.mpigen.yaml`: what a team sets once per repository (where the profiles and the charts
are, which Helm, check's and plan's report format and strictness), so that `mpigen render` and the other commands
need no paths. It is found from the current folder upward to the root of its git work tree (or of the file system),
or named by `--config PATH` / MPIGEN_CONFIG; a path in it is relative to its own folder. It is read as a profile
is, and judged by schemas/config.schema.json with the same file:line:col messages. An option on the command line
always wins over it."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mpigen.support.diagnostics import Diagnostic, Location, one_line, sort_diagnostics
from mpigen.support.schema_files import CONFIG_SCHEMA_FILE

CONFIG_FILE = ".mpigen.yaml"
CONFIG_ENV = "MPIGEN_CONFIG"
DEFAULT_PROFILES = "profiles"
DEFAULT_CHARTS = "charts"


class ConfigError(Exception):
    """The config file cannot be used: each diagnostic says where and how to fix it (exit 1)."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__("; ".join(d.format() for d in diagnostics))
        self.diagnostics = diagnostics


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

    @property
    def folder(self) -> Path:
        """What paths of the config, and the defaults `profiles` and `charts`, are relative to."""
        return self.file.parent if self.file is not None else Path()

    def setting(self, command: str, option: str) -> Any:
        """The value the config gives the option of a command, or None."""
        return next((value for c, o, value in self.settings if (c, o) == (command, option)), None)


def _shown(path: Path) -> Path:
    """A found path as the user would write it from here: relative where it lies below or beside the current
    folder's ancestors (`../.mpigen.yaml`), absolute otherwise."""
    relative = os.path.relpath(path)
    return Path(relative) if not relative.startswith("../../../..") else path


def find_config(start: Path | None = None) -> Path | None:
    """The `.mpigen.yaml` of the folder `start` (the current one) or of its nearest parent that has one, looking no
    higher than the root of the git work tree it lies in."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return _shown(candidate)
        if (folder / ".git").exists():
            return None
    return None


def read_config(file: Path) -> RepositoryConfig:
    """The settings of the config file `file`; ConfigError with every problem (file:line:col) where it has any."""
    from mpigen.load import load_file, to_plain  # the YAML parser: only where there is a config to read
    from mpigen.validate.schema import check_schema

    if not file.is_file():
        what = "does not exist" if not file.exists() else "is not a file"
        raise ConfigError([Diagnostic(Location(str(file)), f"the config file {what}",
                                      f"give the path of a {CONFIG_FILE} (--config or {CONFIG_ENV}), or leave both out")])
    if _says_nothing(file):
        return RepositoryConfig(file=file)  # an empty config marks the repository's root, and sets nothing
    document, problems = load_file(file, str(file), str(file))
    if document is None:
        raise ConfigError(problems)
    problems, _ = check_schema(document, CONFIG_SCHEMA_FILE)
    if problems:  # worded as for a profile, whose root the messages call "the profile"
        raise ConfigError(sort_diagnostics(replace(d, message=d.message.replace(" in the profile", " of the config"))
                                           for d in problems))
    data = to_plain(document.data)
    folder = file.parent
    profiles = data.get("profiles")
    if isinstance(profiles, str):
        profiles = [profiles]
    helm = data.get("helm")
    if helm is not None and "/" in helm:
        helm = str(folder / helm)
    settings = tuple((command, option, value) for command, section in data.items() if isinstance(section, dict)
                     for option, value in section.items())
    return RepositoryConfig(file=file, profiles=tuple(folder / path for path in profiles) if profiles else None,
                            charts=folder / data["charts"] if "charts" in data else None, helm=helm, settings=settings,
                            profiles_at=tuple(document.location("profiles", *([] if isinstance(data["profiles"], str)
                                                                               else [index]))
                                              for index in range(len(profiles or ()))))


def _says_nothing(file: Path) -> bool:
    try:
        with file.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False  # the loader says why it cannot be read
    lines = head.decode("utf-8", errors="replace").splitlines()
    return len(head) < 4096 and all(not line.strip() or line.lstrip().startswith("#") for line in lines)


def load_config(named: Path | None) -> RepositoryConfig:
    """The config named by `--config` / MPIGEN_CONFIG (`named`), else the one found upward from here, else none."""
    file = named if named is not None else find_config()
    return read_config(file) if file is not None else RepositoryConfig()


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
    on (from the root of the git work tree, else the config's folder); else `charts` beside the config (or here)."""
    if config.charts is not None:
        return config.charts
    from mpigen.load.glance import glance
    from mpigen.support.worktree import git_top

    agreed = glance(profiles, frozenset({"Cluster"})).gitops_paths
    if len(agreed) == 1:
        top = git_top(config.folder)
        return _shown((top or config.folder.resolve()) / next(iter(agreed)))
    return config.folder / DEFAULT_CHARTS
