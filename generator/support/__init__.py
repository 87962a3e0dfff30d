"""Plumbing every layer may use: diagnostics, YAML output and input limits, parallel maps, where schemas and git
work trees are. Nothing here knows what a profile or a chart means."""
