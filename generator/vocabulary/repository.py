"""The names of a repository that mpigen reads and writes by default: its config file and the variables and
folders a user can rely on without naming them (docs/output.md, "The repository config")."""

from __future__ import annotations

CONFIG_FILE = ".mpigen.yaml"
"""The repository config, looked for in the current folder and, inside a git work tree, each folder above it."""
CONFIG_ENV = "MPIGEN_CONFIG"
"""The environment variable naming the config, as `--config PATH` does."""
DEFAULT_PROFILES = "profiles"
"""The profiles folder beside the config (or here) where none is named."""
DEFAULT_CHARTS = "charts"
"""The charts folder beside the config (or here) where none is named and no clusters' `gitops.path` says one."""
HELM_ENV = "MPIGEN_HELM"
"""The Helm `check` and `diff` run where `--helm` is not given; it wins over the config's `helm`."""
EDITOR_SCHEMAS = ".mpigen/schemas"
"""Where `mpigen init` puts the schemas an editor reads (`mpigen schema --write`), relative to the repository: a
hidden folder holds no profiles, so mpigen reads none of it."""
STARTING_CLUSTER = "my-cluster"
"""The cluster `mpigen init` writes where none is named, and the one an import names where nothing says which."""
STARTING_POOL = "pool"
"""The node pool of that cluster, likewise."""
