"""generator/validate/secrets.py: credentials in profiles are errors that point at them and at `secretKeyRef`.

The sample credentials below are made up, in the documented shape of each kind (none is a live key).
"""

from __future__ import annotations

import pytest
from conftest import PROFILES, TRAIN_JOB

from mpigen.commands.pipeline import compile_profiles
from mpigen.support.diagnostics import Severity
from mpigen.validate.secrets import secret_name, secret_shape, written_secret

SECRET_HINT = ("put it in a Secret in {ns} (`kubectl create secret generic <name> --from-literal=<key>=...`) "
               "and write `{var}: {{secretKeyRef: {{name: <name>, key: <key>}}}}`")
STORED = "secrets must not be written in profiles, which are committed to git and copied into the charts"
ELSEWHERE_HINT = ("remove it; give the job a secret through `env` with `secretKeyRef`, or the cluster through a Secret "
                  "your GitOps tool already has")

SAMPLES = {
    "a private key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "an AWS access key": "AKIAIOSFODNN7EXAMPLE",
    "a GitHub token": "ghp_" + "a1B2c3D4e5" * 4,
    "a GitLab token": "glpat-" + "x7Y8z9" * 4,
    "a Slack token": "xoxb-1234567890-abcdefghij",
    "a Hugging Face token": "hf_" + "AbCdEfGhIj" * 4,
    "an OpenAI key": "sk-proj-" + "Q1w2E3r4T5" * 4,
    "a Google API key": "AIza" + "SyD-abcdefghijklmnopqrstuvwxyz01234",
    "a JSON Web Token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "a password in a URL": "https://trainer:hunter2@git.example.com/ml/profiles.git",
}


@pytest.mark.parametrize("kind", SAMPLES)
def test_each_shape_of_credential_is_recognised(kind):
    assert secret_shape(f"prefix {SAMPLES[kind]} suffix") == kind


@pytest.mark.parametrize("text", [
    "nvcr.io/nvidia/pytorch:24.03-py3", "https://github.com/example/ml-fleet.git", "=mlx5_0:1,mlx5_1:1",
    "--batch_size=256", "ssh://git@github.com/example/fleet.git", "sk-learn", "hf_transfer", "AKIA",
    "/home/mpiuser/.ssh", "ghp_short",
])
def test_ordinary_profile_strings_are_not_credentials(text):
    assert secret_shape(text) is None


@pytest.mark.parametrize("name", ["HF_TOKEN", "DB_PASSWORD", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "MY_SECRET",
                                  "GITHUB_TOKEN", "S3_ACCESS_KEY", "password", "SERVICE_CREDENTIALS", "APIKEY",
                                  # a secret word inside a part, or an abbreviation beside another part
                                  "PGPASSWORD", "MYSQL_PWD", "DB_PASS", "SMTP_PW", "HFTOKEN", "OAUTH_CLIENTSECRET",
                                  "REDIS_PASSWD", "KEY_PASSPHRASE", "pgpassword"])
def test_names_that_hold_a_secret(name):
    assert secret_name(name)


@pytest.mark.parametrize("name", ["TOKENIZERS_PARALLELISM", "MAX_TOKENS", "PASSWORD_FILE", "AWS_ACCESS_KEY_ID",
                                  "SECRET_PATH", "NCCL_IB_HCA", "KEY", "OMPI_MCA_pml", "TOKEN_URL", "SSH_KEY_DIR",
                                  # false alarms considered: the shell's PWD, passes, bypasses, timeouts, tokenizers
                                  "PWD", "OLDPWD", "NUM_PASSES", "BYPASS_CACHE", "NCCL_IB_TIMEOUT", "PGPASSFILE",
                                  "HF_HUB_DISABLE_TOKEN_FILE", "PGPASSWORD_FILE", "DETOKENIZE", "PASS"])
def test_names_that_do_not(name):
    assert not secret_name(name)


JOB = TRAIN_JOB + "workers: 2\n"  # additions start at line 9


def errors_of(profiles_copy, edits: dict[str, str]) -> list[str]:
    root = profiles_copy(edits)
    result = compile_profiles([root])
    return [d.format().replace(f"{root}/", "") for d in result.diagnostics if d.severity is Severity.ERROR]


def test_a_literal_value_under_a_secret_name_points_at_the_value_and_at_secret_key_ref(profiles_copy):
    job = JOB + "namespace: ml-training\nenv:\n  HF_TOKEN: my-token-value\n  NCCL_DEBUG: INFO\n"
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        f"jobs/train.yaml:11:13: error: `env.HF_TOKEN` is named like a secret and written out: {STORED}; "
        + SECRET_HINT.format(ns="namespace ml-training", var="HF_TOKEN")]


def test_a_credential_in_any_env_variable_is_named_by_its_kind(profiles_copy):
    job = JOB + f"env:\n  NOTES: \"{SAMPLES['a GitHub token']}\"\n"
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        f"jobs/train.yaml:10:10: error: `env.NOTES` looks like a GitHub token: {STORED}; "
        + SECRET_HINT.format(ns="the job's namespace", var="NOTES")]


def test_a_credential_outside_env_is_refused_too(profiles_copy):
    job = JOB.replace("program: [python, train.py]",
                            f"program: [python, train.py, --hub-token, {SAMPLES['a Hugging Face token']}]")
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        f"jobs/train.yaml:7:42: error: `program[3]` looks like a Hugging Face token: {STORED}; {ELSEWHERE_HINT}"]


def test_a_password_in_the_gitops_repository_url_is_refused(profiles_copy):
    cluster = (PROFILES / "clusters" / "dgx-lab.yaml").read_text(encoding="utf-8")
    url = "https://git.example.com/platform/gpu-fleet.git"
    assert f"repoURL: {url}" in cluster
    cluster = cluster.replace(url, "https://bot:notarealtoken@git.example.com/platform/gpu-fleet.git")
    line = cluster.splitlines().index("  repoURL: https://bot:notarealtoken@git.example.com/platform/gpu-fleet.git") + 1
    assert errors_of(profiles_copy, {"clusters/dgx-lab.yaml": cluster}) == [
        f"clusters/dgx-lab.yaml:{line}:12: error: `gitops.repoURL` looks like a password in a URL: {STORED}; "
        f"{ELSEWHERE_HINT}"]


@pytest.mark.parametrize("arguments, written", [
    (["-x", "DB_PASSWORD=hunter2"], [(1, "DB_PASSWORD")]),
    (["--password=hunter2"], [(0, "--password")]),
    (["--password", "hunter2"], [(1, "--password")]),
    (["--db-password='hunter2'"], [(0, "--db-password")]),
    (["--hub-token", "abc123"], [(1, "--hub-token")]),
    (["-genv", "PGPASSWORD", "hunter2"], [(2, "PGPASSWORD")]),
    (["bash", "-c", "export HF_TOKEN=abc && mpirun python x.py"], [(2, "HF_TOKEN")]),
    (["--password=/etc/db-pass"], [(0, "--password")]),
])
def test_a_command_line_that_writes_out_a_secret(arguments, written):
    assert written_secret(arguments) == written


@pytest.mark.parametrize("arguments", [
    ["-x", "HF_TOKEN", "python", "train.py"],  # exported by name: the value comes from secretKeyRef
    ["--password=$DB_PASSWORD"], ['--password="${DB_PASSWORD}"'], ["--password", "$(DB_PASSWORD)"],
    ["--passwordless", "train.py"], ["--password-file", "/run/secrets/db"], ["--token-limit", "4096"],
    ["-p", "2222"],  # sshd's port: `-p` is not taken for a password
    ["TOKENIZERS_PARALLELISM=false", "python"], ["NCCL_IB_TIMEOUT=22"], ["-genv", "NCCL_DEBUG", "INFO"],
    ["--max-tokens", "512"], ["--lr=0.1"],
    ['--token={{ lookup "v1" "Secret" "" "" }}'],  # template text, which the chart keeps as text: no value
])
def test_a_command_line_that_does_not(arguments):
    assert written_secret(arguments) == []


def test_a_secret_written_into_mpirun_args_is_refused_at_the_argument(profiles_copy):
    job = JOB + "mpirunArgs: [-x, DB_PASSWORD=hunter2]\n"
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        f"jobs/train.yaml:9:18: error: `mpirunArgs[1]` writes out the value of DB_PASSWORD, which is named like a "
        f"secret: {STORED}; give the job the secret through `env` with `{{secretKeyRef: {{name: <Secret>, key: "
        "<key>}}` and refer to the variable (`$NAME` in a shell script, `-x NAME` for mpirun)"]


def test_a_token_shaped_mapping_key_is_refused_at_the_key(profiles_copy):
    token = SAMPLES["a GitHub token"]
    job = JOB + f"env:\n  {token}: x\n"
    found = errors_of(profiles_copy, {"jobs/train.yaml": job})
    assert f"jobs/train.yaml:10:3: error: key `env.{token}` looks like a GitHub token: {STORED}; {ELSEWHERE_HINT}" \
        in found


def test_a_path_under_a_secret_name_is_refused_and_told_about_file(profiles_copy):
    job = JOB + "env:\n  DB_PASSWORD: /hunter2\n"
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        f"jobs/train.yaml:10:16: error: `env.DB_PASSWORD` is named like a secret and written out: {STORED}; "
        + SECRET_HINT.format(ns="the job's namespace", var="DB_PASSWORD")
        + "; if it is the path of a file that holds the secret, name the variable DB_PASSWORD_FILE"]


@pytest.mark.parametrize("value", ['""', '"0"', '"true"', "off", "$HF_TOKEN_FROM_VAULT"])
def test_values_that_cannot_be_a_secret_pass_under_a_secret_name(profiles_copy, value):
    job = JOB + f"env:\n  HF_TOKEN: {value}\n"
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == []


def test_secret_key_ref_is_the_way_and_passes(profiles_copy):
    job = JOB + "env:\n  HF_TOKEN: {secretKeyRef: {name: hugging-face, key: token}}\n"
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == []


def test_a_malformed_secret_key_ref_is_a_schema_error(profiles_copy):
    job = JOB + "env:\n  HF_TOKEN: {secretKeyRef: {name: hugging-face}}\n"
    assert errors_of(profiles_copy, {"jobs/train.yaml": job}) == [
        "jobs/train.yaml:10:28: error: missing required key 'key' in `env.HF_TOKEN.secretKeyRef`; "
        "add `key:` (Key in the Secret's data.)"]


def test_a_secret_in_a_profile_that_is_otherwise_broken_is_still_reported(profiles_copy):
    job = JOB.replace("pool: dgx", "pool: 3") + "env:\n  DB_PASSWORD: letmein123\n"
    assert [e.split(": error: ")[0] for e in errors_of(profiles_copy, {"jobs/train.yaml": job})] == [
        "jobs/train.yaml:5:7", "jobs/train.yaml:10:16"]


def test_masked_never_prints_a_credential() -> None:
    """What a message quoting an input shows in place of a credential: what it looks like."""
    from mpigen.validate.secrets import masked

    token = "ghp_" + "a1" * 20
    assert masked(f"image 'registry/{token}' is odd") == "image 'registry/<a GitHub token>' is odd"
    assert masked("no secret here: mpirun -np 2") == "no secret here: mpirun -np 2"
