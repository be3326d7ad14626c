#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine, and the tiny workflow submitted to it through
# profiles/slurm (make test-slurm, before run_preemption_test.sh). The cluster (cluster.sh, shared with
# the pre-emption test) needs root: it installs slurm-wlm and munge with apt-get when slurmctld is
# missing, writes /etc/slurm/slurm.conf and /etc/slurm/gres.conf, and starts munged (unless running),
# slurmctld and slurmd. On exit, whatever happened, it stops the daemons it started (by pid) and
# removes the files it wrote: while a slurm.conf exists and slurmctld is down, even a local
# `snakemake -n` waits ~9 s on port 6817.
#
# The node advertises one GPU (a GRES backed by /dev/null), so the profile's `gpu: 1` requests are
# scheduled on a machine without one; the jobs themselves run on the CPU (device: auto).
# The run uses the real profile; only what a small node cannot give is clamped on the command
# line: threads (--max-threads: half the node's CPUs), mem_mb (half the node's memory), so that two
# jobs run side by side, --jobs (the node's CPUs) and the status poll interval (2 s, not 40 s).
#
# Environment: SLURM_TEST_KEEP=1 keeps the work directory and the daemon logs.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
CONFIG=$REPO/config/test/tiny.yaml
TABLES=(table1 table7 table4 outcomes first_stage table9 table10)

cluster_up

# --- the workflow, submitted through profiles/slurm ---------------------------------------------------
WORK=$(mktemp -d /tmp/posbias-slurm-work.XXXXXX)
WORK_DIRS+=("$WORK")
LOG=$WORK/snakemake.log
job_environment

# The profile's memory requests, clamped to half the node (cluster.sh).
mapfile -t OVERRIDES < <(profile_overrides $((MEMORY / 2)))
# Two jobs side by side: most of a tiny job is starting Python, which one core does as well as two.
MAX_THREADS=$((CPUS > 1 ? CPUS / 2 : 1))
say "overrides: --jobs $CPUS --max-threads $MAX_THREADS ${OVERRIDES[*]}"

CMD=("$VENV/bin/snakemake" -s "$REPO/Snakefile" -d "$WORK" all
     --profile "$PROFILE"
     --jobs "$CPUS" --max-threads "$MAX_THREADS" --slurm-init-seconds-before-status-checks 2
     --slurm-keep-successful-logs
     "${OVERRIDES[@]}"
     --configfile "$CONFIG")   # last: --configfile takes every word that follows
say "running: ${CMD[*]}"
start=$(date +%s)
set +e
"${CMD[@]}" >"$LOG" 2>&1
status=$?
set -e
elapsed=$(($(date +%s) - start))
if [[ $status -ne 0 ]]; then
    tail -n 60 "$LOG"
    die "snakemake failed (exit $status) after ${elapsed}s; log: $LOG"
fi

# --- checks ------------------------------------------------------------------------------------------
missing=()
for table in "${TABLES[@]}"; do
    for ext in tex csv md html; do
        [[ -s $WORK/results/$table.$ext ]] || missing+=("results/$table.$ext")
    done
done
for ext in png pdf; do
    [[ -s $WORK/results/figures/farrelevant.$ext ]] || missing+=("results/figures/farrelevant.$ext")
done
[[ ${#missing[@]} -eq 0 ]] || die "missing outputs: ${missing[*]}"

mapfile -t SUBMITTED < <(sed -n 's/.*has been submitted with SLURM jobid \([0-9_]*\).*/\1/p' "$LOG")
[[ ${#SUBMITTED[@]} -gt 0 ]] || die "no job was submitted to SLURM (see $LOG)"
n_local=$(grep -c '^localrule ' "$LOG" || true)
# Every job of the run, as SLURM saw it: id, state, CPUs, memory, GRES, and the rule (the comment).
JOBS_TABLE=$WORK/slurm_jobs.txt
squeue --states=all -h -O 'JobID:|,State:|,NumCPUs:|,MinMemory:|,tres-per-job:|,Comment:' \
    | sed 's/ *|/|/g' | sort -t '|' -k1,1n >"$JOBS_TABLE"
completed=$(grep -c '|COMPLETED|' "$JOBS_TABLE" || true)
gpu_jobs=$(grep -c '|gres:gpu:1|' "$JOBS_TABLE" || true)

say "summary"
printf '  cluster     : 1 node (localhost, %s CPUs, %s MB, GRES gpu:1), partition main, %s\n' "$CPUS" "$MEMORY" "$(sinfo -V)"
printf '  workflow    : %s --configfile %s\n' "$REPO/Snakefile" "$CONFIG"
printf '  submitted   : %d SLURM jobs (ids %s .. %s), %s of them holding a GPU\n' \
    "${#SUBMITTED[@]}" "${SUBMITTED[0]}" "${SUBMITTED[-1]}" "$gpu_jobs"
printf '  completed   : %s (squeue --states=all)\n' "$completed"
printf '  local jobs  : %d (tables, figures, seed averaging, the target rule; not queued)\n' "$n_local"
printf '  outputs     : results/{%s}.{tex,csv,md,html}, results/figures/farrelevant.{png,pdf}\n' \
    "$(IFS=,; echo "${TABLES[*]}")"
printf '  time        : %d s\n' "$elapsed"
printf '  SLURM job ids: %s\n' "${SUBMITTED[*]}"
say "jobs (id|state|cpus|mem|gres per job|rule and wildcards):"
sed 's/^/    /' "$JOBS_TABLE"
say "passed"
