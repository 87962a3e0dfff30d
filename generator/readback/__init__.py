"""Reading compiled charts back, as `mpigen check`, `mpigen diff`, the committed runs (generator/continuity/) and
the release summary do: bounded inputs, YAML read as the API server reads it, chart discovery, mpigen's own
renderer of its own templates, and the findings they report."""
