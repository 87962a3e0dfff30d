"""`mpigen init` end to end: the starting fleet validates, renders, and passes `mpigen check --strict` with real
Helm; a second init into the same folder changes nothing."""

from __future__ import annotations

from conftest import helm_path, need, run_mpigen, snapshot


def test_init_then_validate_render_and_check(tmp_path):
    helm = helm_path(4)
    need(helm is not None, "needs Helm 4 (make test installs it)")
    profiles = tmp_path / "profiles"
    made = run_mpigen("init", profiles, "--hardware", "dgx-h100", "--gitops", "flux")
    assert made.returncode == 0, made.stderr
    assert sorted(line.split()[-1] for line in made.stdout.splitlines() if line.startswith("wrote ")) == [
        str(profiles / "clusters/my-cluster.yaml"), str(profiles / "hardware/my-dgx-h100.yaml"),
        str(profiles / "jobs/hello.yaml")]
    assert run_mpigen("validate", profiles).returncode == 0
    assert run_mpigen("render", profiles, "-o", tmp_path / "charts").returncode == 0
    checked = run_mpigen("check", "--helm", helm, "--strict", tmp_path / "charts")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 error(s), 0 warning(s)" in checked.stdout
    before = snapshot(profiles)
    again = run_mpigen("init", profiles, "--hardware", "dgx-1")
    assert again.returncode == 2 and "exists already" in again.stderr and "Traceback" not in again.stderr
    assert snapshot(profiles) == before
