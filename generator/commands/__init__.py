"""The commands: the CLI (which only wires), the pipeline it runs, and the commands' own helpers (the scaffold of
`mpigen init`, the freshness of an installed copy, the release summary of `render --check`)."""
