# A real single-node SLURM cluster on this machine, for the tests of make test-slurm. Sourced, not run:
#   source tests/slurm/cluster.sh && cluster_up
# by run_cluster_test.sh (the tiny workflow through profiles/slurm) and run_preemption_test.sh (a training job
# warned before its time limit, resubmitted and resumed).
#
# cluster_up needs root: it installs slurm-wlm and munge with apt-get when slurmctld is missing, writes
# /etc/slurm/slurm.conf and /etc/slurm/gres.conf (srun inside a job reads them there), and starts munged (unless
# running), slurmctld and slurmd. On exit, whatever happened, the EXIT trap it sets stops the daemons it started
# (by pid) and removes the files it wrote: while a slurm.conf exists and slurmctld is down, even a local
# `snakemake -n` waits ~9 s on port 6817. It also removes the directories a test names in WORK_DIRS.
#
# The node advertises one GPU (a GRES backed by /dev/null), so the profile's `gpu: 1` requests are scheduled on a
# machine without one; the jobs themselves run on the CPU (device: auto).
#
# Environment: SLURM_TEST_KEEP=1 keeps the work directories and the daemon logs (kept anyway after a failure).
# SLURM_TEST_PROCTRACK=cgroup tracks a job's processes in cgroups (v1; most clusters do) instead of by parent process
# (linuxproc, the default, which works in any container): it needs a writable /sys/fs/cgroup/freezer, and writes
# /etc/slurm/cgroup.conf too.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VENV=${VENV:-$REPO/.venv}
PROFILE=$REPO/profiles/slurm
SLURM_CONF=/etc/slurm/slurm.conf
GRES_CONF=/etc/slurm/gres.conf
CGROUP_CONF=/etc/slurm/cgroup.conf
MARKER="# written by posbias tests/slurm/run_cluster_test.sh"   # (the first test; cluster.sh writes it for all)
SAY_PREFIX=${SAY_PREFIX:-test-slurm}

say() { printf '[%s] %s\n' "$SAY_PREFIX" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$SAY_PREFIX" "$*" >&2; exit 1; }

# --- state that the exit trap undoes ------------------------------------------------------------
STATE=""
WORK_DIRS=()          # work directories of the test, removed on success
BACKGROUND_GROUPS=()  # process groups the test started in the background (setsid), killed first
STARTED_PIDS=()       # daemons cluster_up started, stopped in reverse order
WROTE_FILES=()        # configuration files cluster_up wrote

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

cluster_cleanup() {
    local rc=$?
    set +e
    local i entry dir
    for entry in "${BACKGROUND_GROUPS[@]}"; do
        kill -KILL -- "-$entry" 2>/dev/null && say "killed background process group $entry"
    done
    # jobs still queued or running (a failed test) would be killed with slurmd anyway; cancel them first, so
    # that no job step outlives the daemons
    if [[ " ${STARTED_PIDS[*]} " == *" slurmctld:"* ]]; then
        scancel --quiet --partition=main 2>/dev/null
    fi
    for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
        entry=${STARTED_PIDS[$i]}
        stop_pid "${entry%%:*}" "${entry#*:}"
    done
    for entry in "${WROTE_FILES[@]}"; do
        rm -f "$entry" && say "removed $entry"
    done
    # proctrack/cgroup: the (by now empty) cgroups slurmd made for its jobs
    if [[ ${SLURM_TEST_PROCTRACK:-linuxproc} == cgroup ]]; then
        find /sys/fs/cgroup/*/slurm_localhost -depth -type d -exec rmdir {} + 2>/dev/null
    fi
    if [[ $rc -ne 0 && -n $STATE && -d $STATE ]]; then
        for log in "$STATE"/slurmctld.log "$STATE"/slurmd.log; do
            [[ -s $log ]] && { say "last lines of $log:"; tail -n 15 "$log"; }
        done
    fi
    [[ -n $STATE ]] && rmdir "$STATE" 2>/dev/null   # still empty: nothing to keep
    if [[ ${SLURM_TEST_KEEP:-0} == 1 || $rc -ne 0 ]]; then
        [[ -n $STATE && -d $STATE ]] && say "kept: daemon state and logs in $STATE"
        for dir in "${WORK_DIRS[@]}"; do [[ -d $dir ]] && say "kept: work directory $dir"; done
    else
        [[ -n $STATE ]] && rm -rf "$STATE"
        for dir in "${WORK_DIRS[@]}"; do rm -rf "$dir"; done
    fi
    exit "$rc"
}

# cluster_up: root check, packages, munge, slurm.conf and gres.conf for one node, the daemons, the node idle.
# Sets CPUS, MEMORY (MB) and STATE (daemon state and logs), and the EXIT trap that undoes it all.
cluster_up() {
    if [[ $(id -u) -ne 0 ]]; then
        printf '[%s] needs root: it installs slurm-wlm and munge, writes %s and starts slurmctld and slurmd.\n' \
            "$SAY_PREFIX" "$SLURM_CONF" >&2
        printf '[%s] run it as root (sudo make test-slurm), on a machine you may configure.\n' "$SAY_PREFIX" >&2
        exit 2
    fi
    [[ -x $VENV/bin/snakemake ]] || die "no $VENV/bin/snakemake: run make env first"

    STATE=$(mktemp -d /tmp/posbias-slurm.XXXXXX)
    trap cluster_cleanup EXIT
    trap 'exit 130' INT TERM

    # --- packages -------------------------------------------------------------------------------
    if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
        say "installing slurm-wlm and munge (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
    fi
    say "$(slurmctld -V)"

    # --- nothing of another cluster is touched ----------------------------------------------------
    local pattern pid file
    for pattern in slurmctld slurmd; do
        if pid=$(pgrep -x "$pattern"); then
            die "a $pattern is already running (pid $pid); this test starts its own cluster"
        fi
    done
    for file in "$SLURM_CONF" "$GRES_CONF" "$CGROUP_CONF"; do
        if [[ -e $file ]] && ! head -n 1 "$file" | grep -qxF "$MARKER"; then
            die "$file exists and was not written by this test: refusing to overwrite it"
        fi
    done

    # --- munge --------------------------------------------------------------------------------
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

    # --- slurm.conf and gres.conf for one node ----------------------------------------------------
    local node sockets cores threads_per_core
    node=$(slurmd -C | head -n 1)   # NodeName=<host> CPUs=2 Boards=1 ... RealMemory=24105
    field() { sed -n "s/.*[[:space:]]$1=\([0-9]*\).*/\1/p" <<<"$node"; }
    CPUS=$(field CPUs)
    sockets=$(field SocketsPerBoard)
    cores=$(field CoresPerSocket)
    threads_per_core=$(field ThreadsPerCore)
    MEMORY=$(field RealMemory)
    [[ -n $CPUS && -n $MEMORY ]] || die "could not read CPUs and RealMemory from: $node"
    say "node: $CPUS CPUs, $MEMORY MB (slurmd -C), one GRES gpu"

    local proctrack=${SLURM_TEST_PROCTRACK:-linuxproc}
    [[ $proctrack == linuxproc || $proctrack == cgroup ]] || die "SLURM_TEST_PROCTRACK=$proctrack: linuxproc or cgroup"
    mkdir -p /etc/slurm "$STATE/ctld" "$STATE/spool"
    WROTE_FILES+=("$SLURM_CONF" "$GRES_CONF")
    if [[ $proctrack == cgroup ]]; then
        WROTE_FILES+=("$CGROUP_CONF")
        cat >"$CGROUP_CONF" <<EOF
$MARKER
CgroupPlugin=cgroup/v1
CgroupAutomount=no
ConstrainCores=no
ConstrainRAMSpace=no
EOF
    fi
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
ProctrackType=proctrack/$proctrack
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
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$CPUS SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads_per_core RealMemory=$MEMORY Gres=gpu:1 State=UNKNOWN
PartitionName=main Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    cat >"$GRES_CONF" <<EOF
$MARKER
# A GPU that is not there: lets jobs that ask for one (--gpus=1) be scheduled; they run on the CPU.
NodeName=localhost Name=gpu File=/dev/null
EOF

    # --- daemons ----------------------------------------------------------------------------------
    say "starting slurmctld and slurmd"
    slurmctld -i
    for _ in $(seq 1 50); do [[ -s $STATE/slurmctld.pid ]] && break; sleep 0.2; done
    [[ -s $STATE/slurmctld.pid ]] || die "slurmctld did not start"
    STARTED_PIDS+=("slurmctld:$(cat "$STATE/slurmctld.pid")")
    slurmd -N localhost
    for _ in $(seq 1 50); do [[ -s $STATE/slurmd.pid ]] && break; sleep 0.2; done
    [[ -s $STATE/slurmd.pid ]] || die "slurmd did not start"
    STARTED_PIDS+=("slurmd:$(cat "$STATE/slurmd.pid")")

    local state=""
    for _ in $(seq 1 60); do
        state=$(sinfo -h -N -n localhost -o %t 2>/dev/null || true)
        [[ $state == idle ]] && break
        sleep 1
    done
    [[ $state == idle ]] || die "node localhost is '$state', not idle, after 60 s"
    sinfo -N -o "%N %P %t %c %m %G"
}

# job_environment: what a job submitted from here needs. Jobs run `python -m snakemake` with the submitting
# interpreter (the venv's) and inherit this environment (sbatch --export=ALL): the venv's tools first, and the
# package of this checkout.
job_environment() {
    export PATH=$VENV/bin:$PATH
    export PYTHONPATH=$REPO/src${PYTHONPATH:+:$PYTHONPATH}
    # the GRES gpu:1 above is /dev/null: jobs allotted it run on the CPU knowingly (posbias.device.pick_device)
    export POSBIAS_CPU_DESPITE_ALLOTTED_GPU=1
}

# profile_overrides CAP_MB [RULE:NAME=VALUE ...]: the profile's resources as command-line options, mem_mb clamped to
# CAP_MB, one per line (for mapfile). A --set-resources on the command line replaces the profile's list, so every
# entry is repeated (gpu, runtime, partition ...); the extra RULE:NAME=VALUE entries replace or add to them.
profile_overrides() {
    "$VENV/bin/python" - "$PROFILE/profile.yaml" "$@" <<'EOF'
import sys

import yaml

profile = yaml.safe_load(open(sys.argv[1]))
cap = int(sys.argv[2])
resources = {rule: dict(values) for rule, values in profile.get("set-resources", {}).items()}
for entry in sys.argv[3:]:
    target, value = entry.split("=", 1)
    rule, name = target.split(":", 1)
    resources.setdefault(rule, {})[name] = value

def clamp(name, value):
    return min(int(value), cap) if name in ("mem_mb", "mem_mb_per_cpu") else value

print("--default-resources")
for name, value in profile.get("default-resources", {}).items():
    print(f"{name}={clamp(name, value)}")
print("--set-resources")
for rule, values in resources.items():
    for name, value in values.items():
        print(f"{rule}:{name}={clamp(name, value)}")
EOF
}
