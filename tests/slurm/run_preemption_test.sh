#!/usr/bin/env bash
# Pre-emption on a real SLURM (make test-slurm, after run_cluster_test.sh): one training job of the tiny
# config, submitted through profiles/slurm and the executor plugin with the profile's own train resources, finds
# its time limit near (training asks squeue for the time left, posbias.training.time_limit, and stops when less
# than training.stop_before_limit_minutes, 10 by default, is left), saves its state at the end of its step and
# stops; Snakemake resubmits it (the profile's `retries`), and the second attempt resumes from the state and
# finishes. Its checkpoint must be bit-identical, tensor by tensor, to that of the same job run locally without
# interruption. make test-slurm runs it under both process trackings, linuxproc and cgroup.
#
# The time limit is what is scaled down: once the first attempt is training (its log shows a step done), its
# limit is cut (scontrol update TimeLimit, whole minutes) to leave between the margin and a minute less. Training
# reads the time left once a minute, so it stops within about a minute (and well before the limit). The training
# is made long enough for that from a calibration run (PREEMPT_TRAIN_SECONDS of training, 150 by default: the tiny
# config's 6 steps an epoch, with more epochs), which leaves room for a machine 2 times faster during the run
# than during the calibration. The uninterrupted reference runs beside the SLURM run, on the other core.
#
# Environment: SLURM_TEST_KEEP=1 keeps the work directory and the daemon logs; SLURM_TEST_PROCTRACK=cgroup
# (cluster.sh) tracks the job's processes in cgroups, as most clusters do. PREEMPT_SIGNAL=USR1 (or B:USR1, TERM
# ...) measures SLURM's warning signal instead: the train rule gets slurm_extra --signal=FORM@600, training's own
# watch is switched off (stop_before_limit_minutes: 0), the limit is cut to leave less than 630 s (slurmctld checks
# time limits every 30 s and sends the warning at the first check that finds less than 600 + 30 s left), and the
# test passes only if training stopped on that signal (docs/running.md, "Pre-emption on SLURM", has what reaches
# it under each tracking).
set -euo pipefail

SAY_PREFIX=test-slurm-preempt
source "$(dirname "${BASH_SOURCE[0]}")/cluster.sh"
HELPER=$REPO/tests/slurm/preemption.py
BASE_CONFIG=$REPO/config/test/tiny.yaml
MODEL=firstp
SEED=1
TARGET=results/models/$MODEL/seed$SEED
TRAIN_LOG=logs/train/$MODEL/seed$SEED.log
TRAIN_SECONDS=${PREEMPT_TRAIN_SECONDS:-150}
CALIBRATION_EPOCHS=15
WARN=600   # PREEMPT_SIGNAL: --signal=FORM@WARN

test_start=$(date +%s)
cluster_up
job_environment
python=$VENV/bin/python

# --- what should stop the first attempt ----------------------------------------------------------------------
read -r PROFILE_FORM PROFILE_WARN < <("$python" "$HELPER" signal "$PROFILE/profile.yaml" || true)
[[ -n ${PROFILE_FORM:-} ]] || die "could not read the train rule's resources in $PROFILE/profile.yaml"
[[ $PROFILE_FORM == none ]] || die "the profile's train rule asks SLURM for --signal=$PROFILE_FORM@$PROFILE_WARN:" \
    "under proctrack/cgroup it kills training before its own time watch saves it (docs/running.md)"
FORM=${PREEMPT_SIGNAL:-}
if [[ -n $FORM ]]; then
    STOP=SIG${FORM#*:}   # the signal the training process should see: B:USR1 -> SIGUSR1
    say "measuring --signal=$FORM@$WARN (not in the profile), expecting $STOP in the training process"
else
    STOP=time-limit
fi

# --- inputs of the training job, a calibration, the reference ------------------------------------------------
WORK=$(mktemp -d /tmp/posbias-slurm-preempt.XXXXXX)
WORK_DIRS+=("$WORK")
RUN=$WORK/run            # the SLURM run
REF=$WORK/reference      # the same job, run locally without interruption
CAL=$WORK/calibration    # a short training: steps per second on this machine
mkdir -p "$RUN"
write_config() {  # write_config DIR EPOCHS: the tiny config, saving the training state only when it stops
    cat >"$1/preempt.yaml" <<EOF
base: $BASE_CONFIG
training:
  epochs: $2
  save_every: 0
  save_minutes: 0
EOF
    [[ -z $FORM ]] || echo "  stop_before_limit_minutes: 0" >>"$1/preempt.yaml"
}
local_snakemake() {  # local_snakemake DIR LOG ARGS...: the workflow on this machine, not through SLURM
    local dir=$1 log=$2
    shift 2
    "$VENV/bin/snakemake" -s "$REPO/Snakefile" -d "$dir" "$@" --configfile "$dir/preempt.yaml" >"$log" 2>&1 \
        || { tail -n 40 "$log"; die "local snakemake in $dir failed; log: $log"; }
}

write_config "$RUN" 1
if [[ -z $FORM ]]; then
    MARGIN=$("$python" "$HELPER" margin "$RUN/preempt.yaml") || die "could not read the config $RUN/preempt.yaml"
    [[ $MARGIN -ge 120 ]] || die "training.stop_before_limit_minutes is $((MARGIN / 60)) min: the test needs 2 or more"
    say "training stops when less than $MARGIN s of its job's time is left (training.stop_before_limit_minutes)"
fi
say "inputs of $TARGET (local run: data, BM25, token store)"
local_snakemake "$RUN" "$WORK/inputs.log" -j "$CPUS" "$TARGET" --omit-from train
cp -a "$RUN" "$CAL"
cp -a "$RUN" "$REF"

write_config "$CAL" "$CALIBRATION_EPOCHS"
say "calibration: $CALIBRATION_EPOCHS epochs, one thread"
local_snakemake "$CAL" "$WORK/calibration.log" -j 1 "$TARGET"
read -r cal_steps cal_seconds < <("$python" "$HELPER" rate "$CAL/$TRAIN_LOG" || true)
[[ -n ${cal_seconds:-} ]] || die "no training rate in the calibration's log $CAL/$TRAIN_LOG"
EPOCHS=$("$python" -c "import math, sys; steps, seconds, epochs, target = map(float, sys.argv[1:]);
print(max(int(epochs), math.ceil(target * steps / seconds / (steps / epochs))))" \
    "$cal_steps" "$cal_seconds" "$CALIBRATION_EPOCHS" "$TRAIN_SECONDS")
STEPS=$((EPOCHS * cal_steps / CALIBRATION_EPOCHS))
say "calibration: $cal_steps steps in ${cal_seconds} s; $EPOCHS epochs ($STEPS steps) for about $TRAIN_SECONDS s of training"
write_config "$RUN" "$EPOCHS"
write_config "$REF" "$EPOCHS"

# The reference in the background, in its own process group (killed by the exit trap if the test fails). One
# thread, as the SLURM job gets (--max-threads 1): the same thread count, the same sums.
setsid "$VENV/bin/snakemake" -s "$REPO/Snakefile" -d "$REF" -j 1 "$TARGET" --configfile "$REF/preempt.yaml" \
    >"$WORK/reference.log" 2>&1 &
REF_PID=$!
BACKGROUND_GROUPS+=("$REF_PID")
say "reference: uninterrupted local run (pid $REF_PID) beside the SLURM run"

# --- the training job through profiles/slurm ------------------------------------------------------------------
LOG=$WORK/snakemake.log
mapfile -t OVERRIDES < <(profile_overrides $((MEMORY / 2)) ${FORM:+"train:slurm_extra='--signal=$FORM@$WARN'"})
[[ ${#OVERRIDES[@]} -gt 2 ]] || die "could not read the resources of $PROFILE/profile.yaml"
CMD=("$VENV/bin/snakemake" -s "$REPO/Snakefile" -d "$RUN" "$TARGET"
     --profile "$PROFILE"
     --jobs 1 --max-threads 1 --slurm-init-seconds-before-status-checks 2
     --slurm-keep-successful-logs --show-failed-logs
     "${OVERRIDES[@]}"
     --configfile "$RUN/preempt.yaml")   # last: --configfile takes every word that follows
say "running: ${CMD[*]}"
start=$(date +%s)
setsid "${CMD[@]}" >"$LOG" 2>&1 &
RUN_PID=$!
BACKGROUND_GROUPS+=("$RUN_PID")

# Once the first attempt has done a step (its time watch and StopSignals are in place), its time limit is cut, in
# whole minutes: to leave between MARGIN - 60 s and MARGIN - 1 s (training's next reading of the time left, within
# a minute, stops it), or, measuring a signal, less than WARN + 30 s (the next time check, within 30 s, sends it).
first_job="" cut_at="" cut_step=""
while kill -0 "$RUN_PID" 2>/dev/null && [[ -z $cut_at ]]; do
    sleep 1
    [[ -n $first_job ]] || first_job=$(sed -n 's/.*has been submitted with SLURM jobid \([0-9]*\).*/\1/p' "$LOG" | head -n 1)
    [[ -n $first_job && -s $RUN/$TRAIN_LOG ]] || continue
    # the training bar's last frame, "training firstp: ...| 12/834 [": the steps done (not another bar's, such as
    # transformers' "Loading weights: ...| 39/39 [")
    step=$(grep -ao "training $MODEL: [^|]*|[^|]*| *[0-9]*/[0-9]* \[" "$RUN/$TRAIN_LOG" | tail -n 1 \
        | sed 's/.*| *\([0-9]*\)\/.*/\1/' || true)
    [[ ${step:-0} -ge 1 ]] || continue
    job_start=$(date -d "$(squeue -h -j "$first_job" -o %S)" +%s)
    now=$(date +%s)
    if [[ -n $FORM ]]; then
        limit=$(((now - job_start + WARN + 29) / 60)) expect="warning at <$((WARN + 30)) s left"
    else
        limit=$(((now - job_start + MARGIN - 1) / 60)) expect="training stops at <$MARGIN s left"
    fi
    scontrol update JobId="$first_job" TimeLimit="$limit"
    cut_at=$((now - job_start)) cut_step=$step
    say "job $first_job at step $step, $cut_at s in: time limit cut to $limit min" \
        "($((limit * 60 - cut_at)) s left, $expect)"
done
set +e
wait "$RUN_PID"
status=$?
set -e
BACKGROUND_GROUPS=("$REF_PID")
elapsed=$(($(date +%s) - start))
if [[ $status -ne 0 ]]; then
    tail -n 80 "$LOG"
    die "snakemake failed (exit $status) after ${elapsed}s; log: $LOG"
fi
[[ -n $cut_at ]] || die "the first attempt ended before its time limit could be cut (no training step in its log?)"
say "SLURM run done in ${elapsed}s; waiting for the reference"
wait "$REF_PID" || { tail -n 40 "$WORK/reference.log"; die "the reference run failed; log: $WORK/reference.log"; }
BACKGROUND_GROUPS=()

# --- checks ------------------------------------------------------------------------------------------------
mapfile -t SUBMITTED < <(sed -n 's/.*has been submitted with SLURM jobid \([0-9_]*\).*/\1/p' "$LOG")
[[ ${#SUBMITTED[@]} -eq 2 ]] || die "expected 2 SLURM jobs (the warned one and its retry), got ${#SUBMITTED[@]}: ${SUBMITTED[*]:-none} (log: $LOG)"
states=()
for id in "${SUBMITTED[@]}"; do
    states+=("$(squeue --states=all -h -j "$id" -o %T)")
done
[[ ${states[0]} == FAILED && ${states[1]} == COMPLETED ]] \
    || die "SLURM states ${states[*]} of jobs ${SUBMITTED[*]}: expected FAILED (stopped and saved) then COMPLETED"
grep -q "Trying to restart job" "$LOG" || die "Snakemake did not restart the job (log: $LOG)"
{ read -r attempts; read -r saved_at; } < <("$python" "$HELPER" attempts "$LOG" "$RUN/$TRAIN_LOG" "$STOP" \
    || echo FAILED)
[[ $attempts != FAILED ]] || die "the attempts' logs do not show the pre-emption (see above; log: $LOG)"
[[ ! -e $RUN/$TARGET.resume ]] || die "the training state $RUN/$TARGET.resume is still there after the checkpoint"
comparison=$("$python" "$HELPER" compare "$REF/$TARGET" "$RUN/$TARGET") \
    || die "the resumed checkpoint is not the uninterrupted run's (above)"

job_times() {  # job_times ID: start and end (from squeue), seconds run
    local start_end
    start_end=$(squeue --states=all -h -j "$1" -o '%S %e')
    printf '%s .. %s (%s s)' "${start_end% *}" "${start_end#* }" \
        $(($(date -d "${start_end#* }" +%s) - $(date -d "${start_end% *}" +%s)))
}
say "summary"
printf '  cluster    : %s, ProctrackType proctrack/%s; %s, %s\n' "$(sinfo -V)" "${SLURM_TEST_PROCTRACK:-linuxproc}" \
    "$("$VENV/bin/pip" show snakemake-executor-plugin-slurm 2>/dev/null | sed -n 's/^Version: /snakemake-executor-plugin-slurm /p')" \
    "$("$VENV/bin/pip" show snakemake-executor-plugin-slurm-jobstep 2>/dev/null | sed -n 's/^Version: /jobstep /p')"
if [[ -n $FORM ]]; then
    printf '  stop       : --signal=%s@%s (not in the profile; training.stop_before_limit_minutes: 0)\n' "$FORM" "$WARN"
else
    printf '  stop       : training.stop_before_limit_minutes: %s min (the profile asks for no signal)\n' \
        "$((MARGIN / 60))"
fi
printf '  job %-6s : %s, %s\n' "${SUBMITTED[0]}" "${states[0]}" "$(job_times "${SUBMITTED[0]}")"
printf '  job %-6s : %s, %s\n' "${SUBMITTED[1]}" "${states[1]}" "$(job_times "${SUBMITTED[1]}")"
first_start=$(squeue --states=all -h -j "${SUBMITTED[0]}" -o %S)
printf '  attempts   : %s\n' "$attempts"
printf '  stopped    : job %s: limit cut %s s in (step %s), state saved %s s in\n' "${SUBMITTED[0]}" "$cut_at" \
    "$cut_step" $(($(date -d "$saved_at" +%s) - $(date -d "$first_start" +%s)))
printf '  checkpoint : %s\n' "$comparison"
printf '  time       : SLURM run %d s; whole test %d s\n' "$elapsed" $(($(date +%s) - test_start))
say "passed"
