# mpigen and a pinned Helm, for CI jobs and pre-commit's `docker_image` hooks. Build it from the repository root:
#
#   docker build -t mpigen .
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/work" mpigen render profiles -o charts
#   docker run --rm -v "$PWD:/work:ro" mpigen check charts
#
# The repository is mounted at /work, the working folder; mpigen runs as a user without privileges (give yours with
# --user where it writes into the mount). `check` and `diff` render with the Helm below (MPIGEN_HELM).

# The base, by tag and by the digest of that tag's multi-arch index: bump both together.
ARG PYTHON_IMAGE=python:3.12.11-slim-bookworm@sha256:519591d6871b7bc437060736b9f7456b8731f1499a57e22e6c285135ae657bf7

# --- the wheel, built from the source as a release is --------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS wheel
WORKDIR /src
COPY pyproject.toml README.md ./
COPY generator/ generator/
COPY schemas/ schemas/
RUN pip wheel --no-cache-dir --disable-pip-version-check --no-deps --wheel-dir /dist .

# --- Helm: the release `make helm` installs for the tests (scripts/install_helm.py, Helm 4.1.x), checked against
# the sha256 get.helm.sh publishes beside each tarball -------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS helm
ARG HELM_VERSION=v4.1.4
ARG HELM_SHA256_AMD64=70b2c30a19da4db264dfd68c8a3664e05093a361cefd89572ffb36f8abfa3d09
ARG HELM_SHA256_ARM64=13d03672be289045d2ff00e4e345d61de1c6f21c1257a45955a30e8ae036d8f1
RUN set -eu; \
    arch="$(dpkg --print-architecture)"; \
    case "$arch" in \
      amd64) sum="$HELM_SHA256_AMD64" ;; \
      arm64) sum="$HELM_SHA256_ARM64" ;; \
      *) echo "no Helm checksum pinned for $arch" >&2; exit 1 ;; \
    esac; \
    python -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
      "https://get.helm.sh/helm-${HELM_VERSION}-linux-${arch}.tar.gz" /tmp/helm.tar.gz; \
    echo "$sum  /tmp/helm.tar.gz" | sha256sum -c -; \
    tar -xzf /tmp/helm.tar.gz -C /tmp "linux-${arch}/helm"; \
    install -m 0755 "/tmp/linux-${arch}/helm" /usr/local/bin/helm; \
    test "$(helm version --template '{{.Version}}')" = "$HELM_VERSION"

# --- the image: the wheel installed, Helm beside it, no build tools ------------------------------------------------
FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MPIGEN_HELM=/usr/local/bin/helm \
    HELM_CACHE_HOME=/tmp/helm/cache \
    HELM_CONFIG_HOME=/tmp/helm/config \
    HELM_DATA_HOME=/tmp/helm/data
# git: `mpigen diff --against REV` reads the charts of a revision; the mounted repository belongs to another user.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*' \
    && useradd --uid 10001 --user-group --create-home --shell /usr/sbin/nologin mpigen
COPY --from=helm /usr/local/bin/helm /usr/local/bin/helm
COPY --from=wheel /dist/ /tmp/dist/
RUN pip install --no-cache-dir --disable-pip-version-check /tmp/dist/mpigen-*.whl \
    && rm -rf /tmp/dist
USER 10001:10001
WORKDIR /work
ENTRYPOINT ["mpigen"]
CMD ["--help"]
