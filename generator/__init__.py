"""mpigen: compile hardware, cluster and MPI job profiles into Helm charts."""

__version__ = "0.8.0"
"""The release, written here only: pyproject.toml reads it (setuptools, `[tool.setuptools.dynamic]`), and so do
`mpigen --version`, the SARIF report's driver and every chart's Chart.yaml (`mpigen/release`). What a release
changes in compiled output is in CHANGELOG.md, a section per release."""
