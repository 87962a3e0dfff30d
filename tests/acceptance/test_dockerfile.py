"""The container image (Dockerfile at the repository root) keeps its promises: a pinned slim Python base, mpigen
installed from a wheel built from the source, the Helm `make helm` installs for the tests (checked against its
published sha256), no root, `mpigen` as the entrypoint, /work for the mounted repository. Held here without a
container engine; where a builder answers (`docker info`), the image is built and run too."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys

import pytest
from conftest import CHARTS, PROFILES, REPO

from mpigen import __version__

sys.path.insert(0, str(REPO / "scripts"))
try:
    from install_helm import PACKAGES
finally:
    sys.path.remove(str(REPO / "scripts"))

DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")


def instructions() -> list[tuple[str, str]]:
    """(instruction, its text with continuations joined), comments left out."""
    lines = [line for line in DOCKERFILE.splitlines() if not line.lstrip().startswith("#")]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [(m[1], m[2].strip()) for m in re.finditer(r"^(\w+)\s+(.*)$", joined, re.MULTILINE)]


def final_stage() -> list[tuple[str, str]]:
    found = instructions()
    last = max(i for i, (name, _) in enumerate(found) if name == "FROM")
    return found[last:]


def arg(name: str) -> str:
    (value,) = [text.split("=", 1)[1] for kind, text in instructions() if kind == "ARG" and text.startswith(f"{name}=")]
    return value


def test_the_base_is_a_slim_python_pinned_by_version_and_digest():
    image = arg("PYTHON_IMAGE")
    assert re.fullmatch(r"python:3\.\d+\.\d+-slim-\w+@sha256:[0-9a-f]{64}", image), image
    stages = [text for kind, text in instructions() if kind == "FROM"]
    assert stages == ["${PYTHON_IMAGE} AS wheel", "${PYTHON_IMAGE} AS helm", "${PYTHON_IMAGE}"]


def test_mpigen_is_installed_from_a_wheel_built_from_the_source():
    assert any(kind == "RUN" and "pip wheel" in text and "--no-deps" in text for kind, text in instructions())
    final = final_stage()
    assert ("COPY", "--from=wheel /dist/ /tmp/dist/") in final
    assert any(kind == "RUN" and "pip install" in text and "/tmp/dist/mpigen-*.whl" in text for kind, text in final)
    assert not any(kind == "COPY" and "generator" in text for kind, text in final)  # the source stays in its stage


def test_helm_is_the_release_make_helm_installs_checked_against_its_sha256():
    version = arg("HELM_VERSION")
    assert version.startswith(PACKAGES["4"][1]), (version, PACKAGES["4"])  # scripts/install_helm.py, `make helm`
    assert re.fullmatch(r"v\d+\.\d+\.\d+", version)
    for arch in ("AMD64", "ARM64"):
        assert re.fullmatch(r"[0-9a-f]{64}", arg(f"HELM_SHA256_{arch}"))
    (fetch,) = [text for kind, text in instructions() if kind == "RUN" and "get.helm.sh" in text]
    assert "https://get.helm.sh/helm-${HELM_VERSION}-linux-${arch}.tar.gz" in fetch
    assert fetch.index("sha256sum -c") < fetch.index("tar -xzf") < fetch.index("install -m 0755")
    assert "test \"$(helm version --template '{{.Version}}')\" = \"$HELM_VERSION\"" in fetch
    final = final_stage()
    assert ("COPY", "--from=helm /usr/local/bin/helm /usr/local/bin/helm") in final
    assert any(kind == "ENV" and "MPIGEN_HELM=/usr/local/bin/helm" in text for kind, text in final)


def test_the_image_runs_mpigen_without_root_in_the_mounted_repository():
    final = final_stage()
    users = [text for kind, text in final if kind == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), users
    assert [text for kind, text in final if kind == "WORKDIR"][-1] == "/work"
    assert [text for kind, text in final if kind == "ENTRYPOINT"] == ['["mpigen"]']
    assert [i for i, (kind, _) in enumerate(final) if kind == "USER"][-1] > max(
        i for i, (kind, _) in enumerate(final) if kind == "RUN")  # nothing runs as root after it


def test_the_build_context_is_the_package_source_only():
    ignored = [line for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line and not line.startswith("#")]
    assert ignored[0] == "*"
    kept = {line[1:].rstrip("/") for line in ignored if line.startswith("!")}
    copied = {source.rstrip("/") for kind, text in instructions() if kind == "COPY" and not text.startswith("--from")
              for source in text.split()[:-1]}
    assert copied == kept == {"pyproject.toml", "README.md", "generator", "schemas"}
    assert not any(fnmatch.fnmatch(name, pattern) for name in kept for pattern in ignored[1:] if pattern[0] != "!")


# --- the image itself, where a builder answers -------------------------------------------------------------------

def _builder_or_skip() -> str:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker client on PATH: the image is not built here")
    info = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=60, check=False)
    if info.returncode != 0:
        reason = next((line.strip() for line in info.stderr.splitlines() if line.strip()), "no answer")
        pytest.skip(f"no container builder answers `docker info` here ({reason}): the image is not built")
    return docker


def test_the_image_builds_and_renders_and_checks_the_example_fleet_read_only():
    docker = _builder_or_skip()
    tag = f"mpigen-test:{__version__}"
    built = subprocess.run([docker, "build", "-t", tag, str(REPO)], capture_output=True, text=True, timeout=1800)
    assert built.returncode == 0, built.stderr[-4000:]
    try:
        def run(*args: str, mounts: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
            volumes = [part for mount in mounts for part in ("-v", mount)]
            return subprocess.run([docker, "run", "--rm", "--network", "none", *volumes, tag, *args],
                                  capture_output=True, text=True, timeout=600)

        version = run("--version")
        assert version.returncode == 0 and version.stdout == f"mpigen, version {__version__}\n", version.stderr
        rendered = run("render", "profiles", "--manifests", mounts=(f"{PROFILES}:/work/profiles:ro",))
        assert rendered.returncode == 0, rendered.stderr
        assert "kind: MPIJob" in rendered.stdout
        checked = run("check", "charts", mounts=(f"{CHARTS}:/work/charts:ro",))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert f"rendering and linting with helm {arg('HELM_VERSION')} (/usr/local/bin/helm)" in checked.stderr
        user = subprocess.run([docker, "run", "--rm", "--entrypoint", "id", tag, "-u"], capture_output=True,
                              text=True, timeout=120)
        assert user.stdout.strip() not in ("", "0"), user.stdout
    finally:
        subprocess.run([docker, "image", "rm", "-f", tag], capture_output=True, timeout=120, check=False)
