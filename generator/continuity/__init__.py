"""Committed runs: what the charts already in the output folder say of each running job, so that a render keeps
a run's name (and the spec it started with) while the profiles ask the same of it."""
