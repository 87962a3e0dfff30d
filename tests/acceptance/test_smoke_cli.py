from conftest import PROFILES, run_mpigen


def test_validate_example_fleet_passes():
    result = run_mpigen("validate", PROFILES)
    assert result.returncode == 0, result.stderr
    assert "10 cluster(s), 15 job(s)" in result.stdout
