"""Secrets never reach a profile or a chart: both are committed to git, read by every reviewer and CI job.

Two tests, both cheap and with few false alarms:
- any string of any profile that has the shape of a well-known credential (a private key, a cloud
  or code-hosting token, a password inside a URL) is refused wherever it stands;
- a job's env variable whose name says it holds a secret (`*_TOKEN`, `*PASSWORD*`, `*_PASS`, `*_PWD`,
  `*_API_KEY`...) may not be given a literal value, only `{secretKeyRef: {name, key}}`; nor may its
  command line write one (`-x DB_PASSWORD=...`, `--password=...`, `--password ...`). Values that cannot
  be a secret (empty, a number, true/false, a `$VARIABLE`) and names that point at one (`*_FILE`,
  `*_PATH`, `*_ID`...) pass; a path does not: a password may start with `/`.
"""

from __future__ import annotations

import itertools
import re

from mpigen.load import ProfileFile
from mpigen.support.diagnostics import Diagnostic, raises
from mpigen.support.profile_rules import SECRETS
from mpigen.validate.fields import field_name
from mpigen.validate.text import profile_strings

# Shapes of credentials, each with the words the message uses for it. Every pattern runs in linear time on
# any text (tests/acceptance/test_linear_time.py): a start may not sit inside the run a previous start already read
# (hence `(?<![A-Za-z0-9_-])` before a token whose characters include `_` and `-`).
SECRET_VALUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")),
    ("an AWS access key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")),
    ("a GitHub token", re.compile(r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("a GitLab token", re.compile(r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Hugging Face token", re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}")),
    ("an OpenAI key", re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}")),
    ("a Google API key", re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),
    ("a JSON Web Token", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # The scheme's last character, not the whole scheme: `[a-z][a-z0-9+.-]*://` searched through a line of
    # letters runs from every start to its end (quadratic: a minute on 300 KB).
    ("a password in a URL", re.compile(r"[A-Za-z0-9+.-]://[^/\s:@]+:[^/\s@]+@")),
)

# A name part that says the variable holds a secret, as the whole part or at its end (`HFTOKEN`,
# `CLIENTSECRET`; not `TOKENIZERS`) ...
_SECRET_WORDS = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "SECRETS", "TOKEN", "CREDENTIAL", "CREDENTIALS",
                 "APIKEY", "PRIVATEKEY", "AUTHKEY", "ACCESSKEY", "SECRETKEY")
# ... or anywhere in it (`PGPASSWORD`, `MYSQLPASSWD`) ...
_SECRET_INSIDE = ("PASSWORD", "PASSWD", "PASSPHRASE")
# ... or, beside another part, these (`DB_PASS`, `MYSQL_PWD`; `PWD` alone is the shell's working directory) ...
_SECRET_ABBREVIATIONS = {"PASS", "PWD", "PW"}
_SECRET_PAIRS = {("API", "KEY"), ("PRIVATE", "KEY"), ("ACCESS", "KEY"), ("SECRET", "KEY"), ("AUTH", "KEY")}
# ... unless the name ends in one that says it only points at one.
_REFERENCE_SUFFIXES = {"FILE", "PATH", "DIR", "ID", "NAME", "URL", "URI", "ENDPOINT", "HOST", "PORT", "TYPE",
                       "ENABLED", "DISABLED", "REGION", "USER", "USERNAME"}
# Values that cannot be a secret: empty, a number, a boolean, a reference to a variable (`$HF_TOKEN`,
# `${X}`, `$(X)`: the secret comes from elsewhere). Not a path: a password may start with `/`, and a name
# that holds a path says so (`*_FILE`, `*_PATH`).
_HARMLESS_VALUE = re.compile(r"|-?[0-9]+(\.[0-9]+)?|true|false|yes|no|on|off|none|\$\S*", re.IGNORECASE)
# Options of a command line that take a value, named as an env variable would be (`--db-password` is DB_PASSWORD).
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HYDRA_ENV_FLAGS = ("-genv", "-env")  # Intel MPI and MPICH: `-genv NAME VALUE`
COMMAND_KEYS = ("program", "mpirunArgs", "launcherCommand", "workerCommand")


def _parts(name: str) -> list[str]:
    return [p for p in name.upper().split("_") if p]


def secret_name(name: str) -> bool:
    """Whether an env variable's name says it holds a secret (`HF_TOKEN`, `PGPASSWORD`, `DB_PASS`,
    `WANDB_API_KEY`), and does not say it only points at one (`PASSWORD_FILE`, `TOKEN_URL`)."""
    parts = _parts(name)
    if not parts or parts[-1] in _REFERENCE_SUFFIXES:
        return False
    return (any(part.endswith(_SECRET_WORDS) or any(word in part for word in _SECRET_INSIDE) for part in parts)
            or (len(parts) > 1 and bool(_SECRET_ABBREVIATIONS & set(parts)))
            or any(pair in _SECRET_PAIRS for pair in itertools.pairwise(parts)))


def _secret_option(name: str) -> bool:
    """Whether an option given its value in the next argument (`--password hunter2`) names a secret: its last
    word must be one (`--hub-token`; not `--passwordless`, a switch followed by anything)."""
    parts = _parts(name.replace("-", "_"))
    return bool(parts) and (parts[-1] in _SECRET_WORDS or parts[-1] in _SECRET_ABBREVIATIONS
                            or tuple(parts[-2:]) in _SECRET_PAIRS)


def harmless(value: str) -> bool:
    """Whether a value cannot be a secret (see _HARMLESS_VALUE, or no letter or digit at all: `{{` of template
    text split off at a space, `***`); shell quotes around it do not count."""
    value = value.strip("'\"")
    return bool(_HARMLESS_VALUE.fullmatch(value)) or not any(ch.isalnum() for ch in value)


def written_secret(arguments: list[str]) -> list[tuple[int, str]]:
    """(index of the argument, the name it gives a value) for each secret a command line writes out:
    `NAME=value` (`-x DB_PASSWORD=...`, `export TOKEN=...` in a script), `--password=value`,
    `--password value`, `-genv DB_PASSWORD value`. `-p` is left alone: sshd's and many tools' port."""
    words = [(index, word) for index, argument in enumerate(arguments) for word in argument.split()]
    found: list[tuple[int, str]] = []
    for k, (index, word) in enumerate(words):
        following = [w for _, w in words[k + 1:k + 3]]
        name, equals, value = word.lstrip("-").partition("=")
        if equals and _ASSIGNMENT.fullmatch(name.replace("-", "_")) and secret_name(name.replace("-", "_")):
            if not harmless(value):
                found.append((index, word.partition("=")[0]))
        elif word.startswith("-") and not equals and following and not following[0].startswith("-"):
            if word in _HYDRA_ENV_FLAGS and len(following) == 2 and secret_name(following[0]):
                if not harmless(following[1]):
                    found.append((words[k + 2][0], following[0]))
            elif _secret_option(name) and not harmless(following[0]):
                found.append((words[k + 1][0], word))
    return found


def masked(text: str) -> str:
    """`text` with each credential in it replaced by what it looks like (`<a GitHub token>`): for messages that quote
    what an input held, so a secret there is never printed."""
    for what, pattern in SECRET_VALUES:
        text = pattern.sub(f"<{what}>", text)
    return text


def secret_shape(text: str) -> str | None:
    """What kind of credential `text` contains, or None."""
    return next((what for what, pattern in SECRET_VALUES if pattern.search(text)), None)


STORED = "secrets must not be written in profiles, which are committed to git and copied into the charts"
ELSEWHERE_HINT = ("remove it; give the job a secret through `env` with `secretKeyRef`, or the cluster through a Secret "
                  "your GitOps tool already has")


def _secret_ref_hint(document: ProfileFile, variable: str) -> str:
    namespace = document.data.get("namespace")
    where = f"namespace {namespace}" if isinstance(namespace, str) else "the job's namespace"
    return (f"put it in a Secret in {where} (`kubectl create secret generic <name> --from-literal=<key>=...`) and "
            f"write `{variable}: {{secretKeyRef: {{name: <name>, key: <key>}}}}`")


@raises(SECRETS)
def check_secrets(document: ProfileFile) -> list[Diagnostic]:
    """Credentials written into one profile."""
    found: list[Diagnostic] = []
    flagged: set[tuple[str | int, ...]] = set()
    env = document.data.get("env") if document.kind == "Job" else None
    for path, text, key in profile_strings(document.data):
        shape = secret_shape(text)
        in_env = not key and isinstance(env, dict) and len(path) == 2 and path[0] == "env"
        if shape is None and not (in_env and secret_name(str(path[1])) and not harmless(text)):
            continue
        flagged.add(path)
        why = f"looks like {shape}" if shape else "is named like a secret and written out"
        what = f"key {field_name(path)}" if key else field_name(path)
        message = f"{what} {why}: {STORED}"
        hint = _secret_ref_hint(document, str(path[1])) if in_env else ELSEWHERE_HINT
        if in_env and not shape and text.startswith("/"):
            hint += f"; if it is the path of a file that holds the secret, name the variable {path[1]}_FILE"
        found.append(Diagnostic(document.location(*path, at_key=key), message, hint))
    for command in COMMAND_KEYS if document.kind == "Job" else ():
        arguments = document.data.get(command)
        if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
            continue  # the schema says what is wrong with it
        for index, name in written_secret(list(arguments)):
            if (command, index) in flagged:
                continue  # its shape is named already
            flagged.add((command, index))
            found.append(Diagnostic(document.location(command, index),
                                    f"{field_name((command, index))} writes out the value of {name}, which is named "
                                    f"like a secret: {STORED}",
                                    "give the job the secret through `env` with `{secretKeyRef: {name: <Secret>, key: "
                                    "<key>}}` and refer to the variable (`$NAME` in a shell script, `-x NAME` for "
                                    "mpirun)"))
    return found
