"""Where mpigen itself is published: the one spelling of its repository's address, and the addresses, pinned to this
release's tag, of the files a message or a schema points a reader at.

Pinned to `v<version>` so that what is read is what the running mpigen was built from: a schema an editor fetches
judges profiles as this mpigen does, and a page a message cites says what this release does. A pip-installed mpigen
has no docs/ nor schemas/ beside it, so a message names such a page by its address here, never by a path.
"""

from __future__ import annotations

from mpigen import __version__

REPOSITORY = "mpigen/mpigen"
"""`owner/name` of the repository on GitHub; the schemas' `$id`s and every page address below follow from it."""
RELEASE_TAG = f"v{__version__}"
"""The git tag of this release, e.g. `v0.3.0`."""
REPOSITORY_URL = f"https://github.com/{REPOSITORY}"
SERVED_URL = f"https://raw.githubusercontent.com/{REPOSITORY}"
"""The repository's files as they are, at any revision (`SERVED_URL/<tag>/<path>`)."""
RAW_URL = f"{SERVED_URL}/{RELEASE_TAG}"
"""The files of this release, served as they are (an editor fetches a schema from here)."""


def file_url(path: str) -> str:
    """The address of a file of the repository at this release, as a served file: `schemas/job.schema.json`."""
    return f"{RAW_URL}/{path}"


def page_url(path: str, section: str = "") -> str:
    """The address of a page of the repository at this release, for a person to read: `docs/gitops.md`, and the
    anchor of one of its headings (`section`: its words as written; GitHub's anchor is made from them)."""
    anchor = "".join(c for c in section.lower() if c.isalnum() or c in " -_").replace(" ", "-")
    return f"{REPOSITORY_URL}/blob/{RELEASE_TAG}/{path}" + (f"#{anchor}" if anchor else "")
