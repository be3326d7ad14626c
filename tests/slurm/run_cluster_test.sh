#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine, and docs/cluster.md ("Running on a cluster") run as written
# (make test-slurm, before run_preemption_test.sh). The cluster (cluster.sh, shared with the pre-emption test)
# needs root: it installs slurm-wlm and munge with apt-get when slurmctld is missing, writes
# /etc/slurm/slurm.conf and /etc/slurm/gres.conf, and starts munged (unless running), slurmctld and slurmd. On
# exit, whatever happened, it stops the daemons it started (by pid) and removes the files it wrote: while a
# slurm.conf exists and slurmctld is down, even a local `snakemake -n` waits ~9 s on port 6817.
#
# The page's blocks marked <!-- cluster --> (seven: set up, stage, plan, submit, watch, resume, collect) run in a
# copy of the repository (its .venv a link to this one's), each after the first block (its variables: the tiny
# config, Table 1, the run directory `paper`), as a user's bash would. The submitting Snakemake is killed once a
# training job is under way, as a closed login session would kill it; the watch block runs then, and the resume
# block once SLURM has finished the jobs the killed Snakemake left. Then the rest of the tiny workflow (`all`: every
# table and figure) runs through the same profile in the same run directory.
#
# The node advertises one GPU (a GRES backed by /dev/null), so the profile's `gpu: 1` requests are scheduled on a
# machine without one; the jobs themselves run on the CPU (device: auto). The copy's profile is the real one with
# only what a small node cannot give cut: mem_mb (half the node's memory), threads (max-threads: half the node's
# CPUs), so that two jobs run side by side, jobs (the node's CPUs), and the status poll interval (2 s, not 40 s).
#
# Environment: SLURM_TEST_KEEP=1 keeps the work directory and the daemon logs.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
PAGE=docs/cluster.md
TABLES=(table1 table7 table4 outcomes first_stage table9 table10)
STEPS=(setup stage plan submit watch resume collect)
RUN_DIR=paper              # the page's RUN
SUBMIT_WAIT_S=1200         # for a training job to be under way, after the submission
DRAIN_WAIT_S=1200          # for SLURM to finish the jobs of the killed Snakemake

cluster_up
job_environment
WORK=$(mktemp -d /tmp/posbias-slurm-work.XXXXXX)
WORK_DIRS+=("$WORK")
test_start=$(date +%s)

# --- the copy of the repository, its profile cut to the node --------------------------------------------------
COPY=$WORK/posbias
mkdir -p "$COPY"
tar -C "$REPO" --exclude=./.git --exclude=./.venv --exclude=./results --exclude=./logs --exclude=./.snakemake \
    --exclude=./paper --exclude=./cache --exclude=./site --exclude=__pycache__ -cf - . | tar -C "$COPY" -xf -
ln -s "$VENV" "$COPY/.venv"
MAX_THREADS=$((CPUS > 1 ? CPUS / 2 : 1))   # two jobs side by side: most of a tiny job is starting Python
"$VENV/bin/python" - "$COPY/profiles/slurm/profile.yaml" $((MEMORY / 2)) "$CPUS" "$MAX_THREADS" <<'PY'
import sys

import yaml

path, cap, jobs, threads = sys.argv[1], *map(int, sys.argv[2:])
profile = yaml.safe_load(open(path))
for values in [profile.get("default-resources", {}), *profile.get("set-resources", {}).values()]:
    for name in ("mem_mb", "mem_mb_per_cpu"):
        if name in values:
            values[name] = min(int(values[name]), cap)
profile.update({"jobs": jobs, "max-threads": threads, "slurm-init-seconds-before-status-checks": 2,
                "slurm-keep-successful-logs": True})
yaml.safe_dump(profile, open(path, "w"), sort_keys=False)
PY
say "copy of the repository: $COPY (profile: mem_mb <= $((MEMORY / 2)), jobs $CPUS, max-threads $MAX_THREADS)"

# --- the page's blocks -----------------------------------------------------------------------------------------
BLOCKS=$WORK/blocks
mkdir -p "$BLOCKS"
"$VENV/bin/python" - "$COPY/$PAGE" "$BLOCKS" "${STEPS[@]}" <<'PY'
import re
import sys
from pathlib import Path

page, out, steps = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
blocks = re.findall(r"^<!-- cluster -->\n```bash\n(.*?)^```$", page.read_text(), flags=re.M | re.S)
if len(blocks) != len(steps):
    sys.exit(f"{page}: {len(blocks)} blocks marked <!-- cluster -->, expected {len(steps)} ({', '.join(steps)})")
for step, block in zip(steps, blocks):
    (out / f"{step}.sh").write_text(block)
PY
grep -q "snakemake --profile profiles/slurm" "$BLOCKS/submit.sh" || die "$PAGE: the submit block runs no snakemake --profile"

# page_script STEP...: the set-up block, then the steps' blocks, as one bash script (as a user's shell: -e and
# pipefail, no -u: venv's activate script reads unset variables). page_step STEP...: that script run in the copy,
# its output in $WORK/STEP.log (the first step's name).
export TORCH=cpu   # the page's `make env TORCH=${TORCH:-cu126}`: the build this .venv holds
page_script() {
    local step
    printf 'set -eo pipefail\n'
    cat "$BLOCKS/setup.sh"
    for step in "$@"; do
        printf '\n# --- %s ---\n' "$step"
        cat "$BLOCKS/$step.sh"
    done
}
page_step() {
    local log=$WORK/${1}.log started status
    started=$(date +%s)
    say "page: ${*} ($(page_script "$@" | grep -cv '^\s*\(#\|$\)') lines)"
    set +e
    bash -c 'cd "$0" && eval "$1"' "$COPY" "$(page_script "$@")" >"$log" 2>&1
    status=$?
    set -e
    [[ $status -eq 0 ]] || { tail -n 60 "$log"; die "the page's $* failed (exit $status); log: $log"; }
    say "  done in $(($(date +%s) - started)) s"
}
RUN=$COPY/$RUN_DIR

# --- 1-3: set up, stage, plan ---------------------------------------------------------------------------------
page_step stage plan
grep -q "present" "$WORK/stage.log" || die "the stage step printed no 'present' row ($WORK/stage.log)"
grep -q "GPU-hours" "$WORK/stage.log" || die "the plan step printed no GPU-hours ($WORK/stage.log)"
[[ -d $RUN ]] || die "posbias stage --directory $RUN_DIR made no run directory"

# --- 4: submit; killed once a training job runs -------------------------------------------------------------------
say "page: submit, in the background"
start=$(date +%s)
# setsid: the script leads its own process group, which the kill below ends whole (Snakemake and its children)
setsid bash -c 'cd "$0" && eval "$1"' "$COPY" "$(page_script submit)" >"$WORK/submit.log" 2>&1 &
SUBMIT_PID=$!
BACKGROUND_GROUPS+=("$SUBMIT_PID")
while :; do
    sleep 1
    kill -0 "$SUBMIT_PID" 2>/dev/null || { tail -n 40 "$WORK/submit.log";
        die "the submitting Snakemake ended before a training job ran (log: $WORK/submit.log)"; }
    (($(date +%s) - start < SUBMIT_WAIT_S)) || die "no training job ran within ${SUBMIT_WAIT_S}s (log: $WORK/submit.log)"
    # a train job RUNNING in SLURM (the plugin puts the rule's name in the job's comment) that has written its log
    squeue -h -t R -o %k | grep -q '^rule_train_' && compgen -G "$RUN/logs/train/*/seed*.log" >/dev/null && break
done
kill -KILL -- "-$SUBMIT_PID"
wait "$SUBMIT_PID" 2>/dev/null || true
BACKGROUND_GROUPS=()
mapfile -t LEFT_RUNNING < <(squeue -h -o %i)
say "killed the submitting Snakemake after $(($(date +%s) - start)) s, with a training job running; SLURM jobs" \
    "left running: ${LEFT_RUNNING[*]:-none (they ended meanwhile)}"

# --- 5: watch, while the killed run's jobs run on --------------------------------------------------------------
page_step watch
grep -q "TIME_LEFT" "$WORK/watch.log" || die "the watch step's squeue printed nothing ($WORK/watch.log)"
grep -q "^total " "$WORK/watch.log" || die "the watch step's dry run printed no job counts ($WORK/watch.log)"

waited=$(date +%s)
while [[ -n $(squeue -h -o %i) ]]; do
    (($(date +%s) - waited < DRAIN_WAIT_S)) || die "SLURM jobs still running after ${DRAIN_WAIT_S}s: $(squeue -h -o %i)"
    sleep 3
done
say "the killed run's jobs ended after $(($(date +%s) - waited)) s"

# --- 6-7: resume, collect ---------------------------------------------------------------------------------------
page_step resume
grep -q "has been submitted with SLURM jobid" "$WORK/resume.log" || die "the resumed run submitted nothing"
page_step collect
grep -q "MaxP\|FirstP\|firstp\|maxp" "$WORK/collect.log" || die "the collect step printed no table ($WORK/collect.log)"
elapsed_page=$(($(date +%s) - start))

# --- the rest of the tiny workflow, through the same profile ------------------------------------------------------
say "the rest of the tiny workflow: snakemake --profile profiles/slurm -d $RUN_DIR all"
set +e
(cd "$COPY" && POSBIAS_OFFLINE=1 "$VENV/bin/snakemake" --profile profiles/slurm -d "$RUN_DIR" all \
    --configfile config/test/tiny.yaml) >"$WORK/all.log" 2>&1
status=$?
set -e
[[ $status -eq 0 ]] || { tail -n 60 "$WORK/all.log"; die "snakemake all failed (exit $status); log: $WORK/all.log"; }
elapsed=$(($(date +%s) - start))

# --- checks ------------------------------------------------------------------------------------------------
missing=()
for table in "${TABLES[@]}"; do
    for ext in tex csv md html; do
        [[ -s $RUN/results/$table.$ext ]] || missing+=("results/$table.$ext")
    done
done
for ext in png pdf; do
    [[ -s $RUN/results/figures/farrelevant.$ext ]] || missing+=("results/figures/farrelevant.$ext")
done
[[ ${#missing[@]} -eq 0 ]] || die "missing outputs: ${missing[*]}"

LOGS=("$WORK/submit.log" "$WORK/resume.log" "$WORK/all.log")
mapfile -t SUBMITTED < <(sed -n 's/.*has been submitted with SLURM jobid \([0-9_]*\).*/\1/p' "${LOGS[@]}")
[[ ${#SUBMITTED[@]} -gt 0 ]] || die "no job was submitted to SLURM"
n_local=$(cat "${LOGS[@]}" | grep -c '^localrule ' || true)
# Every job of the run, as SLURM saw it: id, state, CPUs, memory, GRES, and the rule (the comment).
JOBS_TABLE=$WORK/slurm_jobs.txt
squeue --states=all -h -O 'JobID:|,State:|,NumCPUs:|,MinMemory:|,tres-per-job:|,Comment:' \
    | sed 's/ *|/|/g' | sort -t '|' -k1,1n >"$JOBS_TABLE"
completed=$(grep -c '|COMPLETED|' "$JOBS_TABLE" || true)
gpu_jobs=$(grep -c '|gres:gpu:1|' "$JOBS_TABLE" || true)
not_completed=$(grep -v '|COMPLETED|' "$JOBS_TABLE" || true)
[[ -z $not_completed ]] || die "SLURM jobs that did not complete: $not_completed"


say "summary"
printf '  cluster     : 1 node (localhost, %s CPUs, %s MB, GRES gpu:1), partition main, %s\n' "$CPUS" "$MEMORY" "$(sinfo -V)"
printf '  page        : %s, its %d blocks run as written (%s); Snakemake killed once a job trained, then resumed\n' \
    "$PAGE" "${#STEPS[@]}" "$(IFS=,; echo "${STEPS[*]}")"
printf '  submitted   : %d SLURM jobs (ids %s .. %s), %s of them holding a GPU; %d left running by the kill\n' \
    "${#SUBMITTED[@]}" "${SUBMITTED[0]}" "${SUBMITTED[-1]}" "$gpu_jobs" "${#LEFT_RUNNING[@]}"
printf '  completed   : %s (squeue --states=all)\n' "$completed"
printf '  local jobs  : %d (tables, figures, seed averaging, the target rule; not queued)\n' "$n_local"
printf '  outputs     : results/{%s}.{tex,csv,md,html}, results/figures/farrelevant.{png,pdf}\n' \
    "$(IFS=,; echo "${TABLES[*]}")"
printf '  time        : the page (submit to collect) %d s; with the rest of the workflow %d s; whole test %d s\n' \
    "$elapsed_page" "$elapsed" $(($(date +%s) - test_start))
printf '  SLURM job ids: %s\n' "${SUBMITTED[*]}"
say "jobs (id|state|cpus|mem|gres per job|rule and wildcards):"
sed 's/^/    /' "$JOBS_TABLE"
say "passed"
