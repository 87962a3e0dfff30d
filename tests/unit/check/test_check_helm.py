"""generator/check/helm.py's choice of Helm: what `--helm` / MPIGEN_HELM (or PATH) names must answer `version` as Helm
3 or 4, the majors Argo CD and Flux render with; anything else is refused with what to give instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import helm_path

from mpigen.check.helm import HelmRefused, choose_helm


def fake_helm(folder: Path, answer: str) -> Path:
    """A program that answers `helm version --template {{.Version}}` with `answer`: a Helm of another major, as far
    as the version probe can tell (it tests the refusal, not Helm)."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "helm"
    program.write_text(f"#!/bin/sh\nprintf '%s' '{answer}'\n", encoding="utf-8")
    program.chmod(0o755)
    return program


@pytest.mark.parametrize("major", [3, 4])
def test_a_real_helm_of_a_supported_major_is_chosen_with_its_version(major: int) -> None:
    helm = helm_path(major)
    if helm is None:
        pytest.skip(f"no Helm {major}: set MPIGEN_HELM{major} (make helm installs it)")
    chosen = choose_helm(str(helm))
    assert chosen is not None and chosen.path == str(helm) and chosen.version.startswith(f"v{major}.")
    assert chosen.note("rendering and linting") == f"rendering and linting with helm {chosen.version} ({helm})"


@pytest.mark.parametrize("answer", ["v2.17.0", "v5.0.0", "v1.31.4+k3s1"])
def test_a_helm_of_another_major_is_refused_naming_where_it_came_from(tmp_path: Path, answer: str) -> None:
    helm = fake_helm(tmp_path, answer)
    with pytest.raises(HelmRefused) as refused:
        choose_helm(str(helm), "MPIGEN_HELM")
    assert str(refused.value) == (f"MPIGEN_HELM {helm} is Helm {answer}; mpigen renders with Helm 3 or 4, as Argo CD "
                                  "and Flux do: give one with --helm PATH or the MPIGEN_HELM environment variable")


def test_a_helm_2_on_path_is_refused_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    helm = fake_helm(tmp_path / "bin", "v2.17.0")
    monkeypatch.setenv("PATH", f"{helm.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    with pytest.raises(HelmRefused, match=r"^helm on PATH \(.*/bin/helm\) is Helm v2\.17\.0; "):
        choose_helm(None)


def test_a_program_that_is_no_helm_is_refused_when_asked_for_and_passed_over_on_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    helm = fake_helm(tmp_path / "bin", "hello")
    with pytest.raises(HelmRefused, match="does not answer `version` like Helm"):
        choose_helm(str(helm))
    with pytest.raises(HelmRefused, match=r"^--helm /no/such/helm: no such program$"):
        choose_helm("/no/such/helm")
    monkeypatch.setenv("PATH", str(helm.parent))
    assert choose_helm(None) is None


def test_a_helm_that_hangs_is_refused_after_the_version_probes_bound(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The version probe waited as long as a render (120 s); it has its own, short, bound (a second here)."""
    import mpigen.check.helm as helm_module

    program = tmp_path / "helm"
    program.write_text("#!/bin/sh\nexec sleep 60\n", encoding="utf-8")
    program.chmod(0o755)
    assert helm_module.HELM_VERSION_TIMEOUT <= 10 < helm_module.HELM_TIMEOUT
    monkeypatch.setattr(helm_module, "HELM_VERSION_TIMEOUT", 1)
    with pytest.raises(HelmRefused) as refused:
        choose_helm(str(program))
    assert str(refused.value) == (f"--helm {program} did not answer `helm version` within 1 s: it hangs; give a Helm "
                                  "that works with --helm PATH or MPIGEN_HELM")


def test_a_path_is_run_as_that_file_and_a_bare_name_from_path_only(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`./helm` is that file, made absolute; a name (no `/`) is looked up on PATH, never in the current folder, which
    is where `subprocess` would not look either."""
    from mpigen.check.helm import find_helm

    local = fake_helm(tmp_path, "v3.17.3")
    monkeypatch.chdir(tmp_path)
    assert find_helm("./helm") == str(local)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_helm("helm") is None
