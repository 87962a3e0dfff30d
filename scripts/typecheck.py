"""mypy over the package as it installs and imports: `mpigen`, whose source folder is generator/ (the repository's
layout). mypy names a package after its folder, so it reads generator/ through a link named `mpigen` in a temporary
folder, which goes away with the run. `make typecheck` runs it; its settings are pyproject.toml's [tool.mypy]."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="mpigen-typecheck-") as folder:
        (Path(folder) / "mpigen").symlink_to(REPO / "generator", target_is_directory=True)
        command = [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"), "-p", "mpigen",
                   *sys.argv[1:]]
        return subprocess.run(command, env={**os.environ, "MYPYPATH": folder}, cwd=REPO, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
