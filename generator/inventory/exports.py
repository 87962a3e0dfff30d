"""Exported objects read from the files and folders a user names (`--context`): the files as check reads manifests
(bounded; `kind: List` expanded), and the Nodes among them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mpigen.inventory.nodes import LiveNode
from mpigen.inventory.pools import live_nodes
from mpigen.readback.discover import manifest_files
from mpigen.readback.documents import read_manifest_file
from mpigen.readback.findings import Finding


def exported_nodes(paths: Iterable[Path]) -> tuple[list[LiveNode], list[Finding]]:
    """The Nodes of every manifest file under `paths`, and what could not be read (nothing is guessed for it)."""
    objects = []
    problems: list[Finding] = []
    for root in paths:
        files, found = manifest_files(root)
        problems += found
        for file in files:
            documents, unreadable = read_manifest_file(file)
            objects += [(document.obj, document.source) for document in documents]
            problems += unreadable
    return live_nodes(objects), problems
