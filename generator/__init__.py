"""mpigen: compile hardware, cluster and MPI job profiles into Helm charts."""

__version__ = "0.2.0"
"""The release, written here only: pyproject.toml reads it (hatch `[tool.hatch.version]`), and so do
`mpigen --version` and the SARIF report's driver."""
