# mpigen: `make render` compiles profiles/ into charts/; `make test` runs the whole suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HELM3  := .tools/helm3/helm
HELM4  := .tools/helm4/helm

.PHONY: render validate check test lint typecheck helm chromium screenshot bench fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

render: $(STAMP)
	$(BIN)/mpigen render profiles -o charts

validate: $(STAMP)
	$(BIN)/mpigen validate profiles

$(HELM3): scripts/install_helm.py
	$(PYTHON) scripts/install_helm.py 3 $(dir $@)

$(HELM4): scripts/install_helm.py
	$(PYTHON) scripts/install_helm.py 4 $(dir $@)

helm: $(HELM3) $(HELM4)

# tests/acceptance/test_plan_picture.py renders `mpigen plan --html` in a real headless Chromium: Debian's package,
# installed here where apt-get works as root. Elsewhere install Chromium yourself (or point MPIGEN_CHROMIUM at it);
# without it that test skips on your machine, and fails where the CI variable is set (.ci/run sets it).
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || [ -n "$(MPIGEN_CHROMIUM)" ] || \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the picture test"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
	      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; \
	  else echo "no chromium, and apt-get cannot install it here: the picture test will skip"; fi

lint: $(STAMP)
	$(BIN)/ruff check .

# mypy over the package as it imports, `mpigen` (scripts/typecheck.py; settings: pyproject.toml's [tool.mypy]).
typecheck: $(STAMP)
	$(BIN)/python scripts/typecheck.py

# charts/ must be what profiles/ compiles to, and must pass `mpigen check` with real Helm 4 (no --crds: the schemas
# of every kind mpigen emits ship with it).
check: $(STAMP) $(HELM4)
	$(BIN)/mpigen render --check profiles -o charts
	$(BIN)/mpigen check --helm $(HELM4) charts

# Tests run in parallel, one worker per core (pytest-xdist): most of the suite waits on Helm and mpigen
# processes; with two workers the suite takes about 560 s on a 2-core machine. PYTEST_WORKERS=0 runs it serially.
PYTEST_WORKERS ?= auto
test: $(STAMP) helm chromium lint typecheck check
	MPIGEN_HELM3=$(abspath $(HELM3)) MPIGEN_HELM4=$(abspath $(HELM4)) $(BIN)/pytest -q -n $(PYTEST_WORKERS)

# A long fuzz (`make test` runs a short one from a fixed seed): FUZZ_EXAMPLES mutations of the example profiles
# (tests/acceptance/test_fuzz.py), every new chart rendered by Helm 3 and Helm 4, which must agree; and FUZZ_EXAMPLES/4
# hostile charts and manifests for `mpigen check` (tests/acceptance/test_fuzz_check.py), each checked with both Helms;
# FUZZ_EXAMPLES targets of a written file (FIFOs, devices, links on the way, paths into the profiles, odd names),
# FUZZ_EXAMPLES/50 of them through `mpigen plan --svg` and FUZZ_EXAMPLES/2 as the folder of `mpigen schema --write`
# (tests/acceptance/test_fuzz_paths.py); and FUZZ_EXAMPLES/4 fleets
# of every size for `plan`, `explain` and the picture (tests/acceptance/test_fuzz_insight.py: placement equal to the
# straightforward first fit's, output within its bounds); and FUZZ_EXAMPLES repository configs and profile files for
# .mpigen.yaml and the glance completion reads (tests/acceptance/test_fuzz_config.py); and FUZZ_EXAMPLES/8 fleets
# drawn from the example one, each checked whole and by one job or cluster, which must agree on the chosen charts
# (tests/unit/check/test_check_selection.py); and FUZZ_EXAMPLES texts, random or edited real outputs, for the
# parsers of `nvidia-smi topo -m`, `ibdev2netdev` and `lspci -nn` (tests/unit/inventory/test_tools_fuzz.py); and
# FUZZ_EXAMPLES edited upstream MPIJobs for adoption, FUZZ_EXAMPLES/4 of them compared on the example fleet
# (tests/unit/adopt/test_jobs_fuzz.py); and FUZZ_EXAMPLES/20 generated Kueue and Volcano fleets whose charts'
# `workers` maximum validate must admit, and refuse one worker more (tests/unit/resolve/test_resolve_scheduling.py);
# and FUZZ_EXAMPLES edited nccl-tests and perftest logs for `mpigen verify` (tests/unit/verify/test_verify_fuzz.py).
# The seed is printed first: `make fuzz FUZZ_SEED=<seed>` replays the run.
FUZZ_EXAMPLES ?= 2000
fuzz: $(STAMP) helm
	@seed="$(FUZZ_SEED)"; [ -n "$$seed" ] || seed=$$($(BIN)/python -c 'import random; print(random.randrange(2**32))'); \
	  echo "fuzz: $(FUZZ_EXAMPLES) examples from seed $$seed (replay: make fuzz FUZZ_SEED=$$seed)"; \
	  MPIGEN_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) MPIGEN_FUZZ_SEED=$$seed MPIGEN_HELM3=$(abspath $(HELM3)) \
	  MPIGEN_HELM4=$(abspath $(HELM4)) $(BIN)/pytest -q tests/acceptance/test_fuzz.py tests/acceptance/test_fuzz_check.py \
	    tests/acceptance/test_fuzz_paths.py tests/acceptance/test_fuzz_insight.py tests/acceptance/test_fuzz_config.py \
	    tests/unit/check/test_check_selection.py tests/unit/inventory/test_tools_fuzz.py \
	    tests/unit/adopt/test_jobs_fuzz.py tests/unit/resolve/test_resolve_scheduling.py \
	    tests/unit/verify/test_verify_fuzz.py --hypothesis-show-statistics

# The README's picture of the example fleet: `mpigen plan --html` in headless Chromium. Run it after a change to
# profiles/ or to the drawing, and commit docs/plan-example-fleet.png. The temporary folder by its real path: plan
# writes through no link, and macOS's TMPDIR lies behind one (/var -> /private/var).
screenshot: $(STAMP) chromium
	@tmp=$$(cd "$$(mktemp -d)" && pwd -P) && trap 'rm -rf "$$tmp"' EXIT && \
	  $(BIN)/mpigen plan profiles --html "$$tmp/plan.html" >/dev/null && \
	  $${MPIGEN_CHROMIUM:-chromium} --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
	    --user-data-dir="$$tmp/browser" --window-size=1560,4000 --screenshot=docs/plan-example-fleet.png \
	    "file://$$tmp/plan.html" >/dev/null 2>&1 && echo "docs/plan-example-fleet.png"

bench: $(STAMP) helm
	MPIGEN_HELM3=$(abspath $(HELM3)) $(BIN)/python scripts/bench.py

clean:
	rm -rf $(VENV) .tools .pytest_cache .ruff_cache
