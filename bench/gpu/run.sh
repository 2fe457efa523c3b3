#!/usr/bin/env bash
# On a machine with a real GPU (the device tool), over the .gpu/ that bench/gpu/pack.sh made:
# the lab's kernels and tfjs-webgpu on every preset, Dawn in Node on the GPU's Vulkan driver.
# Writes $OUT/rows.txt (WEBGPU_BENCH lines) and $OUT/log.txt. wasm is the CPU's and is not
# measured here (the CPU drivers' tables have it).
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT" /tmp/gpu
for f in .gpu/debs/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('.gpu/node.xz'), open('/tmp/gpu/node', 'wb'))"
chmod +x /tmp/gpu/node
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/log.txt"
cd .gpu/bundle
XDG_RUNTIME_DIR=/tmp BENCH_PRESETS=${BENCH_PRESETS:-tiny,small,base} \
  BENCH_VARIANTS=${BENCH_VARIANTS:-kernels,tfjs-webgpu} BENCH_REPEAT_TFJS_WEBGPU=3 \
  timeout 540 /tmp/gpu/node launch.mjs 2>&1 | tee -a "$OUT/log.txt" | grep '^WEBGPU_' > "$OUT/rows.txt"
echo "rows: $(wc -l < "$OUT/rows.txt")"
