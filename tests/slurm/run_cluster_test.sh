#!/usr/bin/env bash
# A real single-node SLURM cluster on this machine, and the tiny workflow submitted to it through
# profiles/slurm (make test-slurm). Needs root: it installs slurm-wlm and munge with apt-get when
# slurmctld is missing, writes /etc/slurm/slurm.conf and /etc/slurm/gres.conf (srun inside a job
# reads them there), and starts munged (unless running), slurmctld and slurmd. On exit, whatever
# happened, it stops the daemons it started (by pid) and removes the files it wrote: while a
# slurm.conf exists and slurmctld is down, even a local `snakemake -n` waits ~9 s on port 6817.
#
# The node advertises one GPU (a GRES backed by /dev/null), so the profile's `gpu: 1` requests are
# scheduled on a machine without one; the jobs themselves run on the CPU (device: auto).
# The run uses the real profile; only what a small node cannot give is clamped on the command
# line: threads (--max-threads: half the node's CPUs), mem_mb (half the node's memory), so that two
# jobs run side by side, --jobs (the node's CPUs) and the status poll interval (2 s, not 40 s).
#
# Environment: SLURM_TEST_KEEP=1 keeps the work directory and the daemon logs.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VENV=${VENV:-$REPO/.venv}
PROFILE=$REPO/profiles/slurm
CONFIG=$REPO/config/test/tiny.yaml
SLURM_CONF=/etc/slurm/slurm.conf
GRES_CONF=/etc/slurm/gres.conf
MARKER="# written by posbias tests/slurm/run_cluster_test.sh"
TABLES=(table1 table7 table4 outcomes first_stage table9 table10)

say() { printf '[test-slurm] %s\n' "$*"; }
die() { printf '[test-slurm] ERROR: %s\n' "$*" >&2; exit 1; }

if [[ $(id -u) -ne 0 ]]; then
    printf '[test-slurm] needs root: it installs slurm-wlm and munge, writes %s and starts slurmctld and slurmd.\n' \
        "$SLURM_CONF" >&2
    printf '[test-slurm] run it as root (sudo make test-slurm), on a machine you may configure.\n' >&2
    exit 2
fi
[[ -x $VENV/bin/snakemake ]] || die "no $VENV/bin/snakemake: run make env first"

# --- state that the exit trap undoes ------------------------------------------------------------
STATE=$(mktemp -d /tmp/posbias-slurm.XXXXXX)
WORK=""
STARTED_PIDS=()       # daemons this script started, stopped in reverse order
WROTE_FILES=()        # configuration files this script wrote

stop_pid() {  # stop_pid NAME PID: TERM, wait up to 10 s, then KILL
    local name=$1 pid=$2
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || { say "stopped $name (pid $pid)"; return 0; }
        sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null || true
    say "killed $name (pid $pid)"
}

cleanup() {
    local rc=$?
    set +e
    local i entry
    for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
        entry=${STARTED_PIDS[$i]}
        stop_pid "${entry%%:*}" "${entry#*:}"
    done
    for entry in "${WROTE_FILES[@]}"; do
        rm -f "$entry" && say "removed $entry"
    done
    if [[ $rc -ne 0 && -d $STATE ]]; then
        for log in "$STATE"/slurmctld.log "$STATE"/slurmd.log; do
            [[ -s $log ]] && { say "last lines of $log:"; tail -n 15 "$log"; }
        done
    fi
    rmdir "$STATE" 2>/dev/null   # still empty: nothing to keep
    if [[ ${SLURM_TEST_KEEP:-0} == 1 || $rc -ne 0 ]]; then
        [[ -d $STATE ]] && say "kept: daemon state and logs in $STATE"
        [[ -n $WORK ]] && say "kept: work directory $WORK"
    else
        rm -rf "$STATE" ${WORK:+"$WORK"}
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- packages ---------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
say "$(slurmctld -V)"

# --- nothing of another cluster is touched -------------------------------------------------------
for pattern in slurmctld slurmd; do
    if pid=$(pgrep -x "$pattern"); then
        die "a $pattern is already running (pid $pid); this test starts its own cluster"
    fi
done
for file in "$SLURM_CONF" "$GRES_CONF"; do
    if [[ -e $file ]] && ! head -n 1 "$file" | grep -qxF "$MARKER"; then
        die "$file exists and was not written by this test: refusing to overwrite it"
    fi
done

# --- munge -----------------------------------------------------------------------------------
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [[ ! -s /etc/munge/munge.key ]]; then
    say "creating /etc/munge/munge.key"
    if command -v mungekey >/dev/null; then
        mungekey --create --keyfile=/etc/munge/munge.key
    else
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
fi
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "munged is already running"
else
    say "starting munged"
    # as root (--force), so that its pid and log files can live in this run's private state dir
    munged --force --pid-file="$STATE/munged.pid" --log-file="$STATE/munged.log"
    for _ in $(seq 1 50); do [[ -s $STATE/munged.pid ]] && break; sleep 0.1; done
    [[ -s $STATE/munged.pid ]] || die "munged did not start (see $STATE/munged.log)"
    STARTED_PIDS+=("munged:$(cat "$STATE/munged.pid")")
    munge -n | unmunge >/dev/null || die "munge does not work"
fi

# --- slurm.conf and gres.conf for one node ---------------------------------------------------------

NODE=$(slurmd -C | head -n 1)   # NodeName=<host> CPUs=2 Boards=1 ... RealMemory=24105
field() { sed -n "s/.*[[:space:]]$1=\([0-9]*\).*/\1/p" <<<"$NODE"; }
CPUS=$(field CPUs)
SOCKETS=$(field SocketsPerBoard)
CORES=$(field CoresPerSocket)
THREADS_PER_CORE=$(field ThreadsPerCore)
MEMORY=$(field RealMemory)
[[ -n $CPUS && -n $MEMORY ]] || die "could not read CPUs and RealMemory from: $NODE"
say "node: $CPUS CPUs, $MEMORY MB (slurmd -C), one GRES gpu"

mkdir -p /etc/slurm "$STATE/ctld" "$STATE/spool"
WROTE_FILES+=("$SLURM_CONF" "$GRES_CONF")
cat >"$SLURM_CONF" <<EOF
$MARKER
# One node, one partition; daemons run as root; no accounting database.
ClusterName=posbias-test
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$STATE/jobcomp.log
# Finished jobs stay visible to squeue for an hour: Snakemake polls job states with squeue (the
# plugin wants MinJobAge >= 3 x its poll interval) and the summary lists every job of the run.
MinJobAge=3600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS SocketsPerBoard=$SOCKETS CoresPerSocket=$CORES ThreadsPerCore=$THREADS_PER_CORE RealMemory=$MEMORY Gres=gpu:1 State=UNKNOWN
PartitionName=main Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$GRES_CONF" <<EOF
$MARKER
# A GPU that is not there: lets jobs that ask for one (--gpus=1) be scheduled; they run on the CPU.
NodeName=localhost Name=gpu File=/dev/null
EOF

# --- daemons -------------------------------------------------------------------------------------
say "starting slurmctld and slurmd"
slurmctld -i
for _ in $(seq 1 50); do [[ -s $STATE/slurmctld.pid ]] && break; sleep 0.2; done
[[ -s $STATE/slurmctld.pid ]] || die "slurmctld did not start"
STARTED_PIDS+=("slurmctld:$(cat "$STATE/slurmctld.pid")")
slurmd -N localhost
for _ in $(seq 1 50); do [[ -s $STATE/slurmd.pid ]] && break; sleep 0.2; done
[[ -s $STATE/slurmd.pid ]] || die "slurmd did not start"
STARTED_PIDS+=("slurmd:$(cat "$STATE/slurmd.pid")")

state=""
for _ in $(seq 1 60); do
    state=$(sinfo -h -N -n localhost -o %t 2>/dev/null || true)
    [[ $state == idle ]] && break
    sleep 1
done
[[ $state == idle ]] || die "node localhost is '$state', not idle, after 60 s"
sinfo -N -o "%N %P %t %c %m %G"

# --- the workflow, submitted through profiles/slurm ---------------------------------------------------
WORK=$(mktemp -d /tmp/posbias-slurm-work.XXXXXX)
LOG=$WORK/snakemake.log
# Jobs run `python -m snakemake` with the submitting interpreter (the venv's) and inherit this
# environment (sbatch --export=ALL): the venv's tools first, and the package of this checkout.
export PATH=$VENV/bin:$PATH
export PYTHONPATH=$REPO/src${PYTHONPATH:+:$PYTHONPATH}
# the GRES gpu:1 above is /dev/null: jobs allotted it run on the CPU knowingly (posbias.device.pick_device)
export POSBIAS_CPU_DESPITE_ALLOTTED_GPU=1

# The profile's memory requests, clamped to half the node. A --set-resources on the command line
# replaces the profile's list, so every entry is repeated (gpu, runtime, partition ...).
mapfile -t OVERRIDES < <("$VENV/bin/python" - "$PROFILE/profile.yaml" $((MEMORY / 2)) <<'EOF'
import sys
import yaml

profile = yaml.safe_load(open(sys.argv[1]))
cap = int(sys.argv[2])

def clamp(name, value):
    return min(int(value), cap) if name in ("mem_mb", "mem_mb_per_cpu") else value

print("--default-resources")
for name, value in profile.get("default-resources", {}).items():
    print(f"{name}={clamp(name, value)}")
print("--set-resources")
for rule, resources in profile.get("set-resources", {}).items():
    for name, value in resources.items():
        print(f"{rule}:{name}={clamp(name, value)}")
EOF
)
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
