"""Secrets never reach a profile or a chart: both are committed to git, read by every reviewer and CI job.

Two tests, both cheap and with few false alarms:
- any string of any profile that has the shape of a well-known credential (a private key, a cloud
  or code-hosting token, a password inside a URL) is refused wherever it stands;
- a job's env variable whose name says it holds a secret (`*_TOKEN`, `*PASSWORD*`, `*_API_KEY`...)
  may not be given a literal value, only `{secretKeyRef: {name, key}}`. Values that cannot be a
  secret (empty, a number, true/false, an absolute path) and names that point at one (`*_FILE`,
  `*_PATH`, `*_ID`...) pass.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from generator.diagnostics import Diagnostic
from generator.load import Document

# Shapes of credentials, each with the words the message uses for it.
SECRET_VALUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")),
    ("an AWS access key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")),
    ("a GitHub token", re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("a GitLab token", re.compile(r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Hugging Face token", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}")),
    ("an OpenAI key", re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}")),
    ("a Google API key", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),
    ("a JSON Web Token", re.compile(r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a password in a URL", re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@")),
)

# A name part that says the variable holds a secret ...
_SECRET_WORDS = {"PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "CREDENTIALS", "APIKEY",
                 "PRIVATEKEY", "AUTHKEY", "ACCESSKEY", "SECRETKEY"}
_SECRET_PAIRS = {("API", "KEY"), ("PRIVATE", "KEY"), ("ACCESS", "KEY"), ("SECRET", "KEY"), ("AUTH", "KEY")}
# ... unless the name ends in one that says it only points at one.
_REFERENCE_SUFFIXES = {"FILE", "PATH", "DIR", "ID", "NAME", "URL", "URI", "ENDPOINT", "HOST", "PORT", "TYPE",
                       "ENABLED", "DISABLED", "REGION", "USER", "USERNAME"}
_HARMLESS_VALUE = re.compile(r"|-?[0-9]+(\.[0-9]+)?|true|false|yes|no|on|off|none|/\S*", re.IGNORECASE)


def secret_name(name: str) -> bool:
    """Whether an env variable's name says it holds a secret (`HF_TOKEN`, `DB_PASSWORD`, `WANDB_API_KEY`)."""
    parts = [p for p in name.upper().split("_") if p]
    if not parts or parts[-1] in _REFERENCE_SUFFIXES:
        return False
    return bool(_SECRET_WORDS & set(parts)) or any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts))


def secret_shape(text: str) -> str | None:
    """What kind of credential `text` contains, or None."""
    return next((what for what, pattern in SECRET_VALUES if pattern.search(text)), None)


def _strings(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(node, CommentedMap):
        for key, value in node.items():
            yield from _strings(value, (*path, str(key)))
    elif isinstance(node, CommentedSeq):
        for index, value in enumerate(node):
            yield from _strings(value, (*path, index))
    elif isinstance(node, str):
        yield path, node


def _field(path: tuple[str | int, ...]) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return f"`{text}`"


def _secret_ref_hint(document: Document, variable: str) -> str:
    namespace = document.data.get("namespace")
    where = f"namespace {namespace}" if isinstance(namespace, str) else "the job's namespace"
    return (f"put it in a Secret in {where} (`kubectl create secret generic <name> --from-literal=<key>=...`) and "
            f"write `{variable}: {{secretKeyRef: {{name: <name>, key: <key>}}}}`")


def check_secrets(document: Document) -> list[Diagnostic]:
    """Credentials written into one profile."""
    found: list[Diagnostic] = []
    env = document.data.get("env") if document.kind == "Job" else None
    for path, text in _strings(document.data):
        shape = secret_shape(text)
        in_env = isinstance(env, dict) and len(path) == 2 and path[0] == "env"
        if shape is None and not (in_env and secret_name(str(path[1])) and not _HARMLESS_VALUE.fullmatch(text)):
            continue
        why = f"looks like {shape}" if shape else "is named like a secret and written out"
        message = f"{_field(path)} {why}: secrets must not be written in profiles, which are committed to git " \
                  "and copied into the charts"
        hint = (_secret_ref_hint(document, str(path[1])) if in_env else
                "remove it; give the job a secret through `env` with `secretKeyRef`, or the cluster through a Secret "
                "your GitOps tool already has")
        found.append(Diagnostic(document.location(*path), message, hint))
    return found
